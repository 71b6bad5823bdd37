//go:build linux

package signature

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// On Linux DetectFile maps the head and the tail, and finds what reading them finds.
func TestDetectMappedFindsWhatReadsFind(t *testing.T) {
	const size = 8*mib + 100<<10
	d := dev(size).put(0x100000, []byte("SKUL\xba\xbe\x00\x02")).put(size-zfsLabelSize-size%zfsLabelSize+zfsUberOffset, zfsRing())
	p := filepath.Join(t.TempDir(), "dev.img")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off, b := range d.parts {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	got, mapped, err := detectMapped(f, size)
	if err != nil || !mapped {
		t.Fatalf("detectMapped: %v, mapped %v, %v", got, mapped, err)
	}
	want, err := Detect(d, size)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("mapped %v, read %v (want crypto_LUKS and zfs_member)", got, want)
	}
}

// A page under the mapping that cannot be read (here: beyond the end of a file shorter than
// the size Detect was given; on a disk, an I/O error) faults. That is a read error for the
// caller, which makes the device ineligible; the process does not crash.
func TestDetectMappedFaultIsAReadError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "short.img")
	if err := os.WriteFile(p, make([]byte, mib), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sigs, mapped, err := detectMapped(f, 8*mib)
	if !mapped || err == nil || !strings.Contains(err.Error(), "fault") {
		t.Fatalf("detectMapped of a file shorter than its size: %v, mapped %v, %v; want a fault reported as an error", sigs, mapped, err)
	}
	// The goroutine is back to crashing on faults elsewhere (its setting restored) and
	// works on: a good file right after.
	if _, err := DetectPath(p); err != nil {
		t.Errorf("DetectPath after a fault: %v", err)
	}
}

// What cannot be mapped (a character device without mmap) is read instead.
func TestDetectMappedFallsBackToReads(t *testing.T) {
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if sigs, mapped, err := detectMapped(f, 4096); mapped || err != nil || sigs != nil {
		t.Errorf("detectMapped(/dev/null): %v, mapped %v, %v; want not mapped", sigs, mapped, err)
	}
}
