package hostexec

import (
	"io"
	"os"
	"syscall"
)

// Device is a block device the agent opened to write itself (its GPT, zeroed ranges): the one
// way the agent writes a device without a host tool. Tests inject their own to tear writes.
type Device interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
	Close() error
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
