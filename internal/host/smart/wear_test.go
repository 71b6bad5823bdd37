package smart

import (
	"strings"
	"testing"
)

func TestWearFixtures(t *testing.T) {
	tests := []struct {
		dir     string
		family  Family
		used    int
		usedOK  bool
		bytes   uint64
		bytesOK bool
		waf     float64
		wafOK   bool
	}{
		// 65,516,455 data units × 512,000 B = 33,544,424,960,000 B.
		{"intel-optane-900p-ssdped1d280ga", FamilyNVMe, 0, true, 33544424960000, true, 0, false},
		// 100 − 85 = 15 %; 153,611,357,092 LBAs × 512 B = 78,649,014,831,104 B (78.6 TB).
		{"samsung-870-qvo-1tb", FamilySamsungSATA, 15, true, 78649014831104, true, 0, false},
		// 100 − 97 = 3 %; 147,037,848,489 × 512 = 75,283,378,426,368 B;
		// WAF = (6,923,736,636 + 17,931,795,822) / 6,923,736,636 = 24,855,532,458 / 6,923,736,636 = 3.58990148885…
		{"micron-5210-ion-7t6", FamilyMicron5x00, 3, true, 75283378426368, true, 3.5899014888526444, true},
		// 100 − 100 = 0 %; 0 LBAs; 247 = 0 so WAF is undefined.
		{"micron-5210-ion-1t9", FamilyMicron5x00, 0, true, 0, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			w, err := parseFixture(t, tt.dir).Wear()
			if err != nil {
				t.Fatal(err)
			}
			if w.Family != tt.family || w.PercentUsed != tt.used || w.PercentUsedKnown != tt.usedOK ||
				w.HostBytesWritten != tt.bytes || w.HostBytesWrittenKnown != tt.bytesOK || w.WAFKnown != tt.wafOK || w.WAF != tt.waf {
				t.Errorf("got %+v", w)
			}
			if len(w.Sources) == 0 {
				t.Error("no sources")
			}
		})
	}
	w, _ := parseFixture(t, "micron-5210-ion-1t9").Wear()
	if !strings.Contains(strings.Join(w.Sources, "\n"), "247 Host_Program_Page_Count is 0") {
		t.Errorf("sources %q do not explain the missing WAF", w.Sources)
	}
}

func TestFamilyOf(t *testing.T) {
	tests := []struct {
		r    Report
		want Family
	}{
		{Report{ModelName: "Samsung SSD 860 QVO 1TB"}, FamilySamsungSATA},
		{Report{ModelName: "SAMSUNG MZ7LH512HALU-00000"}, FamilySamsungSATA},
		{Report{ModelFamily: "Samsung based SSDs", ModelName: "x"}, FamilySamsungSATA},
		{Report{ModelName: "Micron_5300_MTFDDAK1T9TDS"}, FamilyMicron5x00},
		{Report{ModelFamily: "Micron 5100 / 52x0 / 5300 / 5400 SSDs", ModelName: "MTFDDAK3T8TDD"}, FamilyMicron5x00},
		{Report{ModelName: "CT1000MX500SSD1", ModelFamily: "Crucial/Micron Client SSDs"}, FamilyUnknown},
		{Report{ModelName: "Samsung SSD 870 QVO 1TB", NVMe: &NVMeHealth{}}, FamilyNVMe},
		{Report{}, FamilyUnknown},
	}
	for _, tt := range tests {
		if got := FamilyOf(tt.r); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestWearEdges(t *testing.T) {
	samsung := func(attrs ...Attribute) Report {
		return Report{ModelName: "Samsung SSD 870 QVO 8TB", Attributes: attrs}
	}
	// A normalized value above 100 would mean negative wear: clamp to 0.
	w, err := samsung(Attribute{ID: 177, Value: 200}).Wear()
	if err != nil || !w.PercentUsedKnown || w.PercentUsed != 0 || w.HostBytesWrittenKnown {
		t.Errorf("177=200: %+v %v", w, err)
	}
	// raw.value absent: bytes unknown, not zero.
	w, _ = samsung(Attribute{ID: 241, RawString: "?"}).Wear()
	if w.HostBytesWrittenKnown {
		t.Errorf("unknown raw: %+v", w)
	}
	// 2^55 LBAs × 512 = 2^64 overflows.
	if _, err := samsung(Attribute{ID: 241, Raw: 1 << 55, RawKnown: true}).Wear(); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("overflow: %v", err)
	}
	// NVMe percentage used above 100 passes through (255 = "255 or more").
	w, _ = Report{NVMe: &NVMeHealth{PercentageUsed: 255, DataUnitsWritten: 2}}.Wear()
	if w.PercentUsed != 255 || w.HostBytesWritten != 1024000 {
		t.Errorf("nvme: %+v", w)
	}
	if _, err := (Report{NVMe: &NVMeHealth{DataUnitsWritten: 1 << 63}}).Wear(); err == nil {
		t.Error("nvme overflow accepted")
	}
	// Unknown family: attributes but no figures.
	w, err = Report{ModelName: "CT1000MX500SSD1", Attributes: []Attribute{{ID: 202, Value: 50}}}.Wear()
	if err != nil || w.Family != FamilyUnknown || w.PercentUsedKnown || w.HostBytesWrittenKnown || w.WAFKnown {
		t.Errorf("unknown: %+v", w)
	}
}
