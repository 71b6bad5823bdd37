package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFixturesUpToDate fails when testdata drifts from recordings.go.
func TestFixturesUpToDate(t *testing.T) {
	root := filepath.Join("..", "..", "testdata")
	for _, r := range recordings {
		for name, want := range render(r) {
			got, err := os.ReadFile(filepath.Join(root, r.Dir, name))
			if err != nil {
				t.Fatalf("%s/%s: %v (run go generate ./internal/host/smart/)", r.Dir, name, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s is stale: run go generate ./internal/host/smart/", r.Dir, name)
			}
		}
	}
}

func TestParseRow(t *testing.T) {
	r := parseRow("194 Temperature_Celsius     -O---K   066   056   000    -    34 (Min/Max 18/44)")
	if r != (row{194, "Temperature_Celsius", 66, 56, 0, "34 (Min/Max 18/44)"}) {
		t.Fatalf("%+v", r)
	}
}
