package hostexec

import (
	"errors"
	"fmt"
	"path/filepath"
)

// CheckDevicePath accepts a clean absolute path: an argv element that names a device must
// never be taken for an option or reach another file through "..".
func CheckDevicePath(dev string) error {
	if dev == "" {
		return errors.New("no device path")
	}
	if !filepath.IsAbs(dev) || filepath.Clean(dev) != dev {
		return fmt.Errorf("device path %q is not a clean absolute path", dev)
	}
	return nil
}
