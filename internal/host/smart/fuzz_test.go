package smart

import (
	"testing"
)

func FuzzParseSmartctlJSON(f *testing.F) {
	for _, d := range []string{"intel-optane-900p-ssdped1d280ga", "micron-5210-ion-7t6"} {
		f.Add(fixture(f, d))
	}
	f.Add([]byte(`{"model_name":"Samsung SSD 870 QVO 1TB","ata_smart_attributes":{"table":[{"id":177,"value":85},{"id":241,"raw":{"value":1}}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseSmartctlJSON(b)
		if err != nil {
			return
		}
		seen := map[uint8]bool{}
		for _, a := range r.Attributes {
			if a.ID == 0 || seen[a.ID] {
				t.Fatalf("attribute id %d invalid or repeated", a.ID)
			}
			seen[a.ID] = true
		}
		w, err := r.Wear()
		if err != nil {
			return
		}
		if w.PercentUsedKnown && (w.PercentUsed < 0 || w.PercentUsed > 255) {
			t.Fatalf("percent used %d", w.PercentUsed)
		}
		if w.WAFKnown && !(w.WAF >= 1) {
			t.Fatalf("WAF %v below 1", w.WAF)
		}
	})
}
