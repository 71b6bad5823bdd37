package bytesize

import (
	"math"
	"testing"
)

func TestSI(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{999, "999 B"},
		{1000, "1.00 kB"},
		{512110190592, "512.11 GB"},
		{3840755982336, "3.84 TB"},
		{1e12, "1.00 TB"},
		{math.MaxInt64, "9.22 EB"},
		{-5, "-5 B"},
	} {
		if got := SI(tc.n); got != tc.want {
			t.Errorf("SI(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestIEC(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{1 << 20, "1.0 MiB"},
		{1181116006, "1.1 GiB"},
		{1 << 40, "1.0 TiB"},
		{math.MaxInt64, "8.0 EiB"},
	} {
		if got := IEC(tc.n); got != tc.want {
			t.Errorf("IEC(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
