//go:build unix

package sysfs

import (
	"io/fs"
	"syscall"
)

// readAttr reads a sysfs attribute with open, read and close alone. os.ReadFile adds an
// fstat and an attempt to register the file with the runtime's poller (one more syscall
// that fails for regular files), and an inventory reads some twenty attributes per disk:
// these were a third of the inventory's syscalls. A kernel attribute fits in a page; a
// longer file (a fixture) is read to its end all the same.
func readAttr(path string) ([]byte, error) {
	fd, err := openRetry(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func openRetry(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
