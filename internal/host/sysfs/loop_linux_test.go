package sysfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// attachLoop binds a loop device to file (a regular file or a block device) at offset and
// detaches it when the test ends. Root only.
func attachLoop(t *testing.T, file, offset string) string {
	t.Helper()
	out, err := exec.Command("losetup", "--find", "--show", "--offset", offset, file).Output()
	if err != nil {
		t.Skipf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	return dev
}

// TestLoopBackingsNamesALoopDeviceOnADisk: a loop device backed by another (as by a disk) is
// listed with that device's number, and one backed by a file with none.
func TestLoopBackingsNamesALoopDeviceOnADisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("attaching loop devices needs root")
	}
	if _, err := exec.LookPath("losetup"); err != nil {
		t.Skip("losetup (mount) is not installed")
	}
	file := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(file, make([]byte, 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	disk := attachLoop(t, file, "0")
	onDisk := attachLoop(t, disk, "1048576")
	var st unix.Stat_t
	if err := unix.Stat(disk, &st); err != nil {
		t.Fatal(err)
	}
	got, err := Host{Root: "/"}.LoopBackings()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []LoopBacking{{filepath.Base(onDisk), st.Rdev}, {filepath.Base(disk), 0}} {
		if !slices.Contains(got, want) {
			t.Errorf("loop backings %+v lack %+v", got, want)
		}
	}
}

// TestLoopBackingsOfAFixtureTree: a root without /sys/class/block has no loop devices; one
// whose bound loop device cannot be asked (no node under its /dev) fails the list.
func TestLoopBackingsOfAFixtureTree(t *testing.T) {
	root := t.TempDir()
	if got, err := (Host{Root: root}).LoopBackings(); err != nil || got != nil {
		t.Errorf("no sysfs: %+v, %v; want none", got, err)
	}
	for _, dir := range []string{"loop0", "loop1/loop", "loop1p1"} {
		if err := os.MkdirAll(filepath.Join(root, "sys", "class", "block", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := (Host{Root: root}).LoopBackings(); err == nil || !strings.Contains(err.Error(), "loop1") {
		t.Errorf("a bound loop1 without a node: %+v, %v; want an error naming loop1", got, err)
	}
}
