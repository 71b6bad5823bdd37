package casadm

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// addTranscripts seeds a fuzz target with the stdout of testdata files.
func addTranscripts(f *testing.F, glob string) {
	files, _ := filepath.Glob("testdata/" + glob)
	for _, file := range files {
		f.Add(readTranscript(f, filepath.Base(file)).stdout)
	}
}

func requireParseError(t *testing.T, err error) {
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("not a ParseError: %v", err)
	}
	_ = pe.Error()
}

// FuzzParseList: never panics; errors are ParseErrors; after one CSV()
// round (which normalises percentages to casadm's one decimal) the list is
// stable.
func FuzzParseList(f *testing.F) {
	addTranscripts(f, "list_*.txt")
	f.Add("type,id,disk,status,write policy,device\ncore pool,-,-,-,-,-\ncore,-,\"a,b\",Detached,-,-\n")
	f.Fuzz(func(t *testing.T, in string) {
		l, err := ParseList(strings.NewReader(in))
		if err != nil {
			requireParseError(t, err)
			return
		}
		l2, err := ParseList(strings.NewReader(l.CSV()))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", l.CSV(), err)
		}
		if len(l2.Caches) != len(l.Caches) || len(l2.Pool) != len(l.Pool) {
			t.Fatalf("round trip changed the shape: %+v -> %+v", l, l2)
		}
		l3, err := ParseList(strings.NewReader(l2.CSV()))
		if err != nil || !reflect.DeepEqual(l2, l3) {
			t.Fatalf("not stable: %+v -> %+v (%v)", l2, l3, err)
		}
	})
}

// FuzzParseStats: never panics; errors are ParseErrors; every record has
// at most one conf section and only non-negative, finite percentages.
func FuzzParseStats(f *testing.F) {
	addTranscripts(f, "casadm_P_*.txt")
	f.Add("Dirty [%],Dirty [4KiB Blocks],Core Id\n1.5,3,0\n")
	f.Fuzz(func(t *testing.T, in string) {
		ss, err := ParseStats(strings.NewReader(in))
		if err != nil {
			requireParseError(t, err)
			return
		}
		if len(ss) == 0 {
			t.Fatal("no records and no error")
		}
		for _, s := range ss {
			n := 0
			for _, set := range []bool{s.Cache != nil, s.Core != nil, s.Class != nil} {
				if set {
					n++
				}
			}
			if n > 1 {
				t.Fatalf("%d conf sections", n)
			}
		}
	})
}

// FuzzParseParams: never panics; accepted parameters write back to the
// same parameters.
func FuzzParseParams(f *testing.F) {
	addTranscripts(f, "casadm_G_*.txt")
	f.Add("Parameter name,Value\n\"a,b\",\"x\"\"y\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := ParseParams(strings.NewReader(in))
		if err != nil {
			requireParseError(t, err)
			return
		}
		back, err := ParseParams(strings.NewReader(ps.CSV()))
		if err != nil || !reflect.DeepEqual(back, ps) {
			t.Fatalf("round trip: %+v -> %+v (%v)", ps, back, err)
		}
	})
}

// FuzzParseVersion: never panics; an accepted CLI version has year.month.
func FuzzParseVersion(f *testing.F) {
	addTranscripts(f, "casadm_V_*.txt")
	raw, _ := os.ReadFile("testdata/casadm_V_o_csv.txt")
	f.Add(string(raw))
	f.Fuzz(func(t *testing.T, in string) {
		v, err := ParseVersion(strings.NewReader(in))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		if v.CLI.Raw == "" || v.CLI.Major < 0 || v.CLI.Minor < 0 {
			t.Fatalf("accepted %+v", v)
		}
	})
}
