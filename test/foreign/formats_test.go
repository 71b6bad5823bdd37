//go:build linux

package foreign

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cmd is one command that makes a format. In argv, {dev} is the loop device, {src} a
// directory holding the known file, {key} a LUKS key file, {vg} a volume group name and {md}
// an md array name unique to this run, and {lvmconfig} an LVM configuration that restricts
// LVM to the case's loop device (it would otherwise scan every disk of the machine).
type cmd struct {
	argv  []string
	stdin string
}

func mk(argv ...string) cmd { return cmd{argv: argv} }

// format is one row of the table: something a device can carry that Prism did not write.
type format struct {
	name string
	// pkg is the Debian package that provides the tools of make (hack/packages.txt).
	pkg  string
	make []cmd
	// fill writes the content itself, for content no tool makes (leftovers, noise).
	fill func(t *testing.T, l *loop)
	// undo runs in t.Cleanup before the loop device is detached (stop an array, deactivate a VG).
	undo []cmd
	// needs is a kernel facility the case cannot do without: "md" or "dm".
	needs string
	// unavailable, when set, says why this format cannot be made here at all.
	unavailable string
	// mount is how Linux mounts the format; nil when it is no mountable file system.
	mount *mountSpec
}

// mountSpec mounts a format with the kernel's driver, or with FUSE where this kernel has none.
type mountSpec struct {
	fstype string // mount -t, as /proc/filesystems names the driver
	rw     bool   // the format is writable (a read-write variant runs)
	// fuseRO and fuseRW mount the device ({dev}) on {dir} with FUSE (package fusePkg) when the
	// kernel has no driver; fuseRW is nil when the FUSE tool only reads.
	fuseRO, fuseRW []string
	fusePkg        string
}

func kernelFS(fstype string, rw bool) *mountSpec { return &mountSpec{fstype: fstype, rw: rw} }

// lvm runs an LVM command restricted to the case's device.
func lvm(tool string, args ...string) cmd {
	return mk(append([]string{tool, "--config", "{lvmconfig}"}, args...)...)
}

// mdCreate makes a degraded RAID1 (one real member, one missing) with the given metadata
// version: 0.90 and 1.0 put the superblock at the end of the device, 1.2 4 KiB from the start.
func mdCreate(metadata string) cmd {
	return mk("mdadm", "--create", "{md}", "--run", "--assume-clean", "--level=1", "--raid-devices=2",
		"--metadata="+metadata, "{dev}", "missing")
}

var fatMount = &mountSpec{fstype: "vfat", rw: true,
	fuseRO: []string{"fusefat", "-o", "ro", "{dev}", "{dir}"}, fuseRW: []string{"fusefat", "-o", "rw+", "{dev}", "{dir}"}, fusePkg: "fusefat"}

var isoMount = &mountSpec{fstype: "iso9660", fuseRO: []string{"fuseiso", "{dev}", "{dir}"}, fusePkg: "fuseiso"}

// formats is every format the Debian 12 tools here can make, each on the whole device.
var formats = []format{
	// File systems.
	{name: "ext2", pkg: "e2fsprogs", make: []cmd{mk("mkfs.ext2", "-F", "-q", "{dev}")}, mount: kernelFS("ext2", true)},
	{name: "ext3", pkg: "e2fsprogs", make: []cmd{mk("mkfs.ext3", "-F", "-q", "{dev}")}, mount: kernelFS("ext3", true)},
	// Inode tables and journal initialised now: no background writer once mounted.
	{name: "ext4", pkg: "e2fsprogs", make: []cmd{mk("mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", "{dev}")}, mount: kernelFS("ext4", true)},
	{name: "xfs", pkg: "xfsprogs", make: []cmd{mk("mkfs.xfs", "-f", "-q", "{dev}")}, mount: kernelFS("xfs", true)},
	{name: "btrfs", pkg: "btrfs-progs", make: []cmd{mk("mkfs.btrfs", "-f", "-q", "{dev}")}, mount: kernelFS("btrfs", true)},
	{name: "f2fs", pkg: "f2fs-tools", make: []cmd{mk("mkfs.f2fs", "-f", "-q", "{dev}")}, mount: kernelFS("f2fs", true)},
	// FAT12 and FAT16 cannot span 5 GiB: 8 MiB and 512 MiB (block counts in KiB) at the start.
	{name: "vfat-fat12", pkg: "dosfstools", make: []cmd{mk("mkfs.fat", "-F", "12", "{dev}", "8192")}, mount: fatMount},
	{name: "vfat-fat16", pkg: "dosfstools", make: []cmd{mk("mkfs.fat", "-F", "16", "{dev}", "524288")}, mount: fatMount},
	{name: "vfat-fat32", pkg: "dosfstools", make: []cmd{mk("mkfs.fat", "-F", "32", "{dev}")}, mount: fatMount},
	{name: "exfat", pkg: "exfatprogs", make: []cmd{mk("mkfs.exfat", "{dev}")}, mount: &mountSpec{fstype: "exfat", rw: true,
		fuseRO: []string{"mount.exfat-fuse", "-o", "ro", "{dev}", "{dir}"}, fuseRW: []string{"mount.exfat-fuse", "-o", "rw,noatime", "{dev}", "{dir}"}, fusePkg: "exfat-fuse"}},
	{name: "ntfs", pkg: "ntfs-3g", make: []cmd{mk("mkntfs", "--quick", "--force", "--quiet", "{dev}")}, mount: &mountSpec{fstype: "ntfs3", rw: true,
		fuseRO: []string{"ntfs-3g", "-o", "ro", "{dev}", "{dir}"}, fuseRW: []string{"ntfs-3g", "-o", "rw,noatime", "{dev}", "{dir}"}, fusePkg: "ntfs-3g"}},
	{name: "nilfs2", pkg: "nilfs-tools", make: []cmd{mk("mkfs.nilfs2", "-f", "-q", "{dev}")}, mount: kernelFS("nilfs2", true)},
	{name: "jfs", pkg: "jfsutils", make: []cmd{mk("mkfs.jfs", "-q", "{dev}")}, mount: kernelFS("jfs", true)},
	{name: "reiserfs", pkg: "reiserfsprogs", make: []cmd{mk("mkfs.reiserfs", "-q", "-f", "{dev}")}, mount: kernelFS("reiserfs", true)},
	{name: "udf", pkg: "udftools", make: []cmd{mk("mkudffs", "{dev}")}, mount: kernelFS("udf", true)},
	{name: "minix", pkg: "util-linux", make: []cmd{mk("mkfs.minix", "-3", "{dev}")}, mount: kernelFS("minix", true)},
	{name: "bfs", pkg: "util-linux", make: []cmd{mk("mkfs.bfs", "{dev}")}, mount: kernelFS("bfs", true)},
	{name: "hfsplus", pkg: "hfsprogs", unavailable: "mkfs.hfsplus comes with hfsprogs, which Debian 12 does not package"},
	// Cluster file systems, made for local use: no cluster stack needed.
	{name: "ocfs2", pkg: "ocfs2-tools", make: []cmd{mk("mkfs.ocfs2", "-q", "-F", "-M", "local", "{dev}")}, mount: kernelFS("ocfs2", true)},
	{name: "gfs2", pkg: "gfs2-utils", make: []cmd{mk("mkfs.gfs2", "-O", "-p", "lock_nolock", "-j", "1", "{dev}")}, mount: kernelFS("gfs2", true)},
	// Read-only images written onto the device.
	{name: "cramfs", pkg: "util-linux", make: []cmd{mk("mkfs.cramfs", "{src}", "{dev}")}, mount: kernelFS("cramfs", false)},
	{name: "squashfs", pkg: "squashfs-tools", make: []cmd{mk("mksquashfs", "{src}", "{dev}", "-noappend", "-quiet")}, mount: kernelFS("squashfs", false)},
	{name: "erofs", pkg: "erofs-utils", make: []cmd{mk("mkfs.erofs", "{dev}", "{src}")}, mount: kernelFS("erofs", false)},
	{name: "iso9660-xorriso", pkg: "xorriso", make: []cmd{mk("xorriso", "-outdev", "stdio:{dev}", "-map", "{src}", "/", "-commit")}, mount: isoMount},
	{name: "iso9660-genisoimage", pkg: "genisoimage", make: []cmd{mk("genisoimage", "-quiet", "-R", "-J", "-o", "{dev}", "{src}")}, mount: isoMount},
	// Swap.
	{name: "swap", pkg: "util-linux", make: []cmd{mk("mkswap", "{dev}")}},
	// Volume managers.
	{name: "lvm2-pv", pkg: "lvm2", make: []cmd{lvm("pvcreate", "-ff", "-y", "{dev}")}},
	{name: "lvm2-pv-in-vg", pkg: "lvm2", make: []cmd{lvm("pvcreate", "-ff", "-y", "{dev}"), lvm("vgcreate", "{vg}", "{dev}")}},
	// An active LV: the device has a dm holder.
	{name: "lvm2-active-lv", pkg: "lvm2", needs: "dm",
		make: []cmd{lvm("pvcreate", "-ff", "-y", "{dev}"), lvm("vgcreate", "{vg}", "{dev}"), lvm("lvcreate", "-y", "-n", "lv", "-L", "64M", "{vg}")},
		undo: []cmd{lvm("vgchange", "-an", "{vg}")}},
	// md RAID1: assembled (the device has an md holder) and stopped (only the superblock).
	{name: "md-0.90-assembled", pkg: "mdadm", needs: "md", make: []cmd{mdCreate("0.90")}, undo: []cmd{mk("mdadm", "--stop", "{md}")}},
	{name: "md-0.90-stopped", pkg: "mdadm", needs: "md", make: []cmd{mdCreate("0.90"), mk("mdadm", "--stop", "{md}")}, undo: []cmd{mk("mdadm", "--stop", "{md}")}},
	{name: "md-1.0-assembled", pkg: "mdadm", needs: "md", make: []cmd{mdCreate("1.0")}, undo: []cmd{mk("mdadm", "--stop", "{md}")}},
	{name: "md-1.0-stopped", pkg: "mdadm", needs: "md", make: []cmd{mdCreate("1.0"), mk("mdadm", "--stop", "{md}")}, undo: []cmd{mk("mdadm", "--stop", "{md}")}},
	{name: "md-1.2-assembled", pkg: "mdadm", needs: "md", make: []cmd{mdCreate("1.2")}, undo: []cmd{mk("mdadm", "--stop", "{md}")}},
	{name: "md-1.2-stopped", pkg: "mdadm", needs: "md", make: []cmd{mdCreate("1.2"), mk("mdadm", "--stop", "{md}")}, undo: []cmd{mk("mdadm", "--stop", "{md}")}},
	// Encryption (a cheap PBKDF: the header is what matters).
	{name: "luks1", pkg: "cryptsetup-bin", make: []cmd{mk("cryptsetup", "luksFormat", "--batch-mode", "--type", "luks1",
		"--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file", "{key}", "{dev}")}},
	{name: "luks2", pkg: "cryptsetup-bin", make: []cmd{mk("cryptsetup", "luksFormat", "--batch-mode", "--type", "luks2",
		"--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file", "{key}", "{dev}")}},
	// Caches.
	{name: "bcache-cache", pkg: "bcache-tools", make: []cmd{mk("make-bcache", "-C", "{dev}")}},
	{name: "bcache-backing", pkg: "bcache-tools", make: []cmd{mk("make-bcache", "-B", "{dev}")}},
	// Partition tables that are not Prism's.
	{name: "dos-mbr", pkg: "fdisk", make: []cmd{{argv: []string{"sfdisk", "--quiet", "{dev}"}, stdin: "label: dos\n,100MiB,83\n"}}},
	{name: "gpt-foreign", pkg: "gdisk", make: []cmd{mk("sgdisk", "--new=1:0:+100M", "--change-name=1:data", "--typecode=1:8300", "{dev}")}},
	// Leftovers and noise no tool makes.
	{name: "bluestore-label", fill: func(t *testing.T, l *loop) { writeAt(t, l, 0, blueStoreLabel(t)) }},
	{name: "random-first-and-last-mib", fill: func(t *testing.T, l *loop) {
		writeAt(t, l, 0, randomBytes(t, int(mib)))
		writeAt(t, l, l.size-mib, randomBytes(t, int(mib)))
	}},
}

// blueStoreLabel is the head of an old OSD's BlueStore label (what libblkid's ceph_bluestore
// probe and Prism's own detector look for), followed by noise where the encoded label is.
func blueStoreLabel(t *testing.T) []byte {
	t.Helper()
	u := randomBytes(t, 16)
	id := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	b := append([]byte("bluestore block device\n"+id+"\n"), randomBytes(t, 4096)...)
	return b[:4096]
}

// prepare attaches a device for f and makes f on all of it; it skips when a tool or a kernel
// facility is missing, naming the package or the facility.
func (e *env) prepare(t *testing.T, f format, size int64) *loop {
	t.Helper()
	if f.unavailable != "" {
		t.Skip(f.unavailable)
	}
	var argv0 []string
	for _, c := range append(slices.Clone(f.make), f.undo...) {
		argv0 = append(argv0, e.tool(t, c.argv[0], f.pkg))
	}
	switch f.needs {
	case "md":
		if _, err := os.Stat("/proc/mdstat"); err != nil {
			t.Skipf("this kernel has no md driver (%v): mdadm cannot create an array", err)
		}
	case "dm":
		if _, err := run(e.ctx, "", e.tool(t, "dmsetup", ""), "version"); err != nil {
			t.Skipf("this kernel has no usable device-mapper: %v", err)
		}
	}
	l := e.attach(t, f.name, size)
	vars := strings.NewReplacer("{dev}", l.dev, "{src}", e.src, "{key}", e.keyFile(t),
		"{vg}", "prismtest"+e.tag+strings.ReplaceAll(f.name, "-", ""),
		// md keeps "homehost:name" in 32 bytes: a short name (md-1.0-stopped -> p<tag>-10s).
		"{md}", "/dev/md/p"+e.tag[:6]+"-"+strings.NewReplacer("md-", "", "-assembled", "a", "-stopped", "s", ".", "").Replace(f.name),
		"{lvmconfig}", fmt.Sprintf(`devices { filter=["a|^%s$|","r|.*|"] use_devicesfile=0 } activation { udev_sync=0 udev_rules=0 }`, l.dev))
	expand := func(c cmd, argv0 string) []string {
		out := []string{argv0}
		for _, a := range c.argv[1:] {
			out = append(out, vars.Replace(a))
		}
		return out
	}
	if len(f.undo) > 0 {
		undo := argv0[len(f.make):]
		t.Cleanup(func() {
			for i, c := range f.undo {
				if err := cleanupRun(expand(c, undo[i])...); err != nil {
					t.Logf("cleanup: %v", err)
				}
			}
		})
	}
	for i, c := range f.make {
		if _, err := run(e.ctx, c.stdin, expand(c, argv0[i])...); err != nil {
			t.Fatalf("making %s: %v", f.name, err)
		}
	}
	if f.fill != nil {
		f.fill(t, l)
	}
	return l
}

func (e *env) keyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(e.dir, "luks.key")
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, []byte("prism-test-key-"+e.tag), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestForeignFormats makes each format on the whole device and runs the partitioner on a
// plan (2 DB slots and a cache, allowWipe empty) that treats the device as a fast device.
func TestForeignFormats(t *testing.T) {
	e := setup(t)
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			l := e.prepare(t, f, devSize)
			found := e.probe(t, l.dev)
			name := foundName(found)
			if f.name == "random-first-and-last-mib" && name != "" {
				t.Logf("blkid names the random bytes %q; requiring that name", name)
			}
			t.Logf("%s on %s; blkid -p: %v; holders %v", f.name, l.dev, found, holders(t, l.name))
			p := planFor(t, planOpts{slots: 2, cache: true}, l)
			e.refusesAndKeeps(t, l, p, name)
			if again := foundName(e.probe(t, l.dev)); again != name {
				t.Errorf("blkid -p names %q after the pass, %q before", again, name)
			}
		})
	}
}
