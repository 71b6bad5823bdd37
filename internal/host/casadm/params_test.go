package casadm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseParamsReal(t *testing.T) {
	for file, want := range map[string]Params{
		"casadm_G_n_cleaning_i_1_o_csv.txt": {{Title: "Cleaning policy type", Name: "Cleaning policy type", Value: "alru"}},
		"casadm_G_n_cleaningalru_i_1_o_csv.txt": {
			{Title: "Wake up time [s]", Name: "Wake up time", Unit: "s", Value: "20"},
			{Title: "Stale buffer time [s]", Name: "Stale buffer time", Unit: "s", Value: "120"},
			{Title: "Flush max buffers", Name: "Flush max buffers", Value: "100"},
			{Title: "Activity threshold [ms]", Name: "Activity threshold", Unit: "ms", Value: "10000"},
			{Title: "Dirty ratio trigger threshold [%]", Name: "Dirty ratio trigger threshold", Unit: "%", Value: "100"},
			{Title: "Dirty ratio trigger inertia [MiB]", Name: "Dirty ratio trigger inertia", Unit: "MiB", Value: "128"},
		},
		"casadm_G_n_promotionnhit_i_1_o_csv.txt": {
			{Title: "Insertion threshold", Name: "Insertion threshold", Value: "3"},
			{Title: "Policy trigger [%]", Name: "Policy trigger", Unit: "%", Value: "80"},
		},
		"casadm_G_n_seqcutoff_i_1_j_1_o_csv.txt": {
			{Title: "Sequential cutoff threshold [KiB]", Name: "Sequential cutoff threshold", Unit: "KiB", Value: "1024"},
			{Title: "Sequential cutoff policy", Name: "Sequential cutoff policy", Value: "full"},
		},
	} {
		tr := readTranscript(t, file)
		got, err := ParseParams(strings.NewReader(tr.stdout))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v", file, got, err)
			continue
		}
		if got.CSV() != tr.stdout {
			t.Errorf("%s: CSV()\n%s", file, got.CSV())
		}
	}
	tr := readTranscript(t, "casadm_G_n_cleaningalru_i_1_o_csv.txt")
	ps, _ := ParseParams(strings.NewReader(tr.stdout))
	if p, ok := ps.Get("Wake up time"); !ok || p.Unit != "s" {
		t.Errorf("Get by name: %+v", p)
	}
	if p, ok := ps.Get("Dirty ratio trigger inertia [MiB]"); !ok {
		t.Errorf("Get by title: %+v", p)
	} else if v, err := p.Uint(); err != nil || v != 128 {
		t.Errorf("Uint: %d, %v", v, err)
	}
	if _, ok := ps.Get("Nope"); ok {
		t.Error("found a missing parameter")
	}
}

func TestParseParamsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "empty output: no header",
		"Name,Value\nx,1\n":                  `line 1: missing column "Parameter name"`,
		"Parameter name,Value,Unit\nx,1,s\n": "line 1: 3 columns, want Parameter name,Value",
		"Parameter name,Value\n,1\n":         "line 2, column 1 (Parameter name): empty name",
		"Parameter name,Value\nx,1\nx,2\n":   `line 3, column 1 (Parameter name): "x" appears twice`,
		"Parameter name,Value\nx\n":          "line 2: 1 fields, the header has 2",
	} {
		_, err := ParseParams(strings.NewReader(in))
		var pe *ParseError
		if !errors.As(err, &pe) || err.Error() != want {
			t.Errorf("ParseParams(%q) = %v\nwant %s", in, err, want)
		}
	}
	if _, err := (Param{Title: "t", Value: "x"}).Uint(); err == nil {
		t.Error("Uint accepted x")
	}
}

func TestParseVersionReal(t *testing.T) {
	tr := readTranscript(t, "casadm_V_o_csv.txt")
	v, err := ParseVersion(strings.NewReader(tr.stdout))
	if err != nil {
		t.Fatal(err)
	}
	want := Version{CLI: Release{Major: 26, Minor: 6, Suffix: "devel", Raw: "26.06.0.0000.devel"}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("%+v", v)
	}
	if !v.CLI.AtLeast(26, 3) || v.CLI.AtLeast(26, 7) || !v.CLI.AtLeast(25, 12) {
		t.Error("AtLeast")
	}
}

func TestParseVersionLoaded(t *testing.T) {
	in := "Name,Version\nCAS Cache Kernel Module,25.12.2.0001.release\nCAS Disk Kernel Module,20.3.0\nCAS CLI Utility,25.12.2.0001.release\n"
	v, err := ParseVersion(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	rel := Release{Major: 25, Minor: 12, Patch: 2, Build: 1, Suffix: "release", Raw: "25.12.2.0001.release"}
	if !v.ModuleLoaded || v.Module != rel || v.CLI != rel || v.Other["CAS Disk Kernel Module"] != "20.3.0" || v.CLI.AtLeast(26, 3) {
		t.Errorf("%+v", v)
	}
}

func TestParseRelease(t *testing.T) {
	for in, want := range map[string]Release{
		"22.6":                 {Major: 22, Minor: 6, Raw: "22.6"},
		"22.06.3":              {Major: 22, Minor: 6, Patch: 3, Raw: "22.06.3"},
		"24.9.0.0123.master.x": {Major: 24, Minor: 9, Build: 123, Suffix: "master.x", Raw: "24.9.0.0123.master.x"},
		"26.03.rc1":            {Major: 26, Minor: 3, Suffix: "rc1", Raw: "26.03.rc1"},
	} {
		if got, err := ParseRelease(in); err != nil || got != want {
			t.Errorf("ParseRelease(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "26", "v26.03", "26.x", "-1.2", "+26.03"} {
		if _, err := ParseRelease(in); err == nil {
			t.Errorf("ParseRelease(%q) accepted", in)
		}
	}
}

func TestParseVersionErrors(t *testing.T) {
	for in, want := range map[string]string{
		"Name,Version\nCAS Cache Kernel Module,Not Loaded\n": `no "CAS CLI Utility" row`,
		"Name,Version\nCAS CLI Utility,latest\n":             `line 2, column 2 (Version): invalid version "latest"`,
		"Name,Version\nCAS Cache Kernel Module,x\n":          `line 2, column 2 (Version): invalid version "x"`,
		"Name,Release\nCAS CLI Utility,26.03\n":              `line 1: missing column "Version"`,
		"Name,Version\n,26.03\n":                             "line 2, column 1 (Name): empty name",
	} {
		_, err := ParseVersion(strings.NewReader(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseVersion(%q) = %v\nwant %s", in, err, want)
		}
	}
}
