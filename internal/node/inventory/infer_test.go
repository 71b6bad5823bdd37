package inventory

import (
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestInferRules(t *testing.T) {
	const tb = 1_000_000_000_000
	qlcUnit := func(d *prismv1.Device) { d.InternalWriteUnitBytes, d.InternalWriteUnitSource = 64<<10, "nvme-npwg" }
	for _, c := range []struct {
		name string
		dev  func(*prismv1.Device)
		ev   prismv1.DeviceEvidence
		tier prismv1.Tier
		conf prismv1.InferenceConfidence
	}{
		{"Optane PCI device", func(*prismv1.Device) {}, prismv1.DeviceEvidence{Markers: []string{"PCI device 8086:2700 is \"Optane SSD 900P Series\""}}, prismv1.TierFast, prismv1.ConfidenceHigh},
		// 375 GB rated 30 DWPD over 5 years: 30 × 0.375 × 1825 = 20 531 TB.
		{"SCM-class endurance", func(d *prismv1.Device) { d.SizeBytes = 375 * tb / 1000 }, prismv1.DeviceEvidence{EnduranceEstimateTBW: "20531.25"}, prismv1.TierFast, prismv1.ConfidenceHigh},
		// 30.72 TB at 0.58 DWPD over 5 years: 32 519 TB.
		{"coarse unit and QLC rating", qlcUnit, prismv1.DeviceEvidence{EnduranceEstimateTBW: "32519"}, prismv1.TierCapacity, prismv1.ConfidenceMedium},
		// SCM-class rating with a QLC-sized unit: one field lies; advice only.
		{"SCM rating with a coarse unit", qlcUnit, prismv1.DeviceEvidence{EnduranceEstimateTBW: "1681920"}, prismv1.TierFast, prismv1.ConfidenceLow},
		{"coarse unit alone", qlcUnit, prismv1.DeviceEvidence{}, prismv1.TierCapacity, prismv1.ConfidenceLow},
		// 3 DWPD on 30.72 TB: a mixed-use rating keeps confidence low.
		{"coarse unit, mixed-use rating", qlcUnit, prismv1.DeviceEvidence{EnduranceEstimateTBW: "168192"}, prismv1.TierCapacity, prismv1.ConfidenceLow},
		{"4 KiB unit, low rating: a TLC read-intensive drive", func(d *prismv1.Device) { d.InternalWriteUnitBytes, d.InternalWriteUnitSource = 4096, "nvme-npwg" }, prismv1.DeviceEvidence{EnduranceEstimateTBW: "5000"}, "", ""},
		{"64 KiB from the database, not the drive", func(d *prismv1.Device) {
			d.InternalWriteUnitBytes, d.InternalWriteUnitSource = 64<<10, "drive-database"
		}, prismv1.DeviceEvidence{}, "", ""},
		{"HDD", func(d *prismv1.Device) { d.Rotational = true }, prismv1.DeviceEvidence{Markers: []string{"x"}}, "", ""},
		{"nothing reported", func(*prismv1.Device) {}, prismv1.DeviceEvidence{}, "", ""},
	} {
		d := prismv1.Device{Name: "nvme0n1", SizeBytes: 30720 * tb / 1000}
		c.dev(&d)
		got := infer(&d, &c.ev)
		switch {
		case c.tier == "" && got != nil:
			t.Errorf("%s: inferred %+v, want nothing", c.name, *got)
		case c.tier != "" && (got == nil || got.Tier != c.tier || got.Confidence != c.conf || len(got.Reasons) == 0):
			t.Errorf("%s: inferred %+v, want %s with %s confidence and reasons", c.name, got, c.tier, c.conf)
		}
	}
}
