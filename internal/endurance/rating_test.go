package endurance

import (
	"strings"
	"testing"
)

func TestDeriveRating(t *testing.T) {
	tests := []struct {
		name       string
		r          Rating
		dwpd, tbw  float64
		derivedD   bool
		derivedT   bool
		knownD     bool
		knownT     bool
		noteSubstr string
	}{
		// Lenovo's P4500 1.0 TB guide: 1,380 TB over 5 years. 1380 ÷ 1.0 ÷ (365 × 5) = 0.7561643… DWPD
		// (the guide rounds it to "0.75 DWPD").
		{name: "tbw only", r: Rating{CapacityBytes: 1e12, RatedTBW: 1380, WarrantyYears: 5},
			dwpd: 1380.0 / 1825, tbw: 1380, derivedD: true, knownD: true, knownT: true},
		// 0.4 DWPD × 15.36 TB × 365 × 5 = 11,212.8 TB.
		{name: "dwpd only", r: Rating{CapacityBytes: 15_360_000_000_000, RatedDWPD: 0.4, WarrantyYears: 5},
			dwpd: 0.4, tbw: 11212.8, derivedT: true, knownD: true, knownT: true},
		// Both published and consistent: 1.38 PB ÷ 1 TB ÷ 1825 d = 0.756 vs 0.75 (within 10 %).
		{name: "both agree", r: Rating{CapacityBytes: 1e12, RatedDWPD: 0.75, RatedTBW: 1380, WarrantyYears: 5},
			dwpd: 0.75, tbw: 1380, knownD: true, knownT: true},
		// The drive database's P4800X 375 GB case: 12.3 PB ÷ 0.375 TB ÷ 1825 d = 17.97 DWPD, not 30.
		{name: "both disagree", r: Rating{CapacityBytes: 375e9, RatedDWPD: 30, RatedTBW: 12300, WarrantyYears: 5},
			dwpd: 30, tbw: 12300, knownD: true, knownT: true, noteSubstr: "implies 17.97 DWPD over 5 years, not the published 30"},
		// Without warranty years or capacity nothing can be derived.
		{name: "no years", r: Rating{CapacityBytes: 1e12, RatedDWPD: 1}, dwpd: 1, knownD: true},
		{name: "no capacity", r: Rating{RatedTBW: 100, WarrantyYears: 5}, tbw: 100, knownT: true},
		{name: "nothing", r: Rating{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, notes := deriveRating(tt.r)
			if u.DWPD.Known != tt.knownD || u.TBW.Known != tt.knownT || u.DWPDDerived != tt.derivedD || u.TBWDerived != tt.derivedT {
				t.Fatalf("got %+v", u)
			}
			if tt.knownD {
				near(t, "DWPD", u.DWPD, tt.dwpd)
			}
			if tt.knownT {
				near(t, "TBW", u.TBW, tt.tbw)
			}
			joined := strings.Join(notes, "\n")
			if (tt.noteSubstr == "") != (joined == "") || !strings.Contains(joined, tt.noteSubstr) {
				t.Errorf("notes %q, want %q", notes, tt.noteSubstr)
			}
		})
	}
}
