//go:build linux

package ceph

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newEnv skips unless root, installs the packages, and makes the run's directory under
// /var/tmp (removed at the end unless PRISM_CEPH_KEEP is set; daemon logs are printed when
// the test fails). Its context ends 2 minutes before the test's deadline: a test killed by
// -timeout runs none of its cleanups.
func newEnv(t *testing.T) *env {
	if os.Geteuid() != 0 {
		t.Skipf("needs root (loop devices, ceph-volume, mount namespaces); running as euid %d. Run: sudo go test ./test/ceph/ -count=1 -timeout 15m -v", os.Geteuid())
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Fatalf("no loop driver (/dev/loop-control): %v", err)
	}
	ctx := t.Context()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-2*time.Minute))
		t.Cleanup(cancel)
	}
	e := &env{t: t, ctx: ctx}
	e.ensurePackages()
	logVersions(e)

	// /var/tmp, not /tmp: the sparse files receive a few GiB, and /tmp may be a tmpfs.
	dir, err := os.MkdirTemp("/var/tmp", "prism-ceph-")
	if err != nil {
		t.Fatal(err)
	}
	e.dir = dir
	t.Cleanup(func() {
		if os.Getenv("PRISM_CEPH_KEEP") != "" {
			t.Logf("PRISM_CEPH_KEEP is set: keeping %s", dir)
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	t.Logf("working directory %s", dir)
	// Runs after the daemons have stopped (cleanups run last-registered first).
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "log", "*"))
		for _, f := range logs {
			if data, err := os.ReadFile(f); err == nil && len(strings.TrimSpace(string(data))) > 0 {
				t.Logf("--- %s (last lines)\n%s", f, tail(strings.TrimSpace(string(data)), 25))
			}
		}
	})
	return e
}
