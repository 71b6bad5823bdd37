package opencas

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// PinPartition opens the cache partition (its stable path under hostRoot) read-only, not
// exclusively (casadm's start claims it), for the caller to hold from the scans that prove it
// empty until casadm has run: while it is open the kernel keeps the partition's device number
// on that partition of that disk. casadm takes only the stable path (it records it for
// loading), so it cannot be given the pin's own descriptor; the start runs only while the path
// still names the pinned device (checkPinned).
func PinPartition(hostRoot, partition string) (*os.File, error) {
	if err := checkPath(partition); err != nil {
		return nil, err
	}
	return os.Open(filepath.Join(cmp.Or(hostRoot, "/"), partition))
}

// checkPinned says whether path names the device pin has open: the same device number for a
// block device (the name may have been given to another since the pin's open), the same file
// otherwise (tests' files).
func checkPinned(pin *os.File, path string) error {
	held, err := pin.Stat()
	if err != nil {
		return err
	}
	now, err := os.Stat(path)
	if err != nil {
		return err
	}
	a, aok := held.Sys().(*syscall.Stat_t)
	b, bok := now.Sys().(*syscall.Stat_t)
	device := held.Mode()&os.ModeDevice != 0 && now.Mode()&os.ModeDevice != 0
	if device && aok && bok && a.Rdev == b.Rdev || !device && os.SameFile(held, now) {
		return nil
	}
	return fmt.Errorf("%s no longer names the partition that was scanned (held open as %s); starting no cache on it until it is scanned again", path, pin.Name())
}
