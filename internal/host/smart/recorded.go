package smart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RecordedFileName is where a recorded report of a disk lives: <dir>/<disk>/smartctl.json.
const RecordedFileName = "smartctl.json"

// RecordedReader serves recorded `smartctl -j -a` reports instead of running smartctl, for
// fixture hosts and the demo (as nvme.RecordedLogReader serves recorded log pages).
type RecordedReader struct {
	Dir string
}

// SmartctlJSON returns the recorded report of disk (a kernel name such as sda).
func (r RecordedReader) SmartctlJSON(_ context.Context, disk string) ([]byte, error) {
	if disk == "" || disk != filepath.Base(disk) || strings.HasPrefix(disk, ".") {
		return nil, fmt.Errorf("smart: recorded report: disk %q is not a kernel device name", disk)
	}
	return os.ReadFile(filepath.Join(r.Dir, disk, RecordedFileName))
}
