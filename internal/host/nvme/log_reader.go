package nvme

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// NSIDAll addresses a log page to the controller as a whole (FFFFFFFFh).
const NSIDAll uint32 = 0xFFFFFFFF

// maxLogLength bounds one read; every page the agent reads is 512 bytes.
const maxLogLength = 1 << 20

// LogReader returns raw log pages of a controller such as "nvme0". The live
// ioctl and recorded pages both implement it so callers test without drives.
type LogReader interface {
	Log(ctx context.Context, ctrl string, logID uint8, length int) ([]byte, error)
}

// DeviceLogReader issues Get Log Page for the whole controller (NSIDAll)
// against <Root>/dev/<ctrl>; Root is the host root as mounted in the agent's
// container ("/" on the host).
type DeviceLogReader struct{ Root string }

func (d DeviceLogReader) Log(ctx context.Context, ctrl string, logID uint8, length int) ([]byte, error) {
	p, err := DeviceIdentifier{Root: d.Root}.path(ctrl)
	if err != nil {
		return nil, err
	}
	return GetLogPage(ctx, p, NSIDAll, logID, length)
}

// RecordedLogReader serves pages captured earlier, laid out as
// <Dir>/<ctrl>/log-<id>.bin with the id in two lower-case hex digits
// (log-02.bin, log-c0.bin, log-ca.bin).
type RecordedLogReader struct{ Dir string }

// LogFileName is the recorded file name of a log page.
func LogFileName(logID uint8) string { return fmt.Sprintf("log-%02x.bin", logID) }

// Log returns the first length bytes of the recording; a recording shorter
// than length is an error, as a real read always returns length bytes.
func (r RecordedLogReader) Log(ctx context.Context, ctrl string, logID uint8, length int) ([]byte, error) {
	return r.read(ctx, ctrl, logID, LogFileName(logID), length)
}

// read returns the first length bytes of the recording <Dir>/<ctrl>/<name> of log logID.
func (r RecordedLogReader) read(ctx context.Context, ctrl string, logID uint8, name string, length int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(ctrl); err != nil {
		return nil, err
	}
	if err := checkLogLength(length); err != nil {
		return nil, fmt.Errorf("nvme: recorded log %#02x: %w", logID, err)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, ctrl, name))
	if err != nil {
		return nil, fmt.Errorf("nvme: recorded log: %w", err)
	}
	if len(b) < length {
		return nil, fmt.Errorf("nvme: recorded log %s/%s: %d bytes, want %d", ctrl, name, len(b), length)
	}
	return b[:length:length], nil
}

// checkLogLength enforces what Get Log Page can express: whole dwords
// (NUMD counts dwords) and a sane upper bound.
func checkLogLength(length int) error {
	if length <= 0 || length%4 != 0 || length > maxLogLength {
		return fmt.Errorf("log length %d must be a positive multiple of 4 up to %d", length, maxLogLength)
	}
	return nil
}
