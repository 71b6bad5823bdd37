package hostexec

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// DirectReader answers every offset and length as a plain read of the same file does, the
// device's end included (a size that is no multiple of the alignment).
func TestDirectReaderReadsAnyRange(t *testing.T) {
	const size = 3*4096 + 1536
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	path := filepath.Join(t.TempDir(), "dev")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenDirect(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := DirectReader{f}
	for _, c := range []struct{ off, n int64 }{
		{0, 1}, {0, 4096}, {1, 4096}, {4095, 2}, {5000, 7000}, {size - 10, 10}, {size - 1, 1}, {0, size},
	} {
		got := make([]byte, c.n)
		if n, err := rd.ReadAt(got, c.off); err != nil || n != int(c.n) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v", c.n, c.off, n, err)
		}
		if !bytes.Equal(got, data[c.off:c.off+c.n]) {
			t.Fatalf("ReadAt(%d bytes at %d) differs from the file", c.n, c.off)
		}
	}
	// Past the end: what there is, then io.EOF, as os.File.ReadAt says it.
	got := make([]byte, 100)
	n, err := rd.ReadAt(got, size-40)
	if n != 40 || !errors.Is(err, io.EOF) || !bytes.Equal(got[:40], data[size-40:]) {
		t.Fatalf("ReadAt across the end = %d, %v; want 40 bytes and io.EOF", n, err)
	}
	if n, err := rd.ReadAt(got, size+4096); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("ReadAt past the end = %d, %v; want 0, io.EOF", n, err)
	}
}
