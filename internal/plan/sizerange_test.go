package plan

import (
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestParseSizeRange(t *testing.T) {
	for _, tc := range []struct {
		in        string
		low, high int64
		err       bool
	}{
		{"", 0, 0, false},
		{"1T:", 1e12, 0, false},
		{":500Gi", 0, 500 << 30, false},
		{"3T:8T", 3e12, 8e12, false},
		{"15360G", 15360e9, 15360e9, false},
		{":", 0, 0, true},
		{"8T:3T", 0, 0, true},
		{"big:", 0, 0, true},
		{"1T:2T:3T", 0, 0, true},
		// Bounds the CRD refuses: negative, above 1Ei (int64 would overflow), 0 as HIGH or alone.
		{"-1Ti:", 0, 0, true},
		{":-5", 0, 0, true},
		{"100Ei:", 0, 0, true},
		{":1Ei", 0, 1 << 60, false},
		{"0", 0, 0, true},
		{"1T:0", 0, 0, true},
		{"0:1T", 0, 1e12, false},
	} {
		r, err := ParseSizeRange(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: err = %v, want error %t", tc.in, err, tc.err)
			continue
		}
		if !tc.err && (r.Low != tc.low || r.High != tc.high) {
			t.Errorf("%q = %+v, want {%d %d}", tc.in, r, tc.low, tc.high)
		}
	}
	r, _ := ParseSizeRange("1T:2T")
	if !r.Contains(1e12) || !r.Contains(2e12) || r.Contains(2e12+1) || r.Contains(1e12-1) {
		t.Error("range bounds must be inclusive")
	}
}

func FuzzParseSizeRange(f *testing.F) {
	for _, s := range []string{"1T:", ":500Gi", "3T:8T", "x", ":", "1e3:1e2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseSizeRange(s)
		if err == nil && r.High != 0 && r.Low > r.High {
			t.Fatalf("%q accepted with low %d above high %d", s, r.Low, r.High)
		}
		if err == nil && (r.Low < 0 || r.High < 0) {
			t.Fatalf("%q accepted with a negative bound: %+v", s, r)
		}
	})
}

func TestSizeMismatchReason(t *testing.T) {
	const size = 512110190592 // a 512 GB drive, as sysfs counts it
	for _, tc := range []struct {
		spec string
		n    int64
		want string
	}{
		{"1T:", size, "size 512.11 GB is below the size range 1T and up"},
		{":500G", size, "size 512.11 GB is above the size range up to 500G"},
		{"1T:4T", size, "size 512.11 GB is below the size range 1T–4T"},
		{"100G:500G", size, "size 512.11 GB is above the size range 100G–500G"},
		{"1Ti", size, "size 512.11 GB is not the selector's size 1Ti (1.10 TB)"},
		{"10Gi:", 0, "size 0 B is below the size range 10Gi and up"},
		{"", size, ""},
		{"500G:1T", size, ""},
	} {
		d := &prismv1.Device{SizeBytes: tc.n}
		got := mismatch(d, &prismv1.DeviceSelector{Tiers: []prismv1.Tier{d.Tier}, Size: tc.spec}, d.Tier)
		if got != tc.want {
			t.Errorf("size %q, %d bytes: reason %q, want %q", tc.spec, tc.n, got, tc.want)
		}
	}
}
