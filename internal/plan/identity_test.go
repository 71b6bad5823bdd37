package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func identity(serial string, seq int64) func(*prismv1.Device) {
	return func(d *prismv1.Device) { d.Identity = &prismv1.DeviceIdentity{Serial: serial, DiskSeq: seq} }
}

// Issue 29 case 2: two devices under one by-id name (cloned serials), or two reporting one
// identity. Before, both were planned without a word and the agent acted on the first for both.
func TestSelectNodeHoldsAnAmbiguousNode(t *testing.T) {
	clone := func(name string, seq int64) prismv1.Device {
		d := dev(name, prismv1.TierCapacity, 15*tb, identity("CLONE", seq))
		d.StablePath = "/dev/disk/by-id/nvme-QLC_CLONE"
		return d
	}
	fast := dev("a", prismv1.TierFast, tb/2, identity("F1", 1))
	other := dev("q", prismv1.TierCapacity, 15*tb, identity("Q1", 4))
	spec := &prismv1.HybridStoragePolicySpec{}

	for _, tc := range []struct {
		name    string
		devs    []prismv1.Device
		current *prismv1.NodePlan
		fast    string
		cap     string
		why     string
	}{
		{"one by-id name on two devices: nothing new is taken", []prismv1.Device{fast, clone("c1", 2), clone("c2", 3), other}, nil,
			"", "", "/dev/disk/by-id/nvme-QLC_CLONE names 2 devices (/dev/c1: serial \"CLONE\"; /dev/c2: serial \"CLONE\")"},
		{"one identity under two names", []prismv1.Device{fast, dev("c1", prismv1.TierCapacity, 15*tb, identity("CLONE", 2)), dev("c2", prismv1.TierCapacity, 15*tb, identity("CLONE", 3))}, nil,
			"", "", "2 devices report serial CLONE"},
		{"a planned node keeps its plan, takes nothing new", []prismv1.Device{fast, clone("c1", 2), clone("c2", 3), other},
			&prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: fast.StablePath, Slots: []prismv1.DBSlot{{Index: 0, DataDevice: other.StablePath}, {Index: 1}}}}},
			"a", "q", "names 2 devices"},
		{"a planned device under an ambiguous name keeps its place, once", []prismv1.Device{fast, clone("c1", 2), clone("c2", 3)},
			&prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: fast.StablePath, Slots: []prismv1.DBSlot{{Index: 0, DataDevice: "/dev/disk/by-id/nvme-QLC_CLONE"}}}}},
			"a", "c1", "names 2 devices"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.devs {
				tc.devs[i].Path = "/dev/" + tc.devs[i].Name
			}
			sel := SelectNode("n", tc.devs, spec, tc.current)
			if chosen(sel.Fast) != tc.fast || chosen(sel.Capacity) != tc.cap {
				t.Fatalf("fast %q capacity %q, want %q %q", chosen(sel.Fast), chosen(sel.Capacity), tc.fast, tc.cap)
			}
			if len(sel.Warnings) == 0 || !strings.Contains(sel.Warnings[0], tc.why) || !strings.Contains(sel.Warnings[0], "takes no new device") {
				t.Errorf("warnings %q lack %q", sel.Warnings, tc.why)
			}
			if n := len(sel.Fast) + len(sel.Capacity) + len(sel.Rejected); n != len(tc.devs) {
				t.Errorf("%d devices accounted for, want %d: rejected %+v", n, len(tc.devs), sel.Rejected)
			}
			for _, r := range sel.Rejected {
				if !strings.Contains(r.Reason, "inventory is ambiguous") {
					t.Errorf("%s rejected for %q", r.Name, r.Reason)
				}
			}
		})
	}
	// Devices that report no identity are not alike for it (virtual disks without serials).
	plain := []prismv1.Device{fast, dev("c1", prismv1.TierCapacity, 15*tb), dev("c2", prismv1.TierCapacity, 15*tb)}
	if sel := SelectNode("n", plain, spec, nil); chosen(sel.Capacity) != "c1,c2" || len(sel.Warnings) != 0 {
		t.Errorf("devices without identities: capacity %q warnings %q", chosen(sel.Capacity), sel.Warnings)
	}
}

// The plan names the fast device it was made for; a later drive under the same by-id name
// does not change it (the agent then refuses to write), and the diskseq never enters it.
func TestPlanLayoutRecordsTheFastDevicesIdentity(t *testing.T) {
	devs, sel := node(1, 400*GiB, 2, 15*tb)
	devs[0].Identity = &prismv1.DeviceIdentity{WWID: "eui.1", Serial: "F1", DiskSeq: 9}
	spec := &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{Size: resource.NewQuantity(60*GiB, resource.BinarySI)}}
	first := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	got := first.Plan.FastDevices[0].Identity
	if got == nil || *got != (prismv1.DeviceIdentity{WWID: "eui.1", Serial: "F1"}) {
		t.Fatalf("first plan's identity %+v, want the inventory's without diskseq", got)
	}
	devs[0].Identity = &prismv1.DeviceIdentity{WWID: "eui.2", Serial: "F1", DiskSeq: 12}
	again := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec, Previous: &first.Plan})
	if id := again.Plan.FastDevices[0].Identity; id == nil || id.WWID != "eui.1" {
		t.Fatalf("a drive under the same name changed the plan's identity to %+v", id)
	}
	if !strings.Contains(strings.Join(again.Warnings, "\n"), `now reports wwid "eui.2", serial "F1", but it was planned as wwid "eui.1", serial "F1"`) {
		t.Errorf("warnings %q", again.Warnings)
	}
	// A plan made before identities existed takes the device's on its next pass.
	old := first.Plan.DeepCopy()
	old.FastDevices[0].Identity = nil
	if id := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec, Previous: old}).Plan.FastDevices[0].Identity; id == nil || id.WWID != "eui.2" {
		t.Errorf("an older plan's device got identity %+v", id)
	}
}
