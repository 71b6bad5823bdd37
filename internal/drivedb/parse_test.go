package drivedb

import (
	"errors"
	"strings"
	"testing"
)

// TestEmbeddedDatabaseParses guarantees Default never panics in production.
func TestEmbeddedDatabaseParses(t *testing.T) {
	db, err := Parse(strings.NewReader(string(drivesCSV)))
	if err != nil {
		t.Fatal(err)
	}
	entries := db.Entries()
	if len(entries) < 40 {
		t.Fatalf("only %d rows parsed", len(entries))
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Source, "https://") && !strings.HasPrefix(e.Source, "http://") {
			t.Errorf("line %d (%s): source %q is not a URL", e.Line, e.Family, e.Source)
		}
		if e.Vendor == "" || e.Family == "" {
			t.Errorf("line %d: vendor or family empty", e.Line)
		}
		if tierOf[e.Media] != e.Tier {
			t.Errorf("line %d: tier %s does not fit media %s", e.Line, e.Tier, e.Media)
		}
	}
}

func TestRequiredFamiliesPresent(t *testing.T) {
	have := map[string]bool{}
	for _, e := range Default().Entries() {
		have[e.Family] = true
	}
	for _, f := range []string{
		"Optane SSD DC P4800X", "Optane SSD DC P4801X", "Optane SSD DC P5800X",
		"Optane SSD 900P", "Optane SSD 905P", "Optane SSD P1600X",
		"D7-P5810", "FL6", "XTR",
		"SSD 660p", "SSD 665p", "SSD 670p", "D5-P4320", "D5-P4326", "D5-P5316",
		"D5-P5336", "D5-P5430", "5210 ION", "6500 ION", "860 QVO", "870 QVO", "BM1743",
		"D7-P5510", "PM9A3", "7450",
	} {
		if !have[f] {
			t.Errorf("family %q missing from drives.csv", f)
		}
	}
}

// Every row must be reachable: some model and size must select it, otherwise
// a more general row shadows it and its figures are dead data.
func TestEveryRowIsReachable(t *testing.T) {
	db := Default()
	for _, r := range db.rows {
		model := strings.NewReplacer("*", "", "?", "Z").Replace(r.ModelPattern)
		size := r.CapacityBytes
		if size == 0 {
			size = 1 << 40
		}
		if e, ok := db.Lookup(model, size); !ok || e.Line != r.Line {
			t.Errorf("line %d (%s) unreachable with %q: got line %d", r.Line, r.ModelPattern, model, e.Line)
		}
	}
}

func TestParseErrors(t *testing.T) {
	const ok = "ACME X1,Acme,X1,QLC,Capacity,1000,0.5,100,5,16384,https://example.com/x\n"
	for _, tc := range []struct {
		name, csv, want string
	}{
		{"bad decimal", testHeader + ok + "ACME X2,Acme,X2,QLC,Capacity,,x,,,,https://example.com/x\n",
			`drives.csv line 3, column "rated_dwpd": "x" is not a decimal`},
		{"comments count as lines", testHeader + "# comment\n\n" + ok + "ACME X2,Acme,X2,QLC,Capacity,,,1e3,,,https://example.com/x\n",
			`drives.csv line 5, column "rated_tbw_tb": "1e3" is not a decimal`},
		{"negative", testHeader + "ACME X2,Acme,X2,QLC,Capacity,,-0.1,,,,https://example.com/x\n",
			`drives.csv line 2, column "rated_dwpd": "-0.1" must not be negative`},
		{"capacity with unit", testHeader + "ACME X2,Acme,X2,QLC,Capacity,12GB,,,,,https://example.com/x\n",
			`drives.csv line 2, column "capacity_bytes": "12GB" is not a whole number`},
		{"capacity overflow", testHeader + "ACME X2,Acme,X2,QLC,Capacity,99999999999999999999,,,,,https://example.com/x\n",
			`drives.csv line 2, column "capacity_bytes": "99999999999999999999" is out of range`},
		{"indirection unit", testHeader + "ACME X2,Acme,X2,QLC,Capacity,,,,,3000,https://example.com/x\n",
			`drives.csv line 2, column "indirection_unit_bytes": 3000 is not a power of two of at least 512 bytes`},
		{"warranty", testHeader + "ACME X2,Acme,X2,QLC,Capacity,,,,500,,https://example.com/x\n",
			`drives.csv line 2, column "warranty_years": 500 years is not a plausible warranty`},
		{"unknown media", testHeader + "ACME X2,Acme,X2,MLC,Other,,,,,,https://example.com/x\n",
			`drives.csv line 2, column "media": "MLC" is not one of 3DXPoint, SLC, QLC, TLC`},
		{"unknown tier", testHeader + "ACME X2,Acme,X2,QLC,Slow,,,,,,https://example.com/x\n",
			`drives.csv line 2, column "tier": "Slow" is not one of Fast, Capacity, Other`},
		{"tier against media", testHeader + "ACME X2,Acme,X2,QLC,Fast,,,,,,https://example.com/x\n",
			`drives.csv line 2, column "tier": "Fast" does not fit media "QLC" (want "Capacity")`},
		{"TLC is never Fast", testHeader + "ACME X2,Acme,X2,TLC,Fast,,,,,,https://example.com/x\n",
			`drives.csv line 2, column "tier": "Fast" does not fit media "TLC" (want "Other")`},
		{"empty source", testHeader + "ACME X2,Acme,X2,QLC,Capacity,,,,,,\n",
			`drives.csv line 2, column "source": must name the public URL the figures come from`},
		{"source not a URL", testHeader + "ACME X2,Acme,X2,QLC,Capacity,,,,,,datasheet.pdf\n",
			`drives.csv line 2, column "source": "datasheet.pdf" is not an http(s) URL`},
		{"empty vendor", testHeader + "ACME X2,,X2,QLC,Capacity,,,,,,https://example.com/x\n",
			`drives.csv line 2, column "vendor": must not be empty`},
		{"pattern too broad", testHeader + "*X?*,Acme,X2,QLC,Capacity,,,,,,https://example.com/x\n",
			`drives.csv line 2, column "model_pattern": "*X?*" matches too broadly: it needs at least 4 non-wildcard characters`},
		{"duplicate pattern and capacity", testHeader + ok + "acme   x1,Acme,X1 again,QLC,Capacity,1000,,,,,https://example.com/x\n",
			`drives.csv line 3, column "model_pattern": "acme   x1" with capacity_bytes 1000 is already defined on line 2`},
		{"wrong field count", testHeader + ok + "ACME X2,Acme\n",
			`drives.csv line 3: wrong number of fields`},
		{"missing column", strings.Replace(testHeader, ",source", "", 1) + "ACME X2,Acme,X2,QLC,Capacity,,,,,\n",
			`drives.csv line 1, column "source": required column is missing from the header`},
		{"unknown column", strings.Replace(testHeader, "source", "source,sauce", 1),
			`drives.csv line 1, column "sauce": unknown column`},
		{"duplicate column", strings.Replace(testHeader, "source", "source,vendor", 1),
			`drives.csv line 1, column "vendor": column appears twice`},
		{"empty file", "", `drives.csv line 1: no header row`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.csv))
			if err == nil {
				t.Fatalf("Parse succeeded, want %s", tc.want)
			}
			if err.Error() != tc.want {
				t.Fatalf("error\n got: %s\nwant: %s", err, tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is %T, want *ParseError", err)
			}
		})
	}
}

func TestParseAcceptsAnyColumnOrderAndQuotes(t *testing.T) {
	csv := "source,tier,media,family,vendor,model_pattern,notes,capacity_bytes,rated_dwpd,rated_tbw_tb,warranty_years,indirection_unit_bytes\n" +
		`"https://example.com/a,b https://example.com/c",Fast,SLC,Z1,Acme,ACME Z1*,"a note, with a comma",,35,,5,` + "\n"
	db, err := Parse(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := db.Lookup("acme z100", 1e12)
	if !ok || e.Family != "Z1" || e.RatedDWPD != 35 || e.WarrantyYears != 5 || e.Line != 2 ||
		e.Notes != "a note, with a comma" || e.Source != "https://example.com/a,b https://example.com/c" {
		t.Fatalf("got %+v, %v", e, ok)
	}
}

func TestParseHeaderOnly(t *testing.T) {
	db, err := Parse(strings.NewReader(testHeader))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := db.Lookup("ACME X1", 1); ok {
		t.Fatal("empty database matched")
	}
}
