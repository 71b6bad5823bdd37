package smart

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// Argv is `smartctl -j -a DEVICE`: every SMART section, as JSON.
func Argv(device string) []string { return []string{"smartctl", "-j", "-a", device} }

// Smartctl runs `smartctl -j -a <root>/dev/<disk>` through the executor.
type Smartctl struct {
	Exec hostexec.Executor
	Root string // host root holding dev/
}

// SmartctlJSON runs smartctl. Its exit status is a bit mask: bits 0-1 mean the command failed;
// the others report drive conditions and still come with full JSON.
func (s Smartctl) SmartctlJSON(ctx context.Context, disk string) ([]byte, error) {
	out, err := s.Exec.Run(ctx, Argv(filepath.Join(s.Root, "dev", disk)), nil)
	var exitErr *hostexec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode&exitNoData == 0 && len(out) > 0 {
		err = nil
	}
	return out, err
}
