package opencas

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// fakeCasadm answers -L with no caches and records every argv; writes fail with stderr.
type fakeCasadm struct {
	ran [][]string
}

func (f *fakeCasadm) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	f.ran = append(f.ran, argv)
	if argv[1] == "-L" {
		return []byte("No caches running\n"), nil
	}
	return []byte("some stdout\n"), &hostexec.ExitError{Argv: argv, ExitCode: 1, Stderr: "Error inserting cache 1\nOld metadata found on device"}
}

func TestRunnerDryRunAndErrors(t *testing.T) {
	root := t.TempDir()
	f := &fakeCasadm{}
	res := Runner{Exec: f, HostRoot: root, DryRun: true}.Reconcile(context.Background(), desired())
	if res.Err != nil || res.Changed || len(res.Ran) != 0 || len(res.Pending) != 9 || len(f.ran) != 1 {
		t.Fatalf("dry run: %+v, ran %v", res, f.ran)
	}
	if _, err := os.Stat(filepath.Join(root, ConfPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run wrote the conf: %v", err)
	}
	res = Reconcile(context.Background(), f, root, desired())
	if res.Err == nil || !strings.Contains(res.Err.Error(), "Old metadata found on device") || !strings.Contains(res.Err.Error(), "some stdout") ||
		!res.Changed || len(res.Ran) != 1 {
		t.Errorf("failed step: %+v", res)
	}
}
