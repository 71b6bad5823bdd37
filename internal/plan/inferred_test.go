package plan

import (
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func inferred(tier prismv1.Tier, c prismv1.InferenceConfidence) func(*prismv1.Device) {
	return func(d *prismv1.Device) {
		d.InferredTier = &prismv1.InferredTier{Tier: tier, Confidence: c, Reasons: []string{"test"}}
	}
}

// Decision 0022: an inferred tier counts only for a selector that sets inferredTiers: Accept,
// and only with Medium or High confidence; by default decision 0003 holds.
func TestSelectNodeInferredTiers(t *testing.T) {
	devices := []prismv1.Device{
		dev("nvme0n1", prismv1.TierOther, 400e9, inferred(prismv1.TierFast, prismv1.ConfidenceHigh)),
		dev("nvme1n1", prismv1.TierOther, 30*tb, inferred(prismv1.TierCapacity, prismv1.ConfidenceMedium)),
		dev("nvme2n1", prismv1.TierOther, 30*tb, inferred(prismv1.TierCapacity, prismv1.ConfidenceLow)),
		dev("nvme3n1", prismv1.TierCapacity, 15*tb),
	}
	byDefault := SelectNode("n", devices, &prismv1.HybridStoragePolicySpec{}, nil)
	if got := chosen(byDefault.Fast) + "|" + chosen(byDefault.Capacity); got != "|nvme3n1" {
		t.Errorf("default selection = %s, want only the database's capacity drive", got)
	}
	for _, r := range byDefault.Rejected {
		if r.Name == "nvme0n1" && !strings.Contains(r.Reason, "inferredTiers: Accept") {
			t.Errorf("the rejection of an inferred-Fast drive should say how to opt in: %s", r.Reason)
		}
	}
	accept := &prismv1.HybridStoragePolicySpec{
		FastDevices:     prismv1.DeviceSelector{InferredTiers: prismv1.InferredTiersAccept},
		CapacityDevices: prismv1.DeviceSelector{InferredTiers: prismv1.InferredTiersAccept},
	}
	sel := SelectNode("n", devices, accept, nil)
	if got := chosen(sel.Fast) + "|" + chosen(sel.Capacity); got != "nvme0n1|nvme1n1,nvme3n1" {
		t.Errorf("opted-in selection = %s, want nvme0n1|nvme1n1,nvme3n1 (the Low confidence drive left out)", got)
	}
	for _, r := range sel.Rejected {
		if r.Name == "nvme2n1" && !strings.Contains(r.Reason, "Low confidence") {
			t.Errorf("the Low confidence drive's reason should say so: %s", r.Reason)
		}
	}
	// A vendors filter picks an unknown drive by the vendor the agent found (pci.ids).
	vendor := func(d *prismv1.Device) { d.Vendor = "Samsung Electronics Co Ltd" }
	byVendor := &prismv1.HybridStoragePolicySpec{FastDevices: prismv1.DeviceSelector{Vendors: []string{"Samsung*"}}}
	sel = SelectNode("n", []prismv1.Device{dev("nvme5n1", prismv1.TierOther, 800e9, vendor)}, byVendor, nil)
	if chosen(sel.Fast) != "nvme5n1" {
		t.Errorf("vendors [Samsung*] chose %q", chosen(sel.Fast))
	}
}
