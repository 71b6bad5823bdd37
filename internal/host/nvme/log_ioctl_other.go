//go:build !linux

package nvme

import (
	"context"
	"fmt"
	"runtime"
)

// GetLogPage is only implemented on Linux.
func GetLogPage(ctx context.Context, devicePath string, nsid uint32, logID uint8, length int) ([]byte, error) {
	return nil, fmt.Errorf("nvme: get log page %#02x %s: %w on %s", logID, devicePath, ErrUnsupportedOS, runtime.GOOS)
}

// GetLogPageSpecific is only implemented on Linux.
func GetLogPageSpecific(ctx context.Context, devicePath string, logID uint8, lsi uint16, length int) ([]byte, error) {
	return nil, fmt.Errorf("nvme: get log page %#02x %s: %w on %s", logID, devicePath, ErrUnsupportedOS, runtime.GOOS)
}
