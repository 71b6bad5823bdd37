package plan

import (
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func unexplainedBytes(d *prismv1.Device) {
	at := int64(4096)
	d.NonZeroAtBytes = &at
	d.Eligibility = prismv1.Eligibility{Reasons: []prismv1.EligibilityReason{{Filter: prismv1.FilterZeroHeadAndTail, Message: "non-zero bytes at offset 4096"}}}
}

// Issue 29 case 4: a capacity device is chosen only when it is proven empty where Prism looks,
// or when the policy grants it; the selection says which (decision 0045).
func TestCapacityDevicesNeedZerosOrAGrant(t *testing.T) {
	devs := []prismv1.Device{
		dev("a", prismv1.TierFast, tb/2),
		dev("c", prismv1.TierCapacity, 15*tb),
		dev("u", prismv1.TierCapacity, 15*tb, unexplainedBytes),
		dev("x", prismv1.TierCapacity, 15*tb, holdsData),
	}
	sel := SelectNode("n", devs, &prismv1.HybridStoragePolicySpec{}, nil)
	if chosen(sel.Capacity) != "c" || sel.Capacity[0].AllowWipe {
		t.Fatalf("without a grant: capacity %+v, want c alone, proven empty", sel.Capacity)
	}
	for _, r := range sel.Rejected {
		if r.Name == "u" && !strings.Contains(r.Reason, "ZeroHeadAndTail") {
			t.Errorf("u rejected for %q", r.Reason)
		}
	}
	grants := &prismv1.HybridStoragePolicySpec{AllowWipe: []prismv1.WipeGrant{{Node: "n", Path: devs[2].StablePath}, {Node: "n", Path: devs[3].StablePath}}}
	sel = SelectNode("n", devs, grants, nil)
	if chosen(sel.Capacity) != "c,u" || sel.Capacity[0].AllowWipe || !sel.Capacity[1].AllowWipe {
		t.Fatalf("with grants: capacity %+v, want c (proven empty) and u (granted)", sel.Capacity)
	}
	// A signature still needs clearing: Rook refuses such a drive, and the grant says so.
	if len(sel.Rejected) != 1 || sel.Rejected[0].Name != "x" || !strings.Contains(sel.Rejected[0].Reason, "allowWipe does not cover capacity devices") {
		t.Errorf("rejected %+v, want x with the grant's limit", sel.Rejected)
	}
	// A fast device the grant covers is marked too; one proven empty is not.
	fastU := dev("f", prismv1.TierFast, tb/2, unexplainedBytes)
	sel = SelectNode("n", []prismv1.Device{fastU, devs[1]}, &prismv1.HybridStoragePolicySpec{AllowWipe: []prismv1.WipeGrant{{Node: "n", Path: fastU.StablePath}}}, nil)
	if chosen(sel.Fast) != "f" || !sel.Fast[0].AllowWipe {
		t.Errorf("granted fast device: %+v", sel.Fast)
	}
}
