package signature

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("EIO") }

func TestFirstNonZero(t *testing.T) {
	const size = 8 << 20
	at := func(offs ...int64) []byte {
		b := make([]byte, size)
		for _, o := range offs {
			b[o] = 0x5a
		}
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want int64
	}{
		{"all zero", at(), -1},
		{"first byte", at(0), 0},
		{"inside the first MiB", at(4096 + 7), 4096 + 7},
		{"the last byte", at(size - 1), size - 1},
		{"in the tail's first byte", at(size - ZeroSpan), size - ZeroSpan},
		{"the middle only (not looked at)", at(4 << 20), -1},
		{"head before tail", at(size-1, 100), 100},
	} {
		got, err := FirstNonZero(bytes.NewReader(tc.data), size, ZeroSpan)
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	// A device smaller than the span is read whole, once.
	if got, err := FirstNonZero(bytes.NewReader([]byte{0, 0, 3}), 3, ZeroSpan); err != nil || got != 2 {
		t.Errorf("small device: %d, %v", got, err)
	}
	if _, err := FirstNonZero(failingReader{}, size, ZeroSpan); err == nil || !strings.Contains(err.Error(), "EIO") {
		t.Errorf("a failed read gave %v, want the error", err)
	}
}
