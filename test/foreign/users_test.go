//go:build linux

package foreign

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// formatNamed is the row of formats with that name.
func formatNamed(t *testing.T, name string) format {
	t.Helper()
	i := slices.IndexFunc(formats, func(f format) bool { return f.name == name })
	if i < 0 {
		t.Fatalf("test bug: no format %q", name)
	}
	return formats[i]
}

// holdOpen starts a child that holds path open read-only and sleeps, as `exec 3<path; sleep`
// would: a user of the device that no holder list, mount table or exclusive open shows.
func holdOpen(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("sleep", "600")
	cmd.ExtraFiles = []*os.File{f} // its descriptor 3
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// TestForeignInUse: devices that a process holds open, which shows in no holder list, in no
// mount table entry with the device's number and in no refused exclusive open (issue 29):
// the daemon of a FUSE file system on the device, and a program with the device or one of
// its partitions open. The plans grant a wipe of the devices that hold data, which
// overrides their signatures but never a user: only the open file keeps them.
func TestForeignInUse(t *testing.T) {
	e := setup(t)

	// fusefat and fuseiso name themselves as the mount's source, and their mount has a
	// device number of its own (0:N): the daemon's open file is all that ties it to the device.
	for _, c := range []struct {
		format string
		rw     bool
	}{{"vfat-fat32", true}, {"iso9660-genisoimage", false}} {
		f := formatNamed(t, c.format)
		tool := f.mount.fuseRO[0]
		t.Run(tool+"/"+c.format+"/granted", func(t *testing.T) {
			l := e.prepare(t, f, devSize)
			m := e.newMounter(t, f, l)
			m.fuse = true // whether or not this kernel has a driver
			if err := m.mount(t, c.rw); err != nil {
				t.Fatal(err)
			}
			if c.rw {
				m.writeKnown(t)
				t.Logf("%s on %s, %s", tool, l.dev, m.quiesce(t))
			}
			p := planFor(t, planOpts{slots: 2, cache: true, grant: []*loop{l}}, l)
			res := e.keepsEvenGranted(t, l, p, nil, "("+tool+")")
			if msg := statuses(res, l)[0].Message; !strings.Contains(msg, "is in use: held open by pid ") {
				t.Errorf("the refusal does not say the device is held open: %q", msg)
			}
			m.checkKnown(t)
		})
	}

	// A program with the whole device open: an empty device, which Prism partitions when no
	// one uses it, and one with data under a wipe grant.
	t.Run("open/whole/empty", func(t *testing.T) {
		l := e.attach(t, "open-empty", devSize)
		holdOpen(t, l.dev)
		e.refusesAndKeeps(t, l, planFor(t, planOpts{slots: 2, cache: true}, l), "held open by pid")
	})
	t.Run("open/whole/granted", func(t *testing.T) {
		l := e.attach(t, "open-granted", devSize)
		writeAt(t, l, 0, randomBytes(t, int(mib)))
		cmd := holdOpen(t, l.dev)
		p := planFor(t, planOpts{slots: 2, cache: true, grant: []*loop{l}}, l)
		e.keepsEvenGranted(t, l, p, nil, "held open by "+procName(cmd))
	})

	// A program with a partition open: a foreign GPT partition under a wipe grant.
	t.Run("open/partition/granted", func(t *testing.T) {
		l := e.withForeignPartition(t, "open-partition")
		writeAt(t, l, mib, randomBytes(t, int(mib))) // data in the partition
		cmd := holdOpen(t, l.dev+"p1")
		p := planFor(t, planOpts{slots: 2, cache: true, grant: []*loop{l}}, l)
		e.keepsEvenGranted(t, l, p, nil, "partition 1 by "+procName(cmd))
	})
}

// TestForeignUnderALoopDevice: a loop device bound to the device or to one of its partitions
// (losetup --offset N /dev/sdX; a file system on the loop device lies at the offset, where no
// probe looks) shows in no holder list, no process's descriptors and no refused exclusive open
// (decision 0059). The plans grant a wipe, which never overrides a user.
func TestForeignUnderALoopDevice(t *testing.T) {
	e := setup(t)
	losetup := e.tool(t, "losetup", "")
	bind := func(t *testing.T, dev string) string {
		t.Helper()
		user := strings.TrimSpace(e.must(t, losetup, "--find", "--show", "--offset", strconv.FormatInt(4*mib, 10), dev))
		t.Cleanup(func() { _ = cleanupRun(losetup, "-d", user) })
		return strings.TrimPrefix(user, "/dev/")
	}
	t.Run("whole/granted", func(t *testing.T) {
		l := e.attach(t, "loop-whole", devSize)
		writeAt(t, l, 4*mib, randomBytes(t, int(mib))) // the loop device's data
		user := bind(t, l.dev)
		p := planFor(t, planOpts{slots: 2, cache: true, grant: []*loop{l}}, l)
		e.keepsEvenGranted(t, l, p, nil, user+" (a loop device on it)")
	})
	t.Run("partition/granted", func(t *testing.T) {
		l := e.withForeignPartition(t, "loop-partition")
		writeAt(t, l, 5*mib, randomBytes(t, int(mib))) // the loop device's data, in partition 1
		user := bind(t, l.dev+"p1")
		p := planFor(t, planOpts{slots: 2, cache: true, grant: []*loop{l}}, l)
		e.keepsEvenGranted(t, l, p, nil, "partition 1 by "+user+" (a loop device on it)")
	})
}

// withForeignPartition attaches a device with a foreign GPT partition 1 (1 MiB, 64 MiB) that
// the kernel lists.
func (e *env) withForeignPartition(t *testing.T, role string) *loop {
	t.Helper()
	sgdisk, partx := e.tool(t, "sgdisk", ""), e.tool(t, "partx", "")
	l := e.attach(t, role, devSize)
	e.must(t, sgdisk, "--new=1:1M:+64M", "--change-name=1:someones", l.dev)
	e.must(t, partx, "--add", l.dev)
	if parts := kernelPartitions(t, l.name); !slices.Contains(parts, l.name+"p1") {
		t.Fatalf("the kernel has partitions %v of %s after partx --add, want %sp1", parts, l.name, l.name)
	}
	return l
}

// procName is how a refusal names a child: "pid 1234 (sleep)".
func procName(cmd *exec.Cmd) string {
	return "pid " + strconv.Itoa(cmd.Process.Pid) + " (sleep)"
}
