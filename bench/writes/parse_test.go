package writes

import (
	"encoding/json"
	"strings"
	"testing"
)

// minimal is the smallest counters file Parse accepts; the cases below break one field each.
const minimal = `{"date":"d","runs":[
 {"workload":"w","layout":"qlc-alone","command":"c","clientBytes":10,"fastBytes":0,"qlcBytes":12,"seconds":1,"load":"1 1 1","classes":[]},
 {"workload":"w","layout":"prism","command":"c","clientBytes":10,"fastBytes":5,"qlcBytes":10,"seconds":1,"load":"1 1 1",
  "classes":[{"class":"wal","occupiedBytes":4,"writtenBytes":3},{"class":"objects","occupiedBytes":10,"writtenBytes":9},{"class":"L0","breakdown":true,"occupiedBytes":1,"writtenBytes":1}]}]}`

func TestParseRejectsNamingTheField(t *testing.T) {
	if _, err := Parse([]byte(minimal)); err != nil {
		t.Fatalf("the minimal file: %v", err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", `"date":"d"`, `"date":"d","extra":1`, `unknown field "extra"`},
		{"unknown layout", `"layout":"prism"`, `"layout":"cache"`, `runs[1] (w on cache): layout: "cache"`},
		{"no client bytes", `"clientBytes":10,"fastBytes":0`, `"clientBytes":0,"fastBytes":0`, "runs[0] (w on qlc-alone): clientBytes: 0"},
		{"negative QLC bytes", `"qlcBytes":12`, `"qlcBytes":-1`, "qlcBytes: -1"},
		{"fast bytes without a fast device", `"fastBytes":0`, `"fastBytes":7`, "fastBytes: 7 on the layout without a fast device"},
		{"a run twice", `"layout":"prism","command":"c","clientBytes":10,"fastBytes":5`, `"layout":"qlc-alone","command":"c","clientBytes":10,"fastBytes":0`, "recorded twice"},
		{"empty class", `"class":"wal"`, `"class":""`, "classes[0]: class: empty"},
		{"negative writes", `"writtenBytes":3`, `"writtenBytes":-3`, "classes[0] (wal): writtenBytes: -3"},
		{"empty workload", `"workload":"w","layout":"qlc-alone"`, `"workload":"","layout":"qlc-alone"`, "workload: empty"},
	} {
		in := strings.Replace(minimal, tc.from, tc.to, 1)
		if in == minimal {
			t.Fatalf("%s: the case changes nothing", tc.name)
		}
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Parse([]byte(minimal + "{}")); err == nil || !strings.Contains(err.Error(), "after the JSON document") {
		t.Errorf("trailing document: %v", err)
	}
	if _, err := Parse([]byte(`{"date":"d","runs":[]}`)); err == nil || !strings.Contains(err.Error(), "runs: none") {
		t.Errorf("no runs: %v", err)
	}
}

// FuzzParse: Parse never panics; what it accepts, the report renders without error (or says
// which workload lacks a layout), and it survives a round trip through JSON unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(`{"runs":[{"workload":"w","layout":"prism","clientBytes":1,"qlcBytes":0,"fastBytes":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		if _, err := Headline(c); err == nil {
			var b strings.Builder
			if err := Markdown(&b, c); err != nil {
				t.Fatalf("Markdown: %v", err)
			}
			if err := SVG(&b, c); err != nil {
				t.Fatalf("SVG: %v", err)
			}
		}
		for _, r := range c.Runs {
			ClassRows(r)
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Parse(again)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(x))): %v", err)
		}
		if b2, _ := json.Marshal(c2); string(b2) != string(again) {
			t.Fatalf("round trip changed the counters:\n%s\n%s", again, b2)
		}
	})
}
