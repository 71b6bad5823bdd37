package cephdaemon

import (
	"os"
	"path/filepath"
	"testing"
)

// seed adds every recorded reply as a fuzz seed.
func seed(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "ceph-*", "*.out"))
	if len(files) == 0 {
		f.Fatal("no recorded replies under testdata")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// Parsers never panic and never return values they did not read: sizes are non-negative by
// type, and a parse that succeeded parses the same again.
func FuzzParseBlueFSStats(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseBlueFSStats(string(data))
		if err != nil {
			return
		}
		if len(st.Devices) == 0 || (len(st.Columns) == 0 && st.Totals == nil) {
			t.Fatalf("success without a device, or without a matrix or totals: %+v", st)
		}
	})
}

func FuzzParseKVStats(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseKVStats(data)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Level < 0 || r.ColumnFamily == "" {
				t.Fatalf("row %+v", r)
			}
		}
	})
}

func FuzzParsePerfDump(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, logger := range []string{"bluefs", "bluestore"} {
			_, _ = ParsePerfDump(data, logger)
		}
	})
}

func FuzzParseRocksDBOptions(f *testing.F) {
	seed(f)
	f.Add([]byte("a=1,b={c=2;d=3};e=4"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseRocksDBOptions(string(data))
		if err != nil {
			return
		}
		for k := range m {
			if k == "" {
				t.Fatalf("empty key from %q", data)
			}
		}
	})
}
