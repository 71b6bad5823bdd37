//go:build linux

package ceph

import (
	"os"
	"path/filepath"
	"testing"
)

// TestScanRace pins which ceph-volume failures cephVolume runs again: only the /sys/block
// race, and only when the log's new part shows it in argument validation (CI, 2026-11-26:
// another package's loop10p1 vanished while raw prepare validated --data).
func TestScanRace(t *testing.T) {
	const out = "-->  FileNotFoundError: [Errno 2] No such file or directory: '/sys/block/loop10/loop10p1'\n"
	const validating = `  File "/usr/lib/python3/dist-packages/ceph_volume/util/arg_validators.py", line 83, in __call__
    super().get_device(dev_path)
FileNotFoundError: [Errno 2] No such file or directory: '/sys/block/loop10/loop10p1'
`
	const mkfs = `  File "/usr/lib/python3/dist-packages/ceph_volume/devices/raw/prepare.py", line 120, in safe_prepare
FileNotFoundError: [Errno 2] No such file or directory: '/sys/block/loop10/loop10p1'
`
	for _, tc := range []struct {
		name      string
		out       string
		earlier   string // the log before this run
		this      string // what this run appended
		wantAgain bool
	}{
		{"validation race", out, "", validating, true},
		{"validation race after earlier runs", out, "older run\n", validating, true},
		{"race only in an earlier run's traceback", out, validating, mkfs, false},
		{"race after validation", out, "", mkfs, false},
		{"another error", "-->  RuntimeError: no available devices\n", "", validating, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "ceph-volume.log")
			if err := os.WriteFile(log, []byte(tc.earlier+tc.this), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := scanRace(tc.out, log, int64(len(tc.earlier))); got != tc.wantAgain {
				t.Errorf("scanRace = %v, want %v", got, tc.wantAgain)
			}
		})
	}
}
