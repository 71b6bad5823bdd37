package rook

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

const (
	fastA = "/dev/disk/by-id/nvme-FAST_A"
	fastB = "/dev/disk/by-id/nvme-FAST_B"
	qlc0  = "/dev/disk/by-id/nvme-QLC_00"
	qlc1  = "/dev/disk/by-id/nvme-QLC_01"
	qlc2  = "/dev/disk/by-id/nvme-QLC_02"
)

// cachePlan is a node plan: FAST_A caches QLC_00 and QLC_01 (plus a spare slot), FAST_B holds
// QLC_02's DB slot and has no cache partition (too little room left, say).
func cachePlan() prismv1.NodePlan {
	slot := func(i int32, dev string) prismv1.DBSlot {
		return prismv1.DBSlot{Index: i, DataDevice: dev, Partition: prismv1.PlannedPartition{Number: i + 1, Label: "prism-db-0" + itoa(i), StartBytes: MiB + int64(i)*60*GiB, SizeBytes: 60 * GiB}}
	}
	return prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{
		{StablePath: fastA, SlotSizeBytes: 60 * GiB, Slots: []prismv1.DBSlot{slot(0, qlc0), slot(1, qlc1), slot(2, "")},
			Cache: &prismv1.PlannedPartition{Number: 4, Label: "prism-cache", StartBytes: MiB + 180*GiB, SizeBytes: 100 * GiB}, CacheID: 1},
		{StablePath: fastB, SlotSizeBytes: 60 * GiB, Slots: []prismv1.DBSlot{slot(0, qlc2)}},
	}}
}

func cacheNodeStatus(cores ...prismv1.CacheCoreStatus) prismv1.StorageNodeStatus {
	return prismv1.StorageNodeStatus{
		Devices: []prismv1.Device{
			{Name: "nvme10n1", StablePath: qlc0, SizeBytes: p5316},
			{Name: "nvme11n1", StablePath: qlc1, SizeBytes: p5316},
			{Name: "nvme12n1", StablePath: qlc2, SizeBytes: p5316},
		},
		Caches: []prismv1.CacheStatus{{FastDevice: fastA, CacheID: 1, State: prismv1.CacheRunning, Cores: cores}},
	}
}

func TestRookNodesLeavesOutNodesWithACache(t *testing.T) {
	plain := cachePlan()
	for i := range plain.FastDevices {
		plain.FastDevices[i].Cache = nil
	}
	nodes := RookNodes(map[string]prismv1.NodePlan{"node-a": cachePlan(), "node-b": plain}, "qlc")
	if len(nodes) != 1 || nodes[0].Name != "node-b" || len(nodes[0].Devices) != 3 {
		t.Fatalf("storage.nodes = %+v, want only node-b (node-a runs a cache) with its 3 devices", nodes)
	}
	// The node-level cache plan alone (the fast devices' partitions not planned yet) is enough.
	planned := plain
	planned.Cache = &prismv1.NodeCachePlan{Mode: prismv1.CacheWriteBack, LineSizeKiB: 4}
	if !planned.OnClaims() || plain.OnClaims() || !cachePlan().OnClaims() {
		t.Error("OnClaims disagrees with the plans' caches")
	}
	if got := ClaimOSDsOf("node-b", plain, cacheNodeStatus()); len(got.Ready)+len(got.Held) != 0 {
		t.Errorf("a node without a cache gets claim OSDs: %+v", got)
	}
}

func TestClaimOSDsOf(t *testing.T) {
	ready := func(dev string, core int32) prismv1.CacheCoreStatus {
		return prismv1.CacheCoreStatus{Device: dev, CoreID: core, ExportedObject: "/dev/cas1-" + string(rune('0'+core)), State: prismv1.CoreReady}
	}
	cases := []struct {
		name      string
		status    prismv1.StorageNodeStatus
		wantReady []string // "dev=data path"
		wantHeld  []string // "dev: reason substring"
	}{
		{name: "no cache reported yet", status: prismv1.StorageNodeStatus{Devices: cacheNodeStatus().Devices},
			wantHeld: []string{qlc0 + ": waiting for its cache: the node's agent has not reported it yet", qlc1 + ": waiting for its cache: the node's agent has not reported it yet"}},
		{name: "both cores ready", status: cacheNodeStatus(ready(qlc0, 1), ready(qlc1, 2)),
			wantReady: []string{qlc0 + "=/dev/cas1-1", qlc1 + "=/dev/cas1-2"}},
		{name: "one core pending", status: cacheNodeStatus(ready(qlc0, 1), prismv1.CacheCoreStatus{Device: qlc1, State: prismv1.CorePending, Message: "casadm -A failed"}),
			wantReady: []string{qlc0 + "=/dev/cas1-1"}, wantHeld: []string{qlc1 + ": core is Pending: casadm -A failed"}},
		{name: "one core not added yet", status: cacheNodeStatus(ready(qlc1, 2)),
			wantReady: []string{qlc1 + "=/dev/cas1-2"}, wantHeld: []string{qlc0 + ": not a core of its cache yet"}},
		{name: "after a cache device error", status: cacheNodeStatus(ready(qlc0, 1), prismv1.CacheCoreStatus{Device: qlc1, CoreID: 2, ExportedObject: "/dev/cas1-2", State: prismv1.CoreCacheFailed}),
			wantReady: []string{qlc0 + "=/dev/cas1-1"}, wantHeld: []string{qlc1 + ": core is CacheFailed"}},
		{name: "ready without an exported object", status: cacheNodeStatus(ready(qlc0, 1), prismv1.CacheCoreStatus{Device: qlc1, State: prismv1.CoreReady}),
			wantReady: []string{qlc0 + "=/dev/cas1-1"}, wantHeld: []string{qlc1 + `: cores[].exportedObject: "" is not /dev/cas<cache>-<core>`}},
		{name: "exported object of another cache", status: cacheNodeStatus(ready(qlc0, 1), prismv1.CacheCoreStatus{Device: qlc1, CoreID: 2, ExportedObject: "/dev/cas2-2", State: prismv1.CoreReady}),
			wantReady: []string{qlc0 + "=/dev/cas1-1"}, wantHeld: []string{qlc1 + ": exported object /dev/cas2-2 is in cache 2 but the plan gives its fast device cache 1"}},
		{name: "exported object of another core", status: cacheNodeStatus(ready(qlc0, 1), prismv1.CacheCoreStatus{Device: qlc1, CoreID: 2, ExportedObject: "/dev/cas1-1", State: prismv1.CoreReady}),
			wantReady: []string{qlc0 + "=/dev/cas1-1"}, wantHeld: []string{qlc1 + ": exported object /dev/cas1-1 does not match core id 2"}},
		{name: "device gone from the inventory", status: func() prismv1.StorageNodeStatus {
			st := cacheNodeStatus(ready(qlc0, 1), ready(qlc1, 2))
			st.Devices = st.Devices[1:]
			return st
		}(), wantReady: []string{qlc1 + "=/dev/cas1-2"}, wantHeld: []string{qlc0 + ": not in the node's inventory"}},
		{name: "size read as 0, the record partial", status: func() prismv1.StorageNodeStatus {
			st := cacheNodeStatus(ready(qlc0, 1), ready(qlc1, 2))
			st.Devices[0].SizeBytes = 0
			st.Devices[0].Eligibility.Reasons = []prismv1.EligibilityReason{{Filter: prismv1.FilterReadable, Message: "sys/block/nvme10n1/size: input/output error"}}
			return st
		}(), wantReady: []string{qlc1 + "=/dev/cas1-2"}, wantHeld: []string{qlc0 + ": its size could not be read, its latest inventory record is partial (Readable: sys/block/nvme10n1/size: input/output error)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ClaimOSDsOf("node-a", cachePlan(), tc.status)
			var gotReady, gotHeld []string
			for _, o := range got.Ready {
				if o.DataDevice == qlc2 {
					// QLC_02's fast device runs no cache: its OSD is on the device itself, at once.
					if o.Cached || o.DataPath != qlc2 {
						t.Errorf("QLC_02 = %+v", o)
					}
					continue
				}
				if !o.Cached {
					t.Errorf("%s is behind a cache but not Cached", o.DataDevice)
				}
				gotReady = append(gotReady, o.DataDevice+"="+o.DataPath)
			}
			for _, h := range got.Held {
				gotHeld = append(gotHeld, h.DataDevice+": "+h.Reason)
				if h.Partial != strings.Contains(h.Reason, "partial") {
					t.Errorf("%s: Partial %v, reason %q", h.DataDevice, h.Partial, h.Reason)
				}
			}
			if strings.Join(gotReady, " ") != strings.Join(tc.wantReady, " ") {
				t.Errorf("ready = %v, want %v", gotReady, tc.wantReady)
			}
			if strings.Join(gotHeld, " | ") != strings.Join(tc.wantHeld, " | ") {
				t.Errorf("held = %v, want %v", gotHeld, tc.wantHeld)
			}
			if n := len(got.Ready) + len(got.Held); n != 3 {
				t.Errorf("%d devices sorted, want all 3 of the node", n)
			}
		})
	}
	// The OSD carries its slot and sizes from the plan and the inventory.
	got := ClaimOSDsOf("node-a", cachePlan(), cacheNodeStatus(ready(qlc0, 1), ready(qlc1, 2)))
	o := got.Ready[1]
	if o.Node != "node-a" || o.FastDevice != fastA || o.Slot != fastA+"-part2" || o.SlotSizeBytes != 60*GiB || o.DataSizeBytes != p5316 {
		t.Errorf("QLC_01's OSD = %+v", o)
	}
}

func TestParseExportedObject(t *testing.T) {
	for _, tc := range []struct {
		in           string
		cache, core  int32
		wantErrorSub string
	}{
		{in: "/dev/cas1-1", cache: 1, core: 1},
		{in: "/dev/cas16384-4095", cache: 16384, core: 4095},
		{in: "/dev/cas3-0", cache: 3, core: 0},
		{in: "/dev/cas0-1", wantErrorSub: "cache 1-16384"},
		{in: "/dev/cas16385-1", wantErrorSub: "cache 1-16384"},
		{in: "/dev/cas1-4096", wantErrorSub: "core 0-4095"},
		{in: "/dev/cas01-1", wantErrorSub: "cache 1-16384"},
		{in: "/dev/cas1-+1", wantErrorSub: "core 0-4095"},
		{in: "/dev/cas1", wantErrorSub: "is not /dev/cas<cache>-<core>"},
		{in: "/dev/sda", wantErrorSub: "is not /dev/cas<cache>-<core>"},
		{in: "/dev/cas1-1/../sda", wantErrorSub: "core 0-4095"},
		{in: "", wantErrorSub: "is not /dev/cas<cache>-<core>"},
	} {
		cache, core, err := ParseExportedObject(tc.in)
		switch {
		case tc.wantErrorSub == "" && (err != nil || cache != tc.cache || core != tc.core):
			t.Errorf("%q: %d %d %v, want %d %d", tc.in, cache, core, err, tc.cache, tc.core)
		case tc.wantErrorSub != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrorSub)):
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.wantErrorSub)
		}
	}
}

func TestDeviceSetNameIsStableShortAndDistinct(t *testing.T) {
	// Expected hashes from `printf 'node\ndevice' | sha256sum | cut -c1-10`: names live in
	// clusters (set, claims, volumes) and must never change between Prism versions.
	if got := DeviceSetName("node-a", qlc0); got != "prism-node-a-fcb40f5a41" {
		t.Errorf("DeviceSetName(node-a, QLC_00) = %q", got)
	}
	long := DeviceSetName("Worker.Example.COM-with-a-very-long-name", qlc0)
	if long != "prism-worker-example-com-w-66f15294f6" {
		t.Errorf("long node name gives %q", long)
	}
	if len(long) > 37 || len(validation.IsDNS1123Label(long)) > 0 {
		t.Errorf("%q is not a DNS label of at most 37 characters", long)
	}
	if DeviceSetName("node-a", qlc1) == DeviceSetName("node-a", qlc0) || DeviceSetName("node-b", qlc0) == DeviceSetName("node-a", qlc0) {
		t.Error("different devices or nodes share a set name")
	}
}

func TestLabelValue(t *testing.T) {
	short := "policy-1"
	if LabelValue(short) != short {
		t.Errorf("short name changed to %q", LabelValue(short))
	}
	long := strings.Repeat("a.b-", 40) + "z"
	got := LabelValue(long)
	if len(validation.IsValidLabelValue(got)) > 0 || got == LabelValue(long+"y") {
		t.Errorf("LabelValue(long) = %q (%v)", got, validation.IsValidLabelValue(got))
	}
}

func FuzzParseExportedObject(f *testing.F) {
	for _, s := range []string{"/dev/cas1-1", "/dev/cas16384-4095", "/dev/cas0-0", "/dev/cas1-", "/dev/sda"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cache, core, err := ParseExportedObject(s)
		if err != nil {
			return
		}
		if cache < 1 || cache > 16384 || core < 0 || core > 4095 {
			t.Fatalf("%q parsed to out-of-range ids %d %d", s, cache, core)
		}
		// Accepted paths are canonical: they print back to themselves.
		if want := "/dev/cas" + itoa(cache) + "-" + itoa(core); want != s {
			t.Fatalf("%q accepted but is not canonical %q", s, want)
		}
	})
}

func FuzzDeviceSetName(f *testing.F) {
	f.Add("node-a", qlc0)
	f.Add("", "")
	f.Add("ÄÖ.__--", "x")
	f.Fuzz(func(t *testing.T, node, device string) {
		name := DeviceSetName(node, device)
		if len(name) > 37 || len(validation.IsDNS1123Label(name)) > 0 {
			t.Fatalf("DeviceSetName(%q, %q) = %q is not a DNS label of at most 37 characters", node, device, name)
		}
		for _, role := range []string{RoleData, RoleMetadata} {
			if v := VolumeName(name, role); len(validation.IsValidLabelValue(v)) > 0 {
				t.Fatalf("volume name %q is not a label value", v)
			}
		}
		if v := LabelValue(node); node != "" && isLabelish(node) && len(validation.IsValidLabelValue(v)) > 0 {
			t.Fatalf("LabelValue(%q) = %q", node, v)
		}
	})
}

// isLabelish is true for what Kubernetes allows as a node or policy name (a DNS subdomain).
func isLabelish(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }

func itoa(n int32) string { return strconv.Itoa(int(n)) }
