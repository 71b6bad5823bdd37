//go:build !linux

package nvme

import (
	"context"
	"fmt"
	"runtime"
)

// IdentifyController is only implemented on Linux.
func IdentifyController(ctx context.Context, devicePath string) ([]byte, error) {
	return nil, fmt.Errorf("nvme: identify %s: %w on %s", devicePath, ErrUnsupportedOS, runtime.GOOS)
}

// IdentifyNamespace is only implemented on Linux.
func IdentifyNamespace(ctx context.Context, devicePath string, nsid uint32) ([]byte, error) {
	return nil, fmt.Errorf("nvme: identify %s: %w on %s", devicePath, ErrUnsupportedOS, runtime.GOOS)
}
