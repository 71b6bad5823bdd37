package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFixturesUpToDate fails when testdata/logs drifts from recordings.go, so
// the binaries can only change through the generator.
func TestFixturesUpToDate(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "logs")
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
	}
}

// TestRecordedFieldsHaveLayouts catches a misspelt field name before it
// panics in the generator.
func TestRecordedFieldsHaveLayouts(t *testing.T) {
	for _, r := range all() {
		for _, l := range r.Logs {
			for _, fr := range l.Fields {
				if _, ok := specFor(l.ID)[fr.Name]; !ok {
					t.Errorf("%s log %#02x: field %q has no layout", r.Dir, l.ID, fr.Name)
				}
			}
			if 12*len(l.Entries) > l.Size {
				t.Errorf("%s log %#02x: %d entries do not fit in %d bytes", r.Dir, l.ID, len(l.Entries), l.Size)
			}
		}
	}
}
