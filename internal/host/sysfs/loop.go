package sysfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// LoopBacking is a bound loop device and the block device it is backed by.
type LoopBacking struct {
	// Loop is the loop device's kernel name ("loop2").
	Loop string
	// Backing is the device number (unix.Mkdev) of the block device behind it; 0 when it is
	// backed by a regular file.
	Backing uint64
}

// LoopBackings lists the bound loop devices under /sys/class/block (those with a loop/
// directory) and asks each, through its node under the root's /dev, what backs it
// (LOOP_GET_STATUS64's lo_rdevice). A loop device backed by a disk or a partition uses it
// without any trace elsewhere: no holder in sysfs, no process's descriptor (losetup has
// exited), no mount of the disk, and the disk still opens O_EXCL; whatever is mounted from
// the loop device lives on the disk. A loop device unbound since the listing is left out;
// one that cannot be asked fails the list, so no disk is taken for unused on a partial look.
// A root without /sys/class/block (a fixture tree) has none.
func (h Host) LoopBackings() ([]LoopBacking, error) {
	entries, err := os.ReadDir(h.path("sys", "class", "block"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the loop devices: %w", err)
	}
	var out []LoopBacking
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "loop") {
			continue
		}
		bound := func() bool {
			_, err := os.Stat(h.path("sys", "class", "block", name, "loop"))
			return !errors.Is(err, fs.ErrNotExist)
		}
		if !bound() {
			continue // not bound (or a partition of a loop device)
		}
		dev, ok, err := loopBacking(h.DevicePath(name))
		if err != nil && !bound() {
			continue // detached and removed since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("asking %s what backs it: %w", name, err)
		}
		if ok {
			out = append(out, LoopBacking{Loop: name, Backing: dev})
		}
	}
	return out, nil
}
