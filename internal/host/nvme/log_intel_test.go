package nvme

import (
	"strings"
	"testing"
)

func TestIntelSMARTLogFixture(t *testing.T) {
	l, err := ParseIntelSMARTLog(readLog(t, "intel-dc-p3600-ssdpedme016t4f", LogIDIntelSMARTAdd, 512))
	if err != nil {
		t.Fatal(err)
	}
	ids := []uint8{0xab, 0xac, 0xad, 0xb8, 0xc7, 0xe2, 0xe3, 0xe4, 0xea, 0xf0, 0xf3, 0xf4, 0xf5}
	if len(l.Attributes) != len(ids) {
		t.Fatalf("%d attributes, want %d", len(l.Attributes), len(ids))
	}
	for i, id := range ids {
		if a := l.Attributes[i]; a.ID != id || a.Offset != 12*i {
			t.Errorf("entry %d = %#02x at %d, want %#02x at %d", i, a.ID, a.Offset, id, 12*i)
		}
	}
	wl, _ := l.Attribute(IntelAttrWearLevelingCount)
	if lo, hi, avg := wl.WearLeveling(); wl.Normalized != 70 || lo != 3523 || hi != 3603 || avg != 3562 {
		t.Errorf("wear leveling %d: %d/%d/%d", wl.Normalized, lo, hi, avg)
	}
	unit, ok := IntelWriteUnitBytes("INTEL SSDPEDME016T4F")
	if !ok || unit.UnitBytes != 32<<20 {
		t.Fatalf("unit = %+v, %v", unit, ok)
	}
	nand, _ := l.Attribute(IntelAttrNANDBytesWritten)
	host, _ := l.Attribute(IntelAttrHostBytesWritten)
	// 224,943,088 × 33,554,432 = 7,547,837,550,166,016 B (CacheLib's expected value);
	// 172,365,270 × 33,554,432 = 5,783,618,731,376,640 B.
	if b, err := nand.Bytes(unit.UnitBytes); err != nil || b != 7547837550166016 {
		t.Errorf("nand bytes = %d, %v", b, err)
	}
	if b, err := host.Bytes(unit.UnitBytes); err != nil || b != 5783618731376640 {
		t.Errorf("host bytes = %d, %v", b, err)
	}
	if _, err := host.Bytes(0); err == nil || !strings.Contains(err.Error(), "unit unknown") {
		t.Errorf("unknown unit: %v", err)
	}
}

func TestIntelWriteUnitTable(t *testing.T) {
	for model, want := range map[string]bool{
		"INTEL SSDPE2NV153T8":       true,  // D5-P4326 15.36 TB QLC
		"intel  ssdpe2ke016t7":      true,  // P4600, case and spacing normalised
		"INTEL SSDPF21Q800GB":       false, // Optane P5800X: unit not published
		"INTEL SSDPED1K375GA":       false, // Optane P4800X
		"SOLIDIGM SSDPF2NV153TZ":    false, // D5-P5316
		"INTEL SSDPEKNW512G8":       false, // client 660p
		"Samsung SSD 870 QVO 1TB":   false,
		"INTEL SSDPE2KX020T8/extra": false, // '*' does not cross '/'
	} {
		if _, ok := IntelWriteUnitBytes(model); ok != want {
			t.Errorf("%q: known = %v, want %v", model, ok, want)
		}
	}
	for _, u := range IntelWriteUnits {
		if u.UnitBytes == 0 || u.Source == "" {
			t.Errorf("%+v: unit and source are required", u)
		}
	}
}

func TestIntelSMARTLogErrors(t *testing.T) {
	if _, err := ParseIntelSMARTLog(make([]byte, 11)); err == nil || !strings.Contains(err.Error(), "buffer is 11 bytes") {
		t.Errorf("short: %v", err)
	}
	b := make([]byte, 36)
	b[0], b[24] = 0xf4, 0xf4
	if _, err := ParseIntelSMARTLog(b); err == nil || !strings.Contains(err.Error(), "attribute 0xf4 repeated at bytes 0 and 24") {
		t.Errorf("duplicate: %v", err)
	}
	// Empty slots are skipped and a trailing partial entry ignored.
	b = make([]byte, 30)
	b[12], b[15] = 0xf5, 99
	copy(b[17:23], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	b[24] = 0xf4 // partial: only 6 bytes
	l, err := ParseIntelSMARTLog(b)
	if err != nil || len(l.Attributes) != 1 || l.Attributes[0].Raw != 1<<48-1 || l.Attributes[0].Normalized != 99 {
		t.Fatalf("got %+v, %v", l, err)
	}
	if _, err := l.Attributes[0].Bytes(1 << 17); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("(2^48−1) × 2^17 must overflow: %v", err)
	}
}

func FuzzParseIntelSMARTLog(f *testing.F) {
	f.Add(readLog(f, "intel-dc-p3600-ssdpedme016t4f", LogIDIntelSMARTAdd, 512)[:156])
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseIntelSMARTLog(b)
		if err != nil {
			return
		}
		seen := map[uint8]bool{}
		for _, a := range l.Attributes {
			if a.ID == 0 || seen[a.ID] || a.Raw >= 1<<48 || a.Offset%12 != 0 || a.Offset+12 > len(b) {
				t.Fatalf("bad attribute %+v", a)
			}
			seen[a.ID] = true
			_, _ = a.Bytes(32 << 20)
		}
	})
}
