package sysfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReadAttr(t *testing.T) {
	dir := t.TempDir()
	long := bytes.Repeat([]byte("0123456789abcdef"), 700) // beyond one page: a fixture, not a kernel attribute
	for name, want := range map[string][]byte{"empty": {}, "size": []byte("7814037168\n"), "long": long} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readAttr(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
		}
	}
	if _, err := readAttr(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing attribute: %v, want fs.ErrNotExist", err)
	}
	if _, err := readAttr(dir); err == nil {
		t.Error("reading a directory succeeded")
	}
}
