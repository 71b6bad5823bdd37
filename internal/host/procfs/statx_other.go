//go:build !linux

package procfs

import (
	"errors"
	"io/fs"
)

// BlockDeviceNumber needs Linux's statx; elsewhere (a workstation's build) it fails, and
// with it every scan.
func BlockDeviceNumber(path string) (uint64, bool, error) {
	return 0, false, &fs.PathError{Op: "statx", Path: path, Err: errors.ErrUnsupported}
}
