package provision

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/lvm"
)

func TestIntentRecord(t *testing.T) {
	const guid = "8F3C1E52-6A0B-4C1D-9E2F-0123456789AB"
	r := Runner{IntentDir: t.TempDir()}
	if r.hasIntent(guid, "prism-db-49bd38895b20-00") {
		t.Fatal("an intent before any record")
	}
	if err := r.recordIntent(guid, "prism-db-49bd38895b20-00"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(r.IntentDir, "lvm-intent", strings.ToLower(guid)))
	if err != nil || string(got) != "partuuid 8f3c1e52-6a0b-4c1d-9e2f-0123456789ab\npv 8f3c1e-526a-0b4c-1d9e-2f01-2345-6789ab\nvg prism-db-49bd38895b20-00\n" {
		t.Fatalf("record %q, %v", got, err)
	}
	for _, tc := range []struct {
		guid, vg string
		want     bool
	}{
		{guid, "prism-db-49bd38895b20-00", true},
		{strings.ToLower(guid), "prism-db-49bd38895b20-00", true},
		{guid, "prism-db-49bd38895b20-01", false},
		{"1b2c3d4e-5f60-4172-8394-a5b6c7d8e9f0", "prism-db-49bd38895b20-00", false},
		{"", "prism-db-49bd38895b20-00", false},
	} {
		if got := r.hasIntent(tc.guid, tc.vg); got != tc.want {
			t.Errorf("hasIntent(%q, %q) = %v, want %v", tc.guid, tc.vg, got, tc.want)
		}
	}
	if (Runner{}).hasIntent(guid, "prism-db-49bd38895b20-00") {
		t.Error("an intent without an intent dir")
	}
	entries, _ := os.ReadDir(filepath.Join(r.IntentDir, "lvm-intent"))
	if len(entries) != 1 {
		t.Errorf("%d files in the record directory, want the record alone", len(entries))
	}
}

// TestReadTornHead reads a 4 MiB partition (a file) whose head is lvm's torn-vg fixture.
func TestReadTornHead(t *testing.T) {
	zr, err := gzip.NewReader(bytes.NewReader(tornMust(os.ReadFile(filepath.Join("..", "..", "host", "lvm", "testdata", "torn-vg-head.bin.gz")))))
	if err != nil {
		t.Fatal(err)
	}
	head := tornMust(io.ReadAll(zr))
	file := filepath.Join(t.TempDir(), "part")
	if err := os.WriteFile(file, append(head, make([]byte, 3<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() (lvm.Head, error) {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return readTornHead(f)
	}
	h, err := read()
	if err != nil || h.PVUUID != "8f3c1e-526a-0b4c-1d9e-2f01-2345-6789ab" || h.VGName != "prism-db-49bd38895b20-00" {
		t.Fatalf("got %+v, %v", h, err)
	}
	f, _ := os.OpenFile(file, os.O_WRONLY, 0)
	_, _ = f.WriteAt([]byte{1}, 4<<20-100)
	f.Close()
	if _, err := read(); err == nil || !strings.Contains(err.Error(), "last MiB is not zeros") {
		t.Fatalf("a tail with data: %v", err)
	}
}

func tornMust[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
