//go:build linux

package foreign

import (
	"os"
	"testing"
)

// TestDigestSeesEveryWrite checks the digest's shortcut (holes of the backing file hashed as
// zeros, unread) against a full read of the device, after writes made through the device
// and left unsynced, as a partitioner's would be.
func TestDigestSeesEveryWrite(t *testing.T) {
	e := setup(t)
	l := e.attach(t, "digest", 64*mib)
	same := func(what string, d digest) {
		t.Helper()
		if full := fullDigest(t, l); full.diff(d) != "" {
			t.Fatalf("%s: the digest and a full read differ: %s", what, full.diff(d))
		}
	}
	d0 := e.digest(t, l)
	same("empty", d0)

	// A write through the device, not synced: the digest's fsync must bring it to the file.
	f, err := os.OpenFile(l.dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(randomBytes(t, 4096), 37*mib+512); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	d1 := e.digest(t, l)
	if got, want := d0.diff(d1), "1 MiB changed: MiB 37"; got != want {
		t.Fatalf("after writing 4 KiB into MiB 37: %q, want %q", got, want)
	}
	same("after a write", d1)

	// Zeros written into a hole change no byte: the digest must not see a change.
	writeAt(t, l, 50*mib, make([]byte, mib))
	d2 := e.digest(t, l)
	if d := d1.diff(d2); d != "" {
		t.Fatalf("zeros written into a hole: %s", d)
	}
	same("after writing zeros", d2)
}
