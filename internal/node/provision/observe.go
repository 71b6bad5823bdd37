package provision

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/blkid"
	"github.com/prism-storage/prism/internal/host/gpt"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/signature"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// observe reads everything Decide needs fresh from the device at path (the inventory's
// record dev, under HostRoot): the GPT area, Prism's detector and libblkid's probes on the
// whole device and on every planned partition's range, the kernel's partitions, holders,
// read-only flag and mounts. stale lists the kernel partitions whose position differs from
// the table's. Any read that fails fails the observation: a device that cannot be seen whole
// is never written.
func (r Runner) observe(ctx context.Context, path string, dev prismv1.Device, fd prismv1.FastDevicePlan) (obs Observation, stale []string, err error) {
	f, err := hostexec.OpenDirect(path)
	if err != nil {
		return obs, nil, err
	}
	defer f.Close()
	// Every byte Decide judges is read from the device, never from the page cache
	// (hostexec.DirectReader says why).
	rd := hostexec.DirectReader{F: f}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return obs, nil, fmt.Errorf("size of %s: %w", path, err)
	}
	if !r.allowFiles && size != dev.SizeBytes {
		return obs, nil, fmt.Errorf("%s is %d bytes now, %d in the inventory; waiting for the next inventory", path, size, dev.SizeBytes)
	}
	if ro, ok := r.sysfs().ClassInt(dev.Name, "ro"); ok {
		dev.ReadOnly = ro != 0
	}
	if ss, ok := r.sysfs().ClassInt(dev.Name, "queue/logical_block_size"); ok {
		dev.LogicalBlockSizeBytes = int32(ss)
	}
	if dev.LogicalBlockSizeBytes <= 0 {
		return obs, nil, fmt.Errorf("%s: the logical sector size is unknown", path)
	}

	// The kernel's view first: partitions, holders, mounts.
	kernel, kerr := r.kernelPartitions(dev.Name)
	if kerr != nil && !r.allowFiles && r.hasClassBlock() {
		// Without it the holders and mounts of the device's partitions are unknown.
		return obs, nil, fmt.Errorf("reading the kernel's view of %s under %s (it cannot be proven unused without its partitions, holders and mounts): %w",
			dev.Name, r.classBlockDir(), kerr)
	}
	// The device open is the one the inventory read and the plan names (decision 0044); read
	// after the kernel's view, whose absence says more.
	if err := r.checkIdentity(f, path, dev, fd.Identity); err != nil {
		return obs, nil, err
	}
	if kerr == nil {
		if dev.Holders, err = r.sysfs().ClassHolders(dev.Name); err != nil {
			return obs, nil, err
		}
		obs.PartitionHolders = map[int][]string{}
		obs.PartitionDev = map[int]string{}
		for n := range kernel {
			obs.PartitionDev[n] = kernel[n].Dev
			if obs.PartitionHolders[n], err = r.sysfs().ClassHolders(dev.Name, partitionName(dev.Name, n)); err != nil {
				return obs, nil, err
			}
		}
	}
	devs, err := deviceNumbers(f, dev.Name, kernel)
	if err != nil {
		return obs, nil, err
	}
	if obs.Mounts, err = r.mounts(devs); err != nil {
		return obs, nil, err
	}
	if err := r.users(ctx, &obs, dev.Name, devs); err != nil {
		return obs, nil, err
	}
	// Then have libblkid's tools read the device, not what an earlier pass left in its page
	// cache (Prism's own reads bypass it): a write through a
	// partition's own node (LVM's, or anyone's) never reaches the whole device's cache while a
	// partition holds the device open. Dropping it also writes the whole device's dirty
	// pages, which only a filesystem or a program on the whole device makes, so it is skipped
	// when anything is mounted from the device or holds it whole: Prism writes neither, and
	// must not write for a frozen filesystem (or a program's open device).
	if kerr == nil && len(obs.Mounts) == 0 && len(dev.Holders) == 0 && len(obs.Users) == 0 {
		if err := hostexec.DropPageCache(f); err != nil {
			return obs, nil, err
		}
	}
	if obs.Disk, err = gpt.ReadDisk(rd, size, int64(dev.LogicalBlockSizeBytes)); err != nil {
		return obs, nil, fmt.Errorf("reading the partition table area of %s: %w", path, err)
	}
	sigs, err := signature.Detect(rd, size)
	if err != nil {
		return obs, nil, fmt.Errorf("reading the signatures of %s (it cannot be proven empty): %w", path, err)
	}
	dev.Signatures = nil
	for _, s := range sigs {
		dev.Signatures = append(dev.Signatures, prismv1.DeviceSignature{Kind: s.Kind.API(), Name: s.Name, OffsetBytes: s.Offset})
	}
	if obs.Probe, err = r.probeWhole(ctx, path); err != nil {
		return obs, nil, err
	}

	// The kernel's partitions against the table.
	if kerr == nil {
		dev.Partitions = nil
		for _, n := range sortedKernel(kernel) {
			if p, ok := obs.Disk.Table().Partition(n); ok && !kernel[n].matches(p) {
				stale = append(stale, fmt.Sprintf("the kernel has %s at %s, size %s, but the table says %s, size %s", partitionName(dev.Name, n),
					gpt.FormatBytes(kernel[n].Start*512), gpt.FormatBytes(kernel[n].Size*512), gpt.FormatBytes(p.StartBytes), gpt.FormatBytes(p.SizeBytes)))
			}
			dev.Partitions = append(dev.Partitions, partitionName(dev.Name, n))
		}
	}

	// What every planned partition's range holds.
	obs.Content = map[int]Content{}
	for _, w := range Wanted(fd) {
		if w.StartBytes <= 0 || w.SizeBytes <= 0 || w.StartBytes > size-w.SizeBytes {
			continue // Decide refuses the plan or the fit
		}
		c, err := r.content(ctx, rd, path, w.StartBytes, w.SizeBytes)
		if err != nil {
			return obs, nil, fmt.Errorf("reading the range of partition %d of %s: %w", w.Number, path, err)
		}
		obs.Content[int(w.Number)] = c
	}
	obs.Device = dev
	return obs, stale, nil
}

// probeWhole asks libblkid, through wipefs (every signature) and blkid (its verdict, which
// says when it cannot decide).
func (r Runner) probeWhole(ctx context.Context, path string) ([]blkid.Signature, error) {
	argv, err := blkid.WipefsArgv(path)
	if err != nil {
		return nil, err
	}
	out, err := r.Exec.Run(ctx, argv, nil)
	if err != nil {
		return nil, fmt.Errorf("libblkid's probe of %s failed (it cannot be proven empty): %w", path, err)
	}
	sigs, err := blkid.ParseWipefs(out)
	if err != nil {
		return nil, err
	}
	more, err := r.probe(ctx, path, 0, 0)
	if err != nil {
		return nil, err
	}
	for _, s := range more {
		if !slices.ContainsFunc(sigs, func(o blkid.Signature) bool { return o.Type == s.Type }) {
			sigs = append(sigs, s)
		}
	}
	return sigs, nil
}

// probe runs blkid --probe on the device or on a range of it. blkid exits 2 both when it
// found nothing and when it could not probe (it cannot open the device, or sets up no probe
// of the range): then it says why on stderr ("blkid: error: <device>: ..."), and the exit
// proves nothing.
func (r Runner) probe(ctx context.Context, path string, offset, size int64) ([]blkid.Signature, error) {
	argv, err := blkid.ProbeArgv(path, offset, size)
	if err != nil {
		return nil, err
	}
	out, err := r.Exec.Run(ctx, argv, nil)
	var exit *hostexec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode == blkid.ExitNothingFound && exit.Stderr == "":
		return nil, nil
	case errors.As(err, &exit) && exit.ExitCode == blkid.ExitAmbivalent:
		return []blkid.Signature{{Type: "several formats (blkid: ambivalent result)", Offset: offset}}, nil
	case err != nil:
		return nil, fmt.Errorf("libblkid's probe of %s failed (it cannot be proven empty): %w", path, err)
	}
	sigs, err := blkid.ParseProbe(out)
	if err != nil {
		return nil, err
	}
	for i := range sigs {
		sigs[i].Offset += offset
	}
	return sigs, nil
}

// content probes the range [start, start+size) of the device: libblkid, Prism's detector,
// and the first non-zero byte of its head (HeadSpan) and its last MiB.
func (r Runner) content(ctx context.Context, f io.ReaderAt, path string, start, size int64) (Content, error) {
	c := Content{NonZeroAt: -1}
	found, err := r.probe(ctx, path, start, size)
	if err != nil {
		return c, err
	}
	for _, s := range found {
		c.Found = append(c.Found, s.Type)
	}
	sigs, err := signature.Detect(io.NewSectionReader(f, start, size), size)
	if err != nil {
		return c, err
	}
	for _, s := range sigs {
		if !slices.Contains(c.Found, s.Name) {
			c.Found = append(c.Found, s.Name)
		}
		c.At = append(c.At, s.Offset)
	}
	for _, span := range [][2]int64{{0, min(HeadSpan, size)}, {max(size-ClearSpan, 0), min(ClearSpan, size)}} {
		off, buf := span[0], make([]byte, span[1])
		if _, err := f.ReadAt(buf, start+off); err != nil {
			return c, err
		}
		if i := slices.IndexFunc(buf, func(b byte) bool { return b != 0 }); i >= 0 {
			c.NonZeroAt = off + int64(i)
			break
		}
	}
	return c, nil
}

// deviceNumbers are the device numbers of the device (the open file f; none for a regular
// file) and of its kernel partitions, "major:minor" to their kernel names.
func deviceNumbers(f *os.File, name string, kernel map[int]kernelPartition) (map[string]string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	devs := map[string]string{}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		devs[fmt.Sprintf("%d:%d", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))] = name
	}
	for n, k := range kernel {
		if k.Dev != "" {
			devs[k.Dev] = partitionName(name, n)
		}
	}
	return devs, nil
}

// mounts lists the mounts of the devices devs (deviceNumbers) from the host's mount table
// (mountTables), matched by device number, the same in every mount namespace, or for a FUSE
// file system, which has a device number of its own, by its source when that is one of the
// devices' nodes.
func (r Runner) mounts(devs map[string]string) ([]string, error) {
	if len(devs) == 0 {
		return nil, nil
	}
	var b []byte
	var err error
	for _, p := range mountTables(r.HostRoot) {
		if b, err = os.ReadFile(p); err == nil {
			return mountsOf(b, devs, r.sourceDev), nil
		}
	}
	return nil, fmt.Errorf("reading the mount table: %w", err)
}

// sourceDev is the device number ("major:minor") of a mount source that is a block device
// node under the host root; false for anything else.
func (r Runner) sourceDev(source string) (string, bool) {
	if !filepath.IsAbs(source) {
		return "", false
	}
	d, ok, err := procfs.BlockDeviceNumber(filepath.Join(cmp.Or(r.HostRoot, "/"), source))
	if err != nil || !ok {
		return "", false
	}
	return fmt.Sprintf("%d:%d", unix.Major(d), unix.Minor(d)), true
}

// mountTables are where the host's mount table is, best first: init's under the host root,
// init's in this PID namespace (the agent's pod runs with hostPID, so that is the host's
// init), and the agent's own (a mount in another namespace then shows only through the
// exclusive open, which the kernel refuses for a mounted device whatever the namespace).
func mountTables(hostRoot string) []string {
	return []string{filepath.Join(cmp.Or(hostRoot, "/"), "proc", "1", "mountinfo"), "/proc/1/mountinfo", "/proc/self/mountinfo"}
}

// mountsOf picks the mountinfo lines whose device number (field 3) is in devs, and the FUSE
// mounts whose source (after the " - " separator and the type) sourceDev resolves to one of
// devs. fusefat and fuseiso name themselves as the source, not the device: those are found by
// the device they hold open (Runner.users).
func mountsOf(mountinfo []byte, devs map[string]string, sourceDev func(string) (string, bool)) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		if name, ok := devs[fields[2]]; ok {
			out = append(out, fmt.Sprintf("%s on %s", name, fields[4]))
			continue
		}
		sep := slices.Index(fields[5:], "-") + 5
		if sep < 5 || sep+2 >= len(fields) {
			continue
		}
		fstype, source := fields[sep+1], unescapeMountinfo(fields[sep+2])
		if fstype != "fuse" && fstype != "fuseblk" && !strings.HasPrefix(fstype, "fuse.") {
			continue
		}
		if dev, ok := sourceDev(source); ok && devs[dev] != "" {
			out = append(out, fmt.Sprintf("%s on %s (%s)", devs[dev], fields[4], fstype))
		}
	}
	return out
}

// unescapeMountinfo undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescapeMountinfo(s string) string {
	for _, e := range [][2]string{{`\040`, " "}, {`\011`, "\t"}, {`\012`, "\n"}, {`\134`, `\`}} {
		s = strings.ReplaceAll(s, e[0], e[1])
	}
	return s
}

// users records the processes other than the agent that hold the device or one of its
// partitions open (procfs, by device number): a FUSE file system's daemon, a program reading
// or writing it, which show in no holder list and, opening it without O_EXCL, do not stop
// Prism's exclusive hold; and the loop devices bound to them, which neither do. The whole device's go to obs.Users; a partition's to its
// PartitionHolders, which Decide weighs as it weighs a stacked device (an OSD's DB on the
// partition itself is its ceph-osd). Openers get procfs.BriefOpen to close it (a udev
// worker's probe after Prism's own close, another inventory). A scan that cannot see every
// process fails the observation.
func (r Runner) users(ctx context.Context, obs *Observation, name string, devs map[string]string) error {
	nums := map[uint64]string{}
	for d, n := range devs {
		num, err := procfs.ParseDev(d)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		nums[num] = n
	}
	openers, err := r.proc().SettledOpeners(ctx, nums, procfs.BriefOpen)
	if err != nil {
		return fmt.Errorf("finding the processes that hold %s open (it cannot be proven unused without them): %w", name, err)
	}
	// A loop device bound to the device or a partition (losetup /dev/nvme0n1p1) leaves no
	// holder, no descriptor and no refused exclusive open: only the loop device says so.
	loops, err := r.loops()
	if err != nil {
		return fmt.Errorf("finding the loop devices bound to %s (it cannot be proven unused without them): %w", name, err)
	}
	add := func(dev, user string) error {
		if dev == name {
			obs.Users = append(obs.Users, user)
			return nil
		}
		n, ok := parsePartitionName(name, dev)
		if !ok {
			return fmt.Errorf("%s uses %s, which is not a partition of %s", user, dev, name)
		}
		if obs.PartitionHolders == nil {
			obs.PartitionHolders = map[int][]string{}
		}
		obs.PartitionHolders[n] = append(obs.PartitionHolders[n], user)
		return nil
	}
	for _, o := range openers {
		if err := add(o.Device, o.String()); err != nil {
			return err
		}
	}
	for _, l := range loops {
		if dev, ok := nums[l.Backing]; ok && l.Backing != 0 {
			if err := add(dev, l.Loop+" (a loop device on it)"); err != nil {
				return err
			}
		}
	}
	return nil
}

// loops lists the host's bound loop devices and what backs each (sysfs.LoopBackings).
func (r Runner) loops() ([]sysfs.LoopBacking, error) {
	if r.loopBackings != nil {
		return r.loopBackings()
	}
	return r.sysfs().LoopBackings()
}

// proc is the procfs users are found in: the agent's own /proc, the host's when the agent
// runs with hostPID, as it must to provision.
func (r Runner) proc() procfs.Proc {
	p := r.Proc
	p.Dir = cmp.Or(p.Dir, "/proc")
	return p
}

// kernelPartition is a partition as the kernel has it, from sysfs (512-byte units).
type kernelPartition sysfs.KernelPartition

func (k kernelPartition) matches(p gpt.Partition) bool {
	return k.Start*512 == p.StartBytes && k.Size*512 == p.SizeBytes
}

func (k kernelPartition) String() string {
	if k.Start == 0 && k.Size == 0 {
		return "not listed"
	}
	return fmt.Sprintf("kernel: start %s, size %s", gpt.FormatBytes(k.Start*512), gpt.FormatBytes(k.Size*512))
}

// kernelPartitions is the kernel's view of the disk's partitions (sysfs under HostRoot).
func (r Runner) kernelPartitions(name string) (map[int]kernelPartition, error) {
	ps, err := r.sysfs().KernelPartitions(name)
	if err != nil {
		return nil, err
	}
	out := make(map[int]kernelPartition, len(ps))
	for n, p := range ps {
		out[n] = kernelPartition(p)
	}
	return out, nil
}

func (r Runner) sysfs() sysfs.Host { return sysfs.Host{Root: cmp.Or(r.HostRoot, "/")} }

// hasClassBlock says whether the host root has /sys/class/block, as every sysfs does. A root
// without it is a fixture tree (the demo's simulated nodes, whose sysfs lags the kernel), where
// the partition table alone is checked; a root without sysfs also gives the inventory no
// device to plan on. With it, a device missing there fails the observation.
func (r Runner) hasClassBlock() bool {
	_, err := os.Stat(r.classBlockDir())
	return !errors.Is(err, fs.ErrNotExist)
}

func (r Runner) classBlockDir() string {
	return filepath.Join(cmp.Or(r.HostRoot, "/"), "sys", "class", "block")
}

func sortedKernel(m map[int]kernelPartition) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
