package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

const (
	optane375 = int64(375083606016)
	p5316     = int64(15362991415296)
)

// node builds an inventory and a selection of nFast fast and nCap capacity devices.
func node(nFast int, fastSize int64, nCap int, capSize int64) ([]prismv1.Device, prismv1.NodeSelection) {
	var devs []prismv1.Device
	sel := prismv1.NodeSelection{Node: "n1"}
	for i := 0; i < nFast; i++ {
		d := prismv1.Device{Name: fmt.Sprintf("nvme%dn1", i), StablePath: fmt.Sprintf("/dev/disk/by-id/nvme-FAST_%02d", i), SizeBytes: fastSize}
		devs = append(devs, d)
		sel.Fast = append(sel.Fast, prismv1.SelectedDevice{Name: d.Name, StablePath: d.StablePath, SizeBytes: d.SizeBytes})
	}
	for i := 0; i < nCap; i++ {
		d := prismv1.Device{Name: fmt.Sprintf("nvme%dn1", 10+i), StablePath: fmt.Sprintf("/dev/disk/by-id/nvme-QLC_%02d", i), SizeBytes: capSize}
		devs = append(devs, d)
		sel.Capacity = append(sel.Capacity, prismv1.SelectedDevice{Name: d.Name, StablePath: d.StablePath, SizeBytes: d.SizeBytes})
	}
	return devs, sel
}

func pct(n int32) *int32 { return &n }

// assignment renders a plan as "FAST_00:QLC_00,QLC_02,- FAST_01:..." (slot order, - = spare).
func assignment(p prismv1.NodePlan) string {
	var parts []string
	for _, f := range p.FastDevices {
		var slots []string
		for _, s := range f.Slots {
			name := "-"
			if s.DataDevice != "" {
				name = strings.TrimPrefix(s.DataDevice, "/dev/disk/by-id/nvme-")
			}
			slots = append(slots, name)
		}
		parts = append(parts, strings.TrimPrefix(f.StablePath, "/dev/disk/by-id/nvme-")+":"+strings.Join(slots, ","))
	}
	return strings.Join(parts, " ")
}

func TestPlanLayoutSpreadsEvenlyWithSpares(t *testing.T) {
	devs, sel := node(2, 800166076416, 5, p5316)
	spec := &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{Size: resource.NewQuantity(60*GiB, resource.BinarySI), SpareSlots: 1}}
	l := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	if len(l.Problems) > 0 || len(l.Unplaced) > 0 {
		t.Fatalf("problems %v unplaced %v", l.Problems, l.Unplaced)
	}
	// 5 devices over 2 fast devices: 3 slots each plus one spare; QLC_00,02,04 alternate.
	if got, want := assignment(l.Plan), "FAST_00:QLC_00,QLC_02,QLC_04,- FAST_01:QLC_01,QLC_03,-,-"; got != want {
		t.Fatalf("assignment %s, want %s", got, want)
	}
	s := l.Plan.FastDevices[0].Slots[2]
	if s.Partition.Number != 3 || s.Partition.Label != "prism-db-02" || s.Partition.StartBytes != MiB+2*60*GiB || s.Partition.SizeBytes != 60*GiB {
		t.Fatalf("slot 2 = %+v", s)
	}
	if l.Plan.FastDevices[0].Cache != nil {
		t.Fatal("no cache partition without a cache mode")
	}
}

func TestPlanLayoutPercentSizingAndCache(t *testing.T) {
	devs, sel := node(1, optane375, 4, 3840755982336) // 3.84 TB QLC
	spec := &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{PercentOfData: pct(2)}, Cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack}}
	l := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	if len(l.Problems) > 0 {
		t.Fatal(l.Problems)
	}
	f := l.Plan.FastDevices[0]
	// 2 % of 3840755982336 bytes = 76815119646.72, rounded up to a MiB = 73257 MiB.
	if f.SlotSizeBytes != 73257*MiB {
		t.Fatalf("slot size %d MiB", f.SlotSizeBytes/MiB)
	}
	end := MiB + 4*f.SlotSizeBytes
	usable := optane375/MiB*MiB - MiB
	if f.Cache == nil || f.Cache.Number != 5 || f.Cache.StartBytes != end || f.Cache.SizeBytes != (usable-end)/MiB*MiB {
		t.Fatalf("cache = %+v, want partition 5 from %d", f.Cache, end)
	}
}

// qlc02ReplacedBy99 is node's inventory and selection with QLC_02 pulled and QLC_99 added.
func qlc02ReplacedBy99(devs []prismv1.Device, sel prismv1.NodeSelection) ([]prismv1.Device, prismv1.NodeSelection) {
	devs = append(slices.Clone(devs), prismv1.Device{StablePath: "/dev/disk/by-id/nvme-QLC_99", SizeBytes: p5316})
	sel.Capacity = []prismv1.SelectedDevice{sel.Capacity[0], sel.Capacity[1], sel.Capacity[3], {StablePath: "/dev/disk/by-id/nvme-QLC_99"}}
	return devs, sel
}

// With no room to grow (maxDataDevicesPerFastDevice), a replacement waits for the kept slot,
// and its reason says which slot and what frees it.
func TestPlanLayoutReplacementWaitsForAKeptSlot(t *testing.T) {
	devs, sel := node(2, 800166076416, 4, p5316)
	spec := &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{Size: resource.NewQuantity(60*GiB, resource.BinarySI), MaxDataDevicesPerFastDevice: 2}}
	first := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	if got := assignment(first.Plan); got != "FAST_00:QLC_00,QLC_02 FAST_01:QLC_01,QLC_03" {
		t.Fatalf("first plan %s", got)
	}
	devs2, sel2 := qlc02ReplacedBy99(devs, sel)
	inUse := emptySlots(&first.Plan)
	inUse[1].DBContent, inUse[1].DBFound = prismv1.DBSlotInUse, "ceph_bluestore"
	l := PlanLayout(LayoutInput{Selection: sel2, Devices: devs2, Spec: spec, Previous: &first.Plan, Partitions: inUse})
	if got := assignment(l.Plan); got != "FAST_00:QLC_00,QLC_02 FAST_01:QLC_01,QLC_03" || len(l.Unplaced) != 1 ||
		!strings.Contains(l.Unplaced[0].Reason, "1 kept for data devices that are gone until zapped: /dev/disk/by-id/nvme-FAST_00 slot 1") {
		t.Fatalf("kept slot: %s, unplaced %+v", got, l.Unplaced)
	}
	// Zapped: the agent reads the slot Empty, and the replacement takes it.
	l = PlanLayout(LayoutInput{Selection: sel2, Devices: devs2, Spec: spec, Previous: &first.Plan, Partitions: emptySlots(&first.Plan)})
	if got := assignment(l.Plan); got != "FAST_00:QLC_00,QLC_99 FAST_01:QLC_01,QLC_03" || len(l.Unplaced) != 0 {
		t.Fatalf("zapped slot: %s, unplaced %+v", got, l.Unplaced)
	}
}

func TestPlanLayoutKeepsSlotsStable(t *testing.T) {
	devs, sel := node(2, 800166076416, 4, p5316)
	spec := &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{Size: resource.NewQuantity(60*GiB, resource.BinarySI), SpareSlots: 1}}
	first := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	if got := assignment(first.Plan); got != "FAST_00:QLC_00,QLC_02,- FAST_01:QLC_01,QLC_03,-" {
		t.Fatalf("first plan %s", got)
	}

	t.Run("removing a disk frees only its slot", func(t *testing.T) {
		sel2 := sel
		sel2.Capacity = append(append([]prismv1.SelectedDevice(nil), sel.Capacity[:2]...), sel.Capacity[3]) // QLC_02 removed
		l := PlanLayout(LayoutInput{Selection: sel2, Devices: devs, Spec: spec, Previous: &first.Plan, Partitions: emptySlots(&first.Plan)})
		if got := assignment(l.Plan); got != "FAST_00:QLC_00,-,- FAST_01:QLC_01,QLC_03,-" {
			t.Fatalf("after removal %s", got)
		}
	})
	t.Run("a replacement takes the freed slot", func(t *testing.T) {
		devs3, sel3 := qlc02ReplacedBy99(devs, sel)
		l := PlanLayout(LayoutInput{Selection: sel3, Devices: devs3, Spec: spec, Previous: &first.Plan, Partitions: emptySlots(&first.Plan)})
		if got := assignment(l.Plan); got != "FAST_00:QLC_00,QLC_99,- FAST_01:QLC_01,QLC_03,-" {
			t.Fatalf("after replacement %s", got)
		}
	})
	// The kept slot counts as a data device: the replacement is placed as a fifth disk would
	// be (both fast devices grow by a slot and keep their spare).
	t.Run("a slot not read Empty keeps its removed disk; its replacement is placed as an added disk", func(t *testing.T) {
		devs3, sel3 := qlc02ReplacedBy99(devs, sel)
		bluestore := emptySlots(&first.Plan)
		bluestore[1].DBContent, bluestore[1].DBFound = prismv1.DBSlotInUse, "ceph_bluestore"
		unread := emptySlots(&first.Plan)
		unread[1].DBContent = ""
		for _, tc := range []struct {
			name       string
			partitions []prismv1.PartitionStatus
			why        string
		}{
			{"an OSD's DB on it", bluestore, "partition 2 holds ceph_bluestore"},
			{"not read", unread, "could not read what partition 2 holds"},
			{"not reported", emptySlots(&first.Plan)[2:], "has not reported partition 2"},
			{"no agent report", nil, "has not reported partition 2"},
		} {
			l := PlanLayout(LayoutInput{Selection: sel3, Devices: devs3, Spec: spec, Previous: &first.Plan, Partitions: tc.partitions})
			if got := assignment(l.Plan); got != "FAST_00:QLC_00,QLC_02,QLC_99,- FAST_01:QLC_01,QLC_03,-,-" {
				t.Errorf("%s: %s, want QLC_02 kept in its slot and QLC_99 in the next", tc.name, got)
			}
			if !slices.ContainsFunc(l.Warnings, func(w string) bool {
				return strings.Contains(w, "DB slot 1 keeps /dev/disk/by-id/nvme-QLC_02") && strings.Contains(w, tc.why)
			}) {
				t.Errorf("%s: warnings %q, want slot 1 kept because %s", tc.name, l.Warnings, tc.why)
			}
		}
	})
	t.Run("an added disk takes a spare slot and moves nothing", func(t *testing.T) {
		devs4 := append(devs, prismv1.Device{StablePath: "/dev/disk/by-id/nvme-QLC_05", SizeBytes: p5316})
		sel4 := sel
		sel4.Capacity = append(append([]prismv1.SelectedDevice(nil), sel.Capacity...), prismv1.SelectedDevice{StablePath: "/dev/disk/by-id/nvme-QLC_05"})
		l := PlanLayout(LayoutInput{Selection: sel4, Devices: devs4, Spec: spec, Previous: &first.Plan})
		// Five disks over two fast devices need three slots each, plus one spare: both grow by one.
		if got := assignment(l.Plan); got != "FAST_00:QLC_00,QLC_02,QLC_05,- FAST_01:QLC_01,QLC_03,-,-" {
			t.Fatalf("after adding %s", got)
		}
		for i, f := range l.Plan.FastDevices {
			for j, s := range f.Slots[:2] {
				if s.Partition != first.Plan.FastDevices[i].Slots[j].Partition {
					t.Fatalf("slot %d of %s moved: %+v -> %+v", j, f.StablePath, first.Plan.FastDevices[i].Slots[j].Partition, s.Partition)
				}
			}
		}
	})
	t.Run("a new slot size keeps the existing slots and warns", func(t *testing.T) {
		spec2 := *spec
		spec2.DB.Size = resource.NewQuantity(80*GiB, resource.BinarySI)
		l := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: &spec2, Previous: &first.Plan})
		if l.Plan.FastDevices[0].SlotSizeBytes != 60*GiB || !strings.Contains(strings.Join(l.Warnings, "\n"), "keeps its 61440 MiB slots although the policy now asks for 81920 MiB") {
			t.Fatalf("slot size %d, warnings %v", l.Plan.FastDevices[0].SlotSizeBytes, l.Warnings)
		}
	})
}

func TestPlanLayoutWithCacheUsesSparesThenWaits(t *testing.T) {
	devs, sel := node(1, 1600*GiB, 2, p5316)
	spec := &prismv1.HybridStoragePolicySpec{
		DB:    prismv1.DBSizing{Size: resource.NewQuantity(160*GiB, resource.BinarySI), SpareSlots: 1},
		Cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack},
	}
	first := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	cache := first.Plan.FastDevices[0].Cache
	if got := assignment(first.Plan); got != "FAST_00:QLC_00,QLC_01,-" || cache == nil || cache.Number != 4 {
		t.Fatalf("first plan %s, cache %+v", got, cache)
	}
	for _, extra := range []string{"QLC_02", "QLC_03"} {
		devs = append(devs, prismv1.Device{StablePath: "/dev/disk/by-id/nvme-" + extra, SizeBytes: p5316})
		sel.Capacity = append(sel.Capacity, prismv1.SelectedDevice{StablePath: "/dev/disk/by-id/nvme-" + extra})
	}
	l := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec, Previous: &first.Plan})
	if got := assignment(l.Plan); got != "FAST_00:QLC_00,QLC_01,QLC_02" {
		t.Fatalf("with a cache the spare is used and no slot is added: %s", got)
	}
	if *l.Plan.FastDevices[0].Cache != *cache {
		t.Fatalf("the cache partition moved: %+v -> %+v", cache, l.Plan.FastDevices[0].Cache)
	}
	if len(l.Unplaced) != 1 || l.Unplaced[0].Name != "/dev/disk/by-id/nvme-QLC_03" {
		t.Fatalf("unplaced = %+v", l.Unplaced)
	}
}

func TestPlanLayoutRefusals(t *testing.T) {
	cases := []struct {
		name                      string
		nFast, nCap               int
		fastSize, capSize         int64
		db                        prismv1.DBSizing
		wantProblem, wantUnplaced string
		wantWarning               string
	}{
		{name: "fast device too small", nFast: 1, nCap: 4, fastSize: optane375, capSize: p5316, db: prismv1.DBSizing{PercentOfData: pct(2)},
			wantProblem: "is too small for 4 DB slots of 293026 MiB"}, // 2 % of 15362991415296 B = 307259828305 B, up to a MiB
		{name: "slot below minimum", nFast: 1, nCap: 2, fastSize: optane375, capSize: 100 * GiB, db: prismv1.DBSizing{PercentOfData: pct(1)},
			wantProblem: "below the 2048 MiB minimum"},
		{name: "blast radius cap leaves devices without a slot", nFast: 1, nCap: 3, fastSize: 1600 * GiB, capSize: p5316,
			db:           prismv1.DBSizing{Size: resource.NewQuantity(160*GiB, resource.BinarySI), MaxDataDevicesPerFastDevice: 2},
			wantUnplaced: "already serves 2 data devices"},
		{name: "small slot warns", nFast: 1, nCap: 2, fastSize: optane375, capSize: p5316, db: prismv1.DBSizing{Size: resource.NewQuantity(60*GiB, resource.BinarySI)},
			wantWarning: "2 DB slots of 61440 MiB are below 1 % of their data devices (down to 0.42 %)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			devs, sel := node(tc.nFast, tc.fastSize, tc.nCap, tc.capSize)
			l := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: &prismv1.HybridStoragePolicySpec{DB: tc.db}})
			check := func(what string, got []string, want string) {
				joined := strings.Join(got, "\n")
				if (want == "") != (joined == "") || !strings.Contains(joined, want) {
					t.Errorf("%s = %q, want %q", what, joined, want)
				}
			}
			var unplaced []string
			for _, u := range l.Unplaced {
				unplaced = append(unplaced, u.Name+": "+u.Reason)
			}
			check("problems", l.Problems, tc.wantProblem)
			check("unplaced", unplaced, tc.wantUnplaced)
			check("warnings", l.Warnings, tc.wantWarning)
		})
	}
}

// TestPlanLayoutNeverOverflows: sizes near int64's limit (a policy the API server refuses, or
// a device reporting an absurd size) give a problem naming the limit, never a negative size.
func TestPlanLayoutNeverOverflows(t *testing.T) {
	huge := resource.MustParse("8Ei")
	for name, tc := range map[string]struct {
		capSize int64
		spec    *prismv1.HybridStoragePolicySpec
	}{
		"2 % of a 200 PB device": {200e15, &prismv1.HybridStoragePolicySpec{}},
		"50 % of a 9 EB device":  {9e18, &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{PercentOfData: pct(50)}}},
		"an 8Ei db.size":         {p5316, &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{Size: &huge}}},
	} {
		devs, sel := node(1, optane375, 1, tc.capSize)
		l := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: tc.spec})
		if len(l.Problems) != 1 || !strings.Contains(l.Problems[0], "above the 67108864 MiB maximum") || strings.Contains(l.Problems[0], " -") {
			t.Errorf("%s: problems %q", name, l.Problems)
		}
	}
}

// A planned device whose latest inventory record is partial keeps the plan as it is: a fast
// device whose size was read as 0 keeps its slots and its cache partition (before, the plan
// was refused: "(0 GiB) is too small"), and a capacity device whose size was read as 0 keeps
// its slot and changes no slot size.
func TestPlanKeepsThePlanOfDevicesWithAPartialRecord(t *testing.T) {
	devs := []prismv1.Device{
		dev("a", prismv1.TierFast, 800166076416),
		dev("b", prismv1.TierFast, 800166076416),
		dev("c", prismv1.TierCapacity, p5316),
		dev("d", prismv1.TierCapacity, p5316),
		dev("e", prismv1.TierCapacity, p5316),
	}
	spec := &prismv1.HybridStoragePolicySpec{Cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack}, DB: prismv1.DBSizing{PercentOfData: pct(1), SpareSlots: 1}}
	in := Input{Spec: spec, Nodes: []NodeInventory{{Node: "n", Devices: devs}}}
	first := Plan(in)
	if len(first.Problems) > 0 || first.Nodes[0].Plan == nil || first.Nodes[0].Plan.FastDevices[0].Cache == nil {
		t.Fatalf("first plan: problems %v, plan %+v", first.Problems, first.Nodes[0].Plan)
	}
	previous := first.Nodes[0].Plan
	for _, tc := range []struct {
		name    string
		partial []int // indexes into devs, their size read as 0
	}{
		{name: "a fast device", partial: []int{0}},
		{name: "a capacity device", partial: []int{2}},
		{name: "every capacity device", partial: []int{2, 3, 4}},
		{name: "every device", partial: []int{0, 1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := make([]prismv1.Device, len(devs))
			for i, d := range devs {
				inUse(&d)
				if slices.Contains(tc.partial, i) {
					sizeUnread(&d)
				}
				now[i] = d
			}
			in := Input{Spec: spec, Nodes: []NodeInventory{{Node: "n", Devices: now, Previous: previous}}}
			got := Plan(in)
			if len(got.Problems) > 0 || got.Nodes[0].Plan == nil {
				t.Fatalf("problems %v, message %q: want the previous plan", got.Problems, got.Nodes[0].Selection.Message)
			}
			if !equality.Semantic.DeepEqual(*got.Nodes[0].Plan, *previous) {
				t.Errorf("plan changed:\n got %s %+v\nwant %s %+v", assignment(*got.Nodes[0].Plan), got.Nodes[0].Plan.FastDevices, assignment(*previous), previous.FastDevices)
			}
			w := strings.Join(got.Nodes[0].Warnings, " | ")
			for _, i := range tc.partial {
				if !strings.Contains(w, devs[i].Name+" (") {
					t.Errorf("warnings %q do not name %s", w, devs[i].Name)
				}
			}
			if strings.Contains(w, "although the policy now asks") || strings.Contains(w, "MiB left after the DB slots") {
				t.Errorf("warnings %q: a size that could not be read asks for no new slot size or cache", w)
			}
		})
	}
}
