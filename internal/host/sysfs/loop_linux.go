package sysfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// loopBacking asks the loop device at path for the device number of its backing file
// (lo_rdevice: the number of a block device, 0 for a regular file); bound is false when the
// loop device has no backing file (ENXIO: detached since it was listed).
func loopBacking(path string) (dev uint64, bound bool, err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0, false, err
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	if errors.Is(err, unix.ENXIO) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return info.Rdevice, true, nil
}
