//go:build !linux

package sysfs

import "errors"

// loopBacking: loop devices and their ioctl are Linux's.
func loopBacking(string) (uint64, bool, error) {
	return 0, false, errors.New("loop devices are Linux's")
}
