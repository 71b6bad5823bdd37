package plan

import (
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func dev(name string, tier prismv1.Tier, size int64, mods ...func(*prismv1.Device)) prismv1.Device {
	d := prismv1.Device{
		Name: name, StablePath: "/dev/disk/by-id/nvme-" + name, Model: "MODEL-" + string(tier), Vendor: "Intel",
		SizeBytes: size, Tier: tier, TierReason: "test", Eligibility: prismv1.Eligibility{Eligible: true},
	}
	for _, m := range mods {
		m(&d)
	}
	return d
}

func holdsData(d *prismv1.Device) {
	d.Eligibility = prismv1.Eligibility{Reasons: []prismv1.EligibilityReason{{Filter: prismv1.FilterNoSignatures, Message: "holds data: xfs"}}}
}

func inUse(d *prismv1.Device) {
	d.Eligibility = prismv1.Eligibility{Reasons: []prismv1.EligibilityReason{
		{Filter: prismv1.FilterNoSignatures, Message: "holds data: LVM2_member"},
		{Filter: prismv1.FilterNoHolders, Message: "in use by dm-0"},
	}}
}

func model(m string) func(*prismv1.Device) { return func(d *prismv1.Device) { d.Model = m } }

const tb = 1000 * 1000 * 1000 * 1000

func chosen(devs []prismv1.SelectedDevice) string {
	var n []string
	for _, d := range devs {
		n = append(n, d.Name)
	}
	return strings.Join(n, ",")
}

func TestSelectNode(t *testing.T) {
	one := int32(1)
	two := int32(2)
	yes := true
	base := []prismv1.Device{
		dev("c", prismv1.TierCapacity, 15*tb),
		dev("a", prismv1.TierFast, tb/2),
		dev("d", prismv1.TierCapacity, 30*tb, model("SOLIDIGM SBFPF2BV307T")),
		dev("e", prismv1.TierOther, 4*tb),
		dev("b", prismv1.TierCapacity, 15*tb, holdsData),
		dev("f", prismv1.TierCapacity, 15*tb, inUse),
	}
	cases := []struct {
		name           string
		spec           prismv1.HybridStoragePolicySpec
		fast, capacity string
		rejected       map[string]string // device -> substring of its reason
	}{
		{
			name: "defaults pick by tier, eligible only, in stable-path order",
			fast: "a", capacity: "c,d",
			rejected: map[string]string{"b": "NoSignatures", "e": "tier Other", "f": "NoHolders"},
		},
		{
			name: "wipe grant overrides data filters but never holders, and never on a capacity device",
			spec: prismv1.HybridStoragePolicySpec{AllowWipe: []prismv1.WipeGrant{
				{Node: "n1", Path: "/dev/disk/by-id/nvme-b"}, {Node: "n1", Path: "/dev/disk/by-id/nvme-f"},
			}},
			fast: "a", capacity: "c,d",
			rejected: map[string]string{"b": "allowWipe does not cover capacity devices", "f": "in use by dm-0"},
		},
		{
			name: "wipe grant for another node does not apply",
			spec: prismv1.HybridStoragePolicySpec{AllowWipe: []prismv1.WipeGrant{{Node: "n2", Path: "/dev/disk/by-id/nvme-b"}}},
			fast: "a", capacity: "c,d",
			rejected: map[string]string{"b": "NoSignatures"},
		},
		{
			name: "size range",
			spec: prismv1.HybridStoragePolicySpec{CapacityDevices: prismv1.DeviceSelector{Tiers: []prismv1.Tier{prismv1.TierCapacity}, Size: "20T:"}},
			fast: "a", capacity: "d",
			rejected: map[string]string{"c": "below the size range 20T and up"},
		},
		{
			name: "model glob is case-insensitive and replaces the default tier",
			spec: prismv1.HybridStoragePolicySpec{CapacityDevices: prismv1.DeviceSelector{Models: []string{"solidigm sbfpf*"}}},
			fast: "a", capacity: "d",
			rejected: map[string]string{"c": "matches none of"},
		},
		{
			name: "limit",
			spec: prismv1.HybridStoragePolicySpec{CapacityDevices: prismv1.DeviceSelector{Limit: &one}},
			fast: "a", capacity: "c",
			rejected: map[string]string{"d": "beyond limit 1"},
		},
		{
			name: "explicit paths pick an Other device as fast",
			spec: prismv1.HybridStoragePolicySpec{FastDevices: prismv1.DeviceSelector{Paths: []string{"/dev/disk/by-id/nvme-e"}}},
			fast: "e", capacity: "c,d",
			rejected: map[string]string{"a": "not in paths"},
		},
		{
			name: "a device chosen as fast is not also capacity",
			spec: prismv1.HybridStoragePolicySpec{
				FastDevices:     prismv1.DeviceSelector{Tiers: []prismv1.Tier{prismv1.TierFast, prismv1.TierCapacity}, Limit: &two},
				CapacityDevices: prismv1.DeviceSelector{Tiers: []prismv1.Tier{prismv1.TierCapacity}},
			},
			fast: "a,c", capacity: "d",
		},
		{
			name: "rotational filter",
			spec: prismv1.HybridStoragePolicySpec{CapacityDevices: prismv1.DeviceSelector{Tiers: []prismv1.Tier{prismv1.TierCapacity}, Rotational: &yes}},
			fast: "a", capacity: "",
			rejected: map[string]string{"c": "rotational is false"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sel := SelectNode("n1", base, &tc.spec, nil)
			if got := chosen(sel.Fast); got != tc.fast {
				t.Errorf("fast = %q, want %q", got, tc.fast)
			}
			if got := chosen(sel.Capacity); got != tc.capacity {
				t.Errorf("capacity = %q, want %q", got, tc.capacity)
			}
			reasons := map[string]string{}
			for _, r := range sel.Rejected {
				reasons[r.Name] = r.Reason
			}
			if len(reasons)+len(sel.Fast)+len(sel.Capacity) != len(base) {
				t.Errorf("every device must be chosen or rejected with a reason: %+v", sel)
			}
			for name, want := range tc.rejected {
				if !strings.Contains(reasons[name], want) {
					t.Errorf("%s rejected for %q, want it to mention %q", name, reasons[name], want)
				}
			}
		})
	}
}

func TestSelectNodeIsStableUnderInputOrder(t *testing.T) {
	devs := []prismv1.Device{dev("x", prismv1.TierCapacity, tb*15), dev("y", prismv1.TierCapacity, tb*15), dev("f", prismv1.TierFast, tb)}
	reversed := []prismv1.Device{devs[2], devs[1], devs[0]}
	spec := &prismv1.HybridStoragePolicySpec{}
	if a, b := SelectNode("n", devs, spec, nil), SelectNode("n", reversed, spec, nil); chosen(a.Capacity) != chosen(b.Capacity) || chosen(a.Capacity) != "x,y" {
		t.Fatalf("selection depends on input order: %q vs %q", chosen(a.Capacity), chosen(b.Capacity))
	}
}

func TestSelectNodeMessages(t *testing.T) {
	spec := &prismv1.HybridStoragePolicySpec{}
	for _, tc := range []struct {
		devs []prismv1.Device
		want string
	}{
		{nil, "reported no devices"},
		{[]prismv1.Device{dev("o", prismv1.TierOther, tb)}, "no device matched"},
		{[]prismv1.Device{dev("c", prismv1.TierCapacity, tb)}, "no fast device"},
		{[]prismv1.Device{dev("f", prismv1.TierFast, tb)}, "no capacity device"},
	} {
		sel := SelectNode("n", tc.devs, spec, nil)
		if !strings.Contains(sel.Message, tc.want) || Complete(sel) {
			t.Errorf("message %q, want %q (complete=%t)", sel.Message, tc.want, Complete(sel))
		}
	}
}

// TestSelectNodeKeepsThePlannedDevices: once the agent has partitioned the fast device and
// Rook has made an OSD on a capacity device, both fail NoPartitions/NoSignatures/NoHolders;
// they stay selected for the plan that put that there, and only for it. Read-only and other
// defects still count.
func TestSelectNodeKeepsThePlannedDevices(t *testing.T) {
	provisioned := func(d *prismv1.Device) {
		d.Eligibility = prismv1.Eligibility{Reasons: []prismv1.EligibilityReason{
			{Filter: prismv1.FilterNoPartitions, Message: "has partitions: a1, a2"},
			{Filter: prismv1.FilterNoSignatures, Message: "holds data: gpt"},
		}}
	}
	readOnly := func(d *prismv1.Device) {
		inUse(d)
		d.Eligibility.Reasons = append(d.Eligibility.Reasons, prismv1.EligibilityReason{Filter: prismv1.FilterNotReadOnly, Message: "read-only"})
	}
	devs := []prismv1.Device{
		dev("a", prismv1.TierFast, tb/2, provisioned),
		dev("c", prismv1.TierCapacity, 15*tb, inUse),
		dev("d", prismv1.TierCapacity, 15*tb, inUse),    // not in the plan: someone else's
		dev("r", prismv1.TierCapacity, 15*tb, readOnly), // in the plan but read-only now
	}
	current := &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{
		StablePath: devs[0].StablePath,
		Slots: []prismv1.DBSlot{
			{Index: 0, DataDevice: devs[1].StablePath},
			{Index: 1, DataDevice: devs[3].StablePath},
			{Index: 2}, // spare
		},
	}}}
	spec := &prismv1.HybridStoragePolicySpec{}

	sel := SelectNode("n", devs, spec, current)
	if chosen(sel.Fast) != "a" || chosen(sel.Capacity) != "c" {
		t.Fatalf("with the plan: fast %q capacity %q, want a and c", chosen(sel.Fast), chosen(sel.Capacity))
	}
	reasons := map[string]string{}
	for _, r := range sel.Rejected {
		reasons[r.Name] = r.Reason
	}
	if !strings.Contains(reasons["d"], "NoHolders") || !strings.Contains(reasons["r"], "NotReadOnly") || strings.Contains(reasons["r"], "NoHolders") {
		t.Errorf("rejections %q", reasons)
	}

	without := SelectNode("n", devs, spec, nil)
	if len(without.Fast)+len(without.Capacity) != 0 {
		t.Errorf("without a plan nothing holding data is usable: fast %q capacity %q", chosen(without.Fast), chosen(without.Capacity))
	}
	granted := &prismv1.HybridStoragePolicySpec{AllowWipe: []prismv1.WipeGrant{{Node: "n", Path: devs[0].StablePath}, {Node: "n", Path: devs[1].StablePath}}}
	if g := SelectNode("n", devs, granted, nil); chosen(g.Fast) != "a" || len(g.Capacity) != 0 {
		t.Errorf("a wipe grant overrides partitions and signatures, never holders: fast %q capacity %q", chosen(g.Fast), chosen(g.Capacity))
	}
	// A grant on a capacity device holding data does not select it (decision 0020), and says so.
	c := devs[2]
	c.Holders = nil
	c.Eligibility = prismv1.Eligibility{Reasons: []prismv1.EligibilityReason{{Filter: prismv1.FilterNoSignatures, Message: "holds data: xfs"}}}
	onlyC := []prismv1.Device{devs[0], c}
	onlyC[0].Eligibility = prismv1.Eligibility{Eligible: true}
	g := SelectNode("n", onlyC, &prismv1.HybridStoragePolicySpec{AllowWipe: []prismv1.WipeGrant{{Node: "n", Path: c.StablePath}}}, nil)
	if len(g.Capacity) != 0 || len(g.Rejected) != 1 || !strings.Contains(g.Rejected[0].Reason, "allowWipe does not cover capacity devices") {
		t.Errorf("granted capacity device: capacity %q rejected %+v", chosen(g.Capacity), g.Rejected)
	}
}

// A selection names devices by kernel name, so two devices reported under one name are taken
// together: the first chosen stands for both, and neither is listed as rejected.
func TestSelectNodeTakesDevicesOfOneNameTogether(t *testing.T) {
	fast := dev("nvme0n1", prismv1.TierFast, 1600*GiB)
	qlc := dev("nvme0n1", prismv1.TierCapacity, 30000*GiB, func(d *prismv1.Device) { d.StablePath += "-other" })
	other := dev("nvme1n1", prismv1.TierCapacity, 30000*GiB)
	sel := SelectNode("n1", []prismv1.Device{qlc, other, fast}, &prismv1.HybridStoragePolicySpec{}, nil)
	if len(sel.Fast) != 1 || sel.Fast[0].StablePath != fast.StablePath {
		t.Errorf("fast %+v, want only %s", sel.Fast, fast.StablePath)
	}
	if len(sel.Capacity) != 1 || sel.Capacity[0].Name != "nvme1n1" {
		t.Errorf("capacity %+v, want only nvme1n1", sel.Capacity)
	}
	if len(sel.Rejected) != 0 {
		t.Errorf("rejected %+v, want none", sel.Rejected)
	}
}

// A failed read of a planned device (the agent's inventory could not read it completely: its
// signatures, its udev record or a sysfs attribute) says nothing new about it: the device
// stays in the plan. Dropped, its slot's data device would leave the plan, and the agent would
// flush and remove its cache core (casadm -R) under the OSD on it, and the operator rewrite
// the node's Rook entries without it. Before, Readable was never overridden, and a planned
// device whose read failed once left the plan. A device outside the plan is still refused.
func TestSelectNodeKeepsAPlannedDeviceItCouldNotRead(t *testing.T) {
	unread := func(d *prismv1.Device) {
		inUse(d)
		d.Eligibility.Reasons = append(d.Eligibility.Reasons, prismv1.EligibilityReason{Filter: prismv1.FilterReadable,
			Message: "could not read the device completely, so it cannot be proven empty: reading signatures of /dev/c: input/output error"})
	}
	devs := []prismv1.Device{
		dev("a", prismv1.TierFast, tb/2, inUse),
		dev("c", prismv1.TierCapacity, 15*tb, unread),
		dev("e", prismv1.TierCapacity, 15*tb, unread), // not in the plan
	}
	current := &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{
		StablePath: devs[0].StablePath,
		Slots:      []prismv1.DBSlot{{Index: 0, DataDevice: devs[1].StablePath}, {Index: 1}},
	}}}
	sel := SelectNode("n", devs, &prismv1.HybridStoragePolicySpec{}, current)
	if chosen(sel.Fast) != "a" || chosen(sel.Capacity) != "c" {
		t.Fatalf("with the plan: fast %q capacity %q, want a and c (rejected %+v)", chosen(sel.Fast), chosen(sel.Capacity), sel.Rejected)
	}
	if len(sel.Rejected) != 1 || sel.Rejected[0].Name != "e" || !strings.Contains(sel.Rejected[0].Reason, "cannot be proven empty") {
		t.Errorf("rejected %+v: want e, unreadable", sel.Rejected)
	}
	if without := SelectNode("n", devs, &prismv1.HybridStoragePolicySpec{}, nil); len(without.Capacity) != 0 {
		t.Errorf("without a plan an unreadable device is selected: %q", chosen(without.Capacity))
	}
}

// readFailed is a device whose last inventory read failed on one sysfs attribute: the agent
// reports it anyway, with a Readable reason naming the attribute (attrReader.problem), and
// the attribute's zero value where it would have been.
func readFailed(attr string, blank func(*prismv1.Device)) func(*prismv1.Device) {
	return func(d *prismv1.Device) {
		blank(d)
		d.Eligibility.Eligible = false
		d.Eligibility.Reasons = append(d.Eligibility.Reasons, prismv1.EligibilityReason{Filter: prismv1.FilterReadable,
			Message: "could not read the device completely, so it cannot be proven empty: sys/block/" + d.Name + "/" + attr + ": input/output error"})
		if d.SizeBytes == 0 {
			d.Eligibility.Reasons = append(d.Eligibility.Reasons, prismv1.EligibilityReason{Filter: prismv1.FilterMinimumSize,
				Message: "0 bytes is below the 5 GB ceph-volume minimum"})
		}
	}
}

// The fields a failed read blanks: the size (the MinimumSize filter, a size range), the model
// (a model glob; the drive database no longer knows the drive, so its tier is Other), the
// rotational flag.
var (
	sizeUnread  = readFailed("size", func(d *prismv1.Device) { d.SizeBytes = 0 })
	modelUnread = readFailed("device/model", func(d *prismv1.Device) {
		d.Model, d.Vendor, d.Tier, d.TierReason = "", "", prismv1.TierOther, `model "" is not in the drive database`
	})
	rotationalUnread = readFailed("queue/rotational", func(d *prismv1.Device) { d.Rotational = false })
)

func TestSelectNodeKeepsAPlannedDeviceWithAPartialRecord(t *testing.T) {
	yes := true
	hdd := func(d *prismv1.Device) { d.Rotational = true }
	cases := []struct {
		name    string
		spec    prismv1.HybridStoragePolicySpec
		fast    []func(*prismv1.Device)
		planned []func(*prismv1.Device) // c, in the plan
		field   string                  // the failed field the warning names
	}{
		{name: "size read as 0", planned: []func(*prismv1.Device){inUse, sizeUnread}, field: "size"},
		{name: "size read as 0, a size range", spec: prismv1.HybridStoragePolicySpec{CapacityDevices: prismv1.DeviceSelector{Size: "10T:20T"}},
			planned: []func(*prismv1.Device){inUse, sizeUnread}, field: "size"},
		{name: "model unknown, tier Other", planned: []func(*prismv1.Device){inUse, modelUnread}, field: "device/model"},
		{name: "model unknown, a model glob", spec: prismv1.HybridStoragePolicySpec{CapacityDevices: prismv1.DeviceSelector{Models: []string{"MODEL-*"}}},
			planned: []func(*prismv1.Device){inUse, modelUnread}, field: "device/model"},
		{name: "rotational unknown", spec: prismv1.HybridStoragePolicySpec{CapacityDevices: prismv1.DeviceSelector{Rotational: &yes}},
			planned: []func(*prismv1.Device){hdd, inUse, rotationalUnread}, field: "queue/rotational"},
		{name: "the fast device's model unknown", fast: []func(*prismv1.Device){inUse, modelUnread}, planned: []func(*prismv1.Device){inUse}, field: "device/model"},
		{name: "the fast device's size read as 0", fast: []func(*prismv1.Device){inUse, sizeUnread}, planned: []func(*prismv1.Device){inUse}, field: "size"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			devs := []prismv1.Device{
				dev("a", prismv1.TierFast, tb/2, tc.fast...),
				dev("c", prismv1.TierCapacity, 15*tb, tc.planned...),
				dev("e", prismv1.TierCapacity, 15*tb, tc.planned...), // not in the plan
			}
			current := &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{
				StablePath: devs[0].StablePath,
				Slots:      []prismv1.DBSlot{{Index: 0, DataDevice: devs[1].StablePath}, {Index: 1}},
			}}}
			sel := SelectNode("n", devs, &tc.spec, current)
			if chosen(sel.Fast) != "a" || chosen(sel.Capacity) != "c" {
				t.Fatalf("fast %q capacity %q, want a and c as planned (rejected %+v)", chosen(sel.Fast), chosen(sel.Capacity), sel.Rejected)
			}
			if len(sel.Rejected) != 1 || sel.Rejected[0].Name != "e" {
				t.Errorf("rejected %+v: want e, which is not in the plan", sel.Rejected)
			}
			partial := "c"
			if tc.fast != nil {
				partial = "a"
			}
			if w := strings.Join(sel.Warnings, " | "); !strings.Contains(w, partial+" (") || !strings.Contains(w, "/"+tc.field+": input/output error") || !strings.Contains(w, "partial") {
				t.Errorf("warnings %q: want one naming %s and its failed field %s", sel.Warnings, partial, tc.field)
			}
			if without := SelectNode("n", devs, &tc.spec, nil); chosen(without.Fast)+"/"+chosen(without.Capacity) == "a/c,e" || strings.Contains(chosen(without.Capacity), "c") {
				t.Errorf("without a plan a device with a partial record is selected: fast %q capacity %q", chosen(without.Fast), chosen(without.Capacity))
			}
		})
	}
}

// A partial record keeps a planned device where the plan has it, in its tier, and no more:
// what its record does say (read-only) still refuses it, and a planned capacity device is
// not taken as fast whatever its partial record says.
func TestSelectNodePartialRecordLimits(t *testing.T) {
	readOnly := func(d *prismv1.Device) {
		d.ReadOnly = true
		d.Eligibility.Reasons = append(d.Eligibility.Reasons, prismv1.EligibilityReason{Filter: prismv1.FilterNotReadOnly, Message: "the kernel marks the device read-only"})
	}
	looksFast := func(d *prismv1.Device) { d.Tier = prismv1.TierFast }
	devs := []prismv1.Device{
		dev("a", prismv1.TierFast, tb/2, inUse),
		dev("c", prismv1.TierCapacity, 15*tb, inUse, modelUnread, looksFast, readOnly),
		dev("d", prismv1.TierCapacity, 15*tb, inUse, sizeUnread),
		dev("f", prismv1.TierCapacity, 15*tb, inUse, modelUnread, looksFast),
	}
	current := &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{
		StablePath: devs[0].StablePath,
		Slots: []prismv1.DBSlot{{Index: 0, DataDevice: devs[1].StablePath}, {Index: 1, DataDevice: devs[2].StablePath},
			{Index: 2, DataDevice: devs[3].StablePath}},
	}}}
	sel := SelectNode("n", devs, &prismv1.HybridStoragePolicySpec{}, current)
	if chosen(sel.Fast) != "a" || chosen(sel.Capacity) != "d,f" {
		t.Fatalf("fast %q capacity %q, want a and d,f (rejected %+v)", chosen(sel.Fast), chosen(sel.Capacity), sel.Rejected)
	}
	if len(sel.Rejected) != 1 || sel.Rejected[0].Name != "c" || !strings.Contains(sel.Rejected[0].Reason, "NotReadOnly") {
		t.Errorf("rejected %+v: want c, read-only", sel.Rejected)
	}
}
