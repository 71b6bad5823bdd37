//go:build linux

package inventory

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestDiskUsers: a host root whose /dev has block device nodes (made with mknod, so root
// only) for a disk and its partition, and a procfs fixture whose processes' descriptors link
// to them, as /proc/<pid>/fd links to what a process opened.
func TestDiskUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod of block device nodes needs root")
	}
	root, proc := t.TempDir(), t.TempDir()
	host := sysfs.Host{Root: root}
	// Numbers no device of this machine is likely to have: they are only compared.
	disk, part := unix.Mkdev(4000, 16), unix.Mkdev(4000, 17)
	for name, dev := range map[string]uint64{"vdz": disk, "vdz1": part} {
		if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mknod(filepath.Join(root, "dev", name), unix.S_IFBLK|0o600, int(dev)); err != nil {
			t.Skipf("mknod: %v", err)
		}
	}
	for file, v := range map[string]string{"partition": "1", "start": "2048", "size": "131072", "dev": "4000:17"} {
		writeFile(t, filepath.Join(root, "sys", "class", "block", "vdz", "vdz1", file), v+"\n")
	}
	// A fixture disk: its node is a regular file, so it is no device of this machine, and
	// the process that "holds" its number is not looked for.
	writeFile(t, filepath.Join(root, "dev", "vdy"), "")

	symlink(t, "100", filepath.Join(proc, "self"))
	symlink(t, filepath.Join(root, "dev", "vdz"), filepath.Join(proc, "100", "fd", "3")) // the agent itself
	symlink(t, filepath.Join(root, "dev", "vdz"), filepath.Join(proc, "200", "fd", "3"))
	writeFile(t, filepath.Join(proc, "200", "comm"), "fusefat\n")
	symlink(t, filepath.Join(root, "dev", "vdz1"), filepath.Join(proc, "300", "fd", "5"))
	writeFile(t, filepath.Join(proc, "300", "comm"), "sleep\n")

	disks := []sysfs.BlockDevice{
		{Name: "vdz", Major: 4000, Minor: 16, Partitions: []string{"vdz1"}},
		{Name: "vdy", Major: 4000, Minor: 32},
	}
	got, problems := diskUsers(t.Context(), &procfs.Proc{Dir: proc}, host, disks)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	want := map[string][]string{"vdz": {"pid 200 (fusefat)", "partition 1: pid 300 (sleep)"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	// The record: its holders, and NoHolders says why.
	d := prismv1.Device{Holders: holders([]string{"dm-3"}, got["vdz"])}
	e := Evaluate(&d, nil)
	msg := ""
	for _, r := range e.Reasons {
		if r.Filter == prismv1.FilterNoHolders {
			msg = r.Message
		}
	}
	if want := "in use by dm-3, pid 200 (fusefat), partition 1: pid 300 (sleep)"; msg != want {
		t.Errorf("NoHolders says %q, want %q", msg, want)
	}

	// A disk whose partitions cannot be read: its users are unknown, the others' are not.
	broken := append(disks, sysfs.BlockDevice{Name: "vdx", Major: 4000, Minor: 48, Partitions: []string{"vdx1"}})
	if err := unix.Mknod(filepath.Join(root, "dev", "vdx"), unix.S_IFBLK|0o600, int(unix.Mkdev(4000, 48))); err != nil {
		t.Fatal(err)
	}
	got, problems = diskUsers(t.Context(), &procfs.Proc{Dir: proc}, host, broken)
	if len(problems) != 1 || problems["vdx"] == nil || !reflect.DeepEqual(got, want) {
		t.Errorf("with vdx's partitions unreadable: %q, problems %v; want %q and a problem of vdx alone", got, problems, want)
	}

	// A scan that cannot look at a process fails: every disk gets it as a problem.
	writeFile(t, filepath.Join(proc, "400", "fd"), "") // not a directory
	if _, problems := diskUsers(t.Context(), &procfs.Proc{Dir: proc}, host, disks); len(problems) != len(disks) || !strings.Contains(fmt.Sprint(problems["vdy"]), "pid 400") {
		t.Errorf("a scan that could not read pid 400's descriptors: problems %v, want pid 400's for every disk", problems)
	}
	// Without a procfs (fixture hosts), nothing is looked for.
	if got, problems := diskUsers(t.Context(), nil, host, disks); got != nil || problems != nil {
		t.Errorf("without a procfs: %v, %v", got, problems)
	}
}

func TestHoldersWithinTheAPILimit(t *testing.T) {
	var users []string
	for range maxHolders + 5 {
		users = append(users, "pid 1 (x)")
	}
	if got := holders([]string{"dm-0"}, users); len(got) != maxHolders || got[0] != "dm-0" {
		t.Errorf("%d holders, first %q; want %d, dm-0", len(got), got[0], maxHolders)
	}
	if got := holders([]string{"dm-0"}, nil); !reflect.DeepEqual(got, []string{"dm-0"}) {
		t.Errorf("no users: %q", got)
	}
}

// TestTakeCountsAProcessHoldingALoopOpen: the inventory of this machine, with a loop device
// that a child holds open as `exec 3</dev/loopN; sleep` would. Root only (losetup).
func TestTakeCountsAProcessHoldingALoopOpen(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("attaching a loop device needs root")
	}
	losetup, err := exec.LookPath("losetup")
	if err != nil {
		t.Skip("losetup (mount) is not installed")
	}
	file := filepath.Join(t.TempDir(), "held.img")
	if err := os.WriteFile(file, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(losetup, "--find", "--show", file).Output()
	if err != nil {
		t.Skipf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command(losetup, "-d", dev).Run() })
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "600")
	child.ExtraFiles = []*os.File{f}
	err = child.Start()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	proc, err := procfs.Proc{Dir: "/proc"}.IgnoringAncestors() // a sandbox's supervisor may hide its files
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Take(t.Context(), Options{Host: sysfs.Host{Root: "/"}, IncludeLoop: true, SignatureReaders: 1, Openers: &proc})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pid %d (sleep)", child.Process.Pid)
	for _, d := range rep.Devices {
		if d.Path != dev {
			continue
		}
		if !slices.Contains(d.Holders, want) {
			t.Errorf("%s: holders %q, want %q among them", dev, d.Holders, want)
		}
		for _, r := range d.Eligibility.Reasons {
			if r.Filter == prismv1.FilterNoHolders && strings.Contains(r.Message, want) {
				return
			}
		}
		t.Errorf("%s: eligibility %+v does not say %s holds it", dev, d.Eligibility, want)
		return
	}
	t.Fatalf("%s is not in the inventory", dev)
}

// TestTakeCountsALoopDeviceOnADisk: a loop device bound to a disk (losetup --offset 1MiB
// /dev/sdX, with a file system on it) shows in no holder list and no process's descriptors,
// and the disk still opens O_EXCL; the inventory must still count it as the disk's user, or
// the disk is selected and Rook's prepare writes over the file system. Root only (losetup).
func TestTakeCountsALoopDeviceOnADisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("attaching a loop device needs root")
	}
	losetup, err := exec.LookPath("losetup")
	if err != nil {
		t.Skip("losetup (mount) is not installed")
	}
	attach := func(file string, offset string) string {
		out, err := exec.Command(losetup, "--find", "--show", "--offset", offset, file).Output()
		if err != nil {
			t.Skipf("losetup: %v", err)
		}
		dev := strings.TrimSpace(string(out))
		t.Cleanup(func() { _ = exec.Command(losetup, "-d", dev).Run() })
		return dev
	}
	file := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(file, make([]byte, 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	disk := attach(file, "0")
	user := attach(disk, "1048576")

	proc, err := procfs.Proc{Dir: "/proc"}.IgnoringAncestors()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Take(t.Context(), Options{Host: sysfs.Host{Root: "/"}, IncludeLoop: true, SignatureReaders: 1, Openers: &proc})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Base(user) + " (a loop device on it)"
	for _, d := range rep.Devices {
		if d.Path != disk {
			continue
		}
		if !slices.Contains(d.Holders, want) {
			t.Errorf("%s: holders %q, want %q among them", disk, d.Holders, want)
		}
		if d.Eligibility.Eligible {
			t.Errorf("%s is eligible although %s uses it", disk, user)
		}
		return
	}
	t.Fatalf("%s is not in the inventory", disk)
}
