package hostexec

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Device is a block device the agent opened to write itself (its GPT, zeroed ranges): the one
// way the agent writes a device without a host tool. Tests inject their own to tear writes.
type Device interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
	Close() error
	// Fd is the descriptor, for a host tool that must act on this very device (HeldPath).
	Fd() uintptr
}

// DeviceOpener opens a device for writing.
type DeviceOpener func(path string, exclusive bool) (Device, error)

// OpenDevice opens a block device for reading and writing. With exclusive, the open carries
// O_EXCL: the kernel refuses it (EBUSY) while the device or any of its partitions is mounted,
// swapped on, held by a driver (device-mapper, md, bcache) or open exclusively by anyone, and
// refuses all of those to others for as long as the handle is open.
func OpenDevice(path string, exclusive bool) (Device, error) {
	flags := os.O_RDWR | syscall.O_CLOEXEC
	if exclusive {
		flags |= os.O_EXCL
	}
	return os.OpenFile(path, flags, 0)
}

// DropPageCache writes back and drops the page cache of the block device open as f
// (BLKFLSBUF, as `blockdev --flushbufs`; it needs CAP_SYS_ADMIN), so that what is read through
// f next, and by libblkid's tools opening the same device, comes from the device. The kernel
// keeps a whole disk's page cache apart from each partition's and drops it only when its last
// opener closes: while one partition is held (device-mapper, an OSD, a cache), what was read
// of another partition through the whole disk stays cached, and a write through that
// partition's own node does not reach it. Dirty pages are written, not dropped: nothing is
// lost. A regular file (a test's device) is left as it is.
func DropPageCache(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	if err := unix.IoctlSetInt(int(f.Fd()), unix.BLKFLSBUF, 0); err != nil {
		return fmt.Errorf("dropping the page cache of %s (BLKFLSBUF): %w", f.Name(), err)
	}
	return nil
}

// HeldPath is the path through which a host tool opens the very device f has open: f's
// descriptor under the agent's /proc (its own pid: the tool inherits no descriptor, so
// /proc/self would be the tool's). Opening it reopens the device node f was opened through,
// which reaches the device by its number, and f's open keeps that number on its disk (a loop
// device held open cannot be bound again; a removed disk's number is freed with the disk,
// after its last close). A kernel name, looked up again by the tool, may by then mean
// another disk.
func HeldPath(f interface{ Fd() uintptr }) string {
	return "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + strconv.FormatUint(uint64(f.Fd()), 10)
}
