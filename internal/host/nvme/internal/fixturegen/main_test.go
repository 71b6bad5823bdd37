package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFixturesUpToDate fails when testdata drifts from recordings.go, so the
// binaries can only change through the generator.
func TestFixturesUpToDate(t *testing.T) {
	root := filepath.Join("..", "..", "testdata")
	for _, r := range all() {
		for name, want := range render(r) {
			got, err := os.ReadFile(filepath.Join(root, r.Dir, name))
			if err != nil {
				t.Fatalf("%s/%s: %v (run go generate ./internal/host/nvme/)", r.Dir, name, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s is stale: run go generate ./internal/host/nvme/", r.Dir, name)
			}
		}
		if r.NS == nil {
			if _, err := os.Stat(filepath.Join(root, r.Dir, "id-ns-1.bin")); err == nil {
				t.Errorf("%s/id-ns-1.bin exists but nothing was recorded for it", r.Dir)
			}
		}
	}
}
