package nvme

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

var (
	// ErrNotNVMe means the device answered the NVMe ioctl with ENOTTY/EINVAL.
	ErrNotNVMe = errors.New("not an NVMe device")
	// ErrPermission means opening the device or the admin command was refused.
	ErrPermission = errors.New("permission denied (identify needs root or CAP_SYS_ADMIN)")
	// ErrUnsupportedOS is returned by the non-Linux stubs.
	ErrUnsupportedOS = errors.New("NVMe admin passthrough is not supported")
	// ErrNoCharDevice means the host root has no /dev/nvmeN for the controller (a fixture
	// tree, a container without the host's /dev), or a recording has no page for it: a fact
	// about the host, not the drive.
	ErrNoCharDevice = errors.New("no controller character device")
)

// Identifier returns raw Identify pages for a controller such as "nvme0".
// Both the live ioctl and recorded pages implement it so callers can be
// tested without hardware.
type Identifier interface {
	Controller(ctx context.Context, ctrl string) ([]byte, error)
	Namespace(ctx context.Context, ctrl string, nsid uint32) ([]byte, error)
}

// DeviceIdentifier issues Identify ioctls against <Root>/dev/<ctrl>; Root is
// the host root as mounted in the agent's container ("/" on the host).
type DeviceIdentifier struct{ Root string }

func (d DeviceIdentifier) Controller(ctx context.Context, ctrl string) ([]byte, error) {
	p, err := d.path(ctrl)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("nvme: %w: %w", ErrNoCharDevice, err)
	}
	return IdentifyController(ctx, p)
}

func (d DeviceIdentifier) Namespace(ctx context.Context, ctrl string, nsid uint32) ([]byte, error) {
	p, err := d.path(ctrl)
	if err != nil {
		return nil, err
	}
	return IdentifyNamespace(ctx, p, nsid)
}

func (d DeviceIdentifier) path(ctrl string) (string, error) {
	if err := checkName(ctrl); err != nil {
		return "", err
	}
	root := d.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, "dev", ctrl), nil
}

// RecordedIdentifier serves pages captured earlier, laid out as
// <Dir>/<ctrl>/id-ctrl.bin and <Dir>/<ctrl>/id-ns-<nsid>.bin.
type RecordedIdentifier struct{ Dir string }

func (r RecordedIdentifier) Controller(ctx context.Context, ctrl string) ([]byte, error) {
	return r.read(ctx, ctrl, "id-ctrl.bin")
}

func (r RecordedIdentifier) Namespace(ctx context.Context, ctrl string, nsid uint32) ([]byte, error) {
	return r.read(ctx, ctrl, "id-ns-"+strconv.FormatUint(uint64(nsid), 10)+".bin")
}

func (r RecordedIdentifier) read(ctx context.Context, ctrl, file string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(ctrl); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, ctrl, file))
	if errors.Is(err, os.ErrNotExist) {
		// Nothing recorded stands for a host without the controller's character device.
		return nil, fmt.Errorf("nvme: recorded identify: %w: %w", ErrNoCharDevice, err)
	}
	if err != nil {
		return nil, fmt.Errorf("nvme: recorded identify: %w", err)
	}
	if len(b) != IdentifySize {
		return nil, fmt.Errorf("nvme: recorded identify %s/%s: %d bytes, want %d", ctrl, file, len(b), IdentifySize)
	}
	return b, nil
}

// checkName keeps a controller name from escaping the directory it names.
func checkName(ctrl string) error {
	if ctrl == "" || ctrl == "." || ctrl == ".." || filepath.Base(ctrl) != ctrl {
		return fmt.Errorf("nvme: invalid controller name %q", ctrl)
	}
	return nil
}
