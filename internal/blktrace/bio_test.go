package blktrace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestBioJSON(t *testing.T) {
	bios := []Bio{
		{Sector: 2072, Bytes: 4096, RWBS: "WS", Comm: "dd", TGID: 28676, PID: 28677, Micros: 1500, Timed: true},
		{Sector: 0, Bytes: 0, RWBS: "FWS", Comm: "bstore_kv_sync", Timed: true},
		{Sector: 1 << 40, Bytes: 128 << 10, RWBS: "RA", Comm: "(udev-worker)", PID: 777},
	}
	data, err := json.Marshal(bios)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[[2072,4096,"WS","dd",28676,28677,1500],[0,0,"FWS","bstore_kv_sync",0,0,0],[1099511627776,131072,"RA","(udev-worker)",0,777,null]]`; string(data) != want {
		t.Errorf("marshal: %s\nwant %s", data, want)
	}
	var back []Bio
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, bios) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	// A trace written before pid and time (decision 0025's five fields) still loads: no
	// thread id, no time.
	old := `[[2072,4096,"WS","dd",28676],[0,0,"FWS","bstore_kv_sync",0]]`
	if err := json.Unmarshal([]byte(old), &back); err != nil || !reflect.DeepEqual(back, []Bio{
		{Sector: 2072, Bytes: 4096, RWBS: "WS", Comm: "dd", TGID: 28676}, {Sector: 0, Bytes: 0, RWBS: "FWS", Comm: "bstore_kv_sync"}}) {
		t.Errorf("five-field bios: %+v, %v", back, err)
	}
	for in, field := range map[string]string{
		`{"sector":1}`:                      "want [sector",
		`[1,4096,"W","dd"]`:                 "want [sector",
		`[1,4096,"W","dd",0,0]`:             "want [sector",
		`[1,4096,"W","dd",0,0,0,0]`:         "want [sector",
		`[-1,4096,"W","dd",0]`:              "field 1",
		`[1,4096.5,"W","dd",0]`:             "field 2",
		`[1,4095,"W","dd",0]`:               "bytes",
		`[1,2199023255552,"W","dd",0]`:      "bytes",
		`[1,4096,"Q","dd",0]`:               "rwbs",
		`[1,4096,"","dd",0]`:                "rwbs",
		`[1,4096,"W","0123456789abcdef",0]`: "comm",
		`[1,4096,"W","dd",-3]`:              "tgid",
		`[1,4096,"W","dd",4294967296]`:      "tgid",
		`[1,4096,"W",7,0]`:                  "field 4",
		`[1,4096,"W","dd",0,-1,0]`:          "pid",
		`[1,4096,"W","dd",0,4294967296,0]`:  "pid",
		`[1,4096,"W","dd",0,1,-5]`:          "field 7",
		`[1,4096,"W","dd",0,1,1.5]`:         "field 7",
		`[1,4096,"W","dd",0,1,"5"]`:         "field 7",
	} {
		var b Bio
		if err := json.Unmarshal([]byte(in), &b); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Unmarshal(%s): %v, want an error naming %q", in, err, field)
		}
	}
}

func TestBiosKeepsOrderAndRange(t *testing.T) {
	recs := []Record{
		{PID: 6, TGID: 5, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 2047, Bytes: 4096, Time: 900_000_000, Timed: true}, // before the partition: sets no origin
		{PID: 6, TGID: 5, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 2080, Bytes: 4096, Time: 1_000_000_000, Timed: true},
		{PID: 7, TGID: 5, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 2048, Bytes: 4096, Time: 1_000_250_999, Timed: true},
		{TGID: 5, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 2047, Bytes: 4096},                                         // before the partition
		{TGID: 5, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 4096, Bytes: 4096},                                         // after it
		{TGID: 5, Comm: "dd", RWBS: "WS", Major: 7, Minor: 1, Sector: 2050, Bytes: 4096},                                         // another disk
		{Comm: "kworker/u8:2", RWBS: "FWS", Major: 7, Minor: 0, Sector: 4095},                                                    // no time: none
		{PID: 6, TGID: 5, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 2056, Bytes: 4096, Time: 999_000_000, Timed: true}, // before the origin: 0
		{PID: 6, TGID: 5, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 2064, Bytes: 4096, Time: 3_000_000_000, Timed: true},
	}
	got := Bios(recs, Device{Major: 7, Minor: 0, Start: 2048, Sectors: 2048})
	want := []Bio{
		{Sector: 32, Bytes: 4096, RWBS: "WS", Comm: "dd", TGID: 5, PID: 6, Timed: true},
		{Sector: 0, Bytes: 4096, RWBS: "WS", Comm: "dd", TGID: 5, PID: 7, Micros: 250, Timed: true},
		{Sector: 2047, RWBS: "FWS", Comm: "kworker/u8:2"},
		{Sector: 8, Bytes: 4096, RWBS: "WS", Comm: "dd", TGID: 5, PID: 6, Timed: true},
		{Sector: 16, Bytes: 4096, RWBS: "WS", Comm: "dd", TGID: 5, PID: 6, Micros: 2_000_000, Timed: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Bios = %+v\nwant %+v", got, want)
	}
}

// FuzzBioJSON: any input fails or decodes to a bio that encodes back to an
// equal bio.
func FuzzBioJSON(f *testing.F) {
	for _, s := range []string{`[2072,4096,"WS","dd",28676]`, `[0,0,"FWS","bstore_kv_sync",0]`, `[1,4096,"Q","dd",0]`, `[]`, `{}`,
		`[2072,4096,"WS","dd",28676,28677,1500]`, `[0,0,"FWS","bstore_kv_sync",0,0,null]`, `[1,4096,"W","dd",0,1,18446744073709551615]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var b Bio
		if err := json.Unmarshal([]byte(in), &b); err != nil {
			return
		}
		if err := b.check(); err != nil {
			t.Fatalf("%s decoded to %+v: %v", in, b, err)
		}
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var back Bio
		if err := json.Unmarshal(data, &back); err != nil || back != b {
			t.Fatalf("%s -> %+v -> %s -> %+v, %v", in, b, data, back, err)
		}
	})
}
