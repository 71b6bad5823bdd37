package drivedb

import (
	"bytes"
	"strings"
	"testing"
)

const maxFuzzLookups = 32

// FuzzParse checks Parse never panics, that every error it returns points at
// drives.csv, and that whatever it accepts satisfies the row invariants.
func FuzzParse(f *testing.F) {
	f.Add(drivesCSV)
	f.Add([]byte(testHeader + "ACME X1,Acme,X1,QLC,Capacity,1000,0.5,100,5,16384,https://example.com/x\n"))
	f.Add([]byte(testHeader + "\"ACME\nX1\",Acme,X1,QLC,Capacity,,,,,,https://example.com/x\n"))
	f.Add([]byte(testHeader + "ACME X1,Acme,X1,TLC,Capacity,,1.,,,,https://example.com/x\n"))
	f.Add([]byte("\uFEFF" + testHeader))
	f.Add([]byte("# only a comment\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := Parse(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "drives.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for i, e := range db.Entries() {
			if tierOf[e.Media] != e.Tier || e.Source == "" || e.RatedDWPD < 0 || e.RatedTBW < 0 {
				t.Fatalf("accepted an invalid row: %+v", e)
			}
			// Each Lookup scans every row; cap the calls so a mutated file
			// with thousands of rows does not make this body quadratic.
			if i < maxFuzzLookups {
				db.Lookup(e.ModelPattern, e.CapacityBytes)
			}
		}
	})
}

// FuzzLookup checks Lookup never panics and is deterministic on the embedded
// database.
func FuzzLookup(f *testing.F) {
	for _, tc := range realModels {
		f.Add(tc.model, tc.size)
	}
	f.Add("", uint64(0))
	f.Add("*", ^uint64(0))
	f.Add("\xff\xfe INTEL\x00SSDPE21K375GA", uint64(375083606016))
	db := Default()
	f.Fuzz(func(t *testing.T, model string, size uint64) {
		e1, ok1 := db.Lookup(model, size)
		e2, ok2 := db.Lookup(model, size)
		if ok1 != ok2 || e1 != e2 {
			t.Fatalf("Lookup(%q, %d) not deterministic", model, size)
		}
		if ok1 && e1.Source == "" {
			t.Fatalf("matched a row without a source: %+v", e1)
		}
	})
}
