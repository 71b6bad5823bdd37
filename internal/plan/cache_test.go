package plan

import (
	"reflect"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
)

func TestCachePlan(t *testing.T) {
	def := ioclass.DefaultCephOSD()
	defCSV := func() string {
		cfg, err := ioclass.Compile(&def.Spec)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.CSV()
	}()
	broken := def.DeepCopy()
	broken.Spec.Classes[1].Allocation = "2"
	tests := []struct {
		name    string
		cache   prismv1.CacheSpec
		classes *prismv1.ClassificationPolicy
		want    *prismv1.NodeCachePlan
		wantErr string
	}{
		{name: "off", cache: prismv1.CacheSpec{Mode: prismv1.CacheNone}},
		{name: "unset mode is off", cache: prismv1.CacheSpec{}},
		{name: "defaults filled", cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack},
			want: &prismv1.NodeCachePlan{Mode: prismv1.CacheWriteBack, LineSizeKiB: 4, CacheSettings: prismv1.CacheSettings{DirtyData: prismv1.DirtyDataPreserve}}},
		{name: "settings carried", cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteThrough, LineSizeKiB: 64, CacheSettings: prismv1.CacheSettings{
			Cleaning: &prismv1.CacheCleaning{Policy: prismv1.CleaningAcp}, DirtyData: prismv1.DirtyDataAllowLoss}},
			want: &prismv1.NodeCachePlan{Mode: prismv1.CacheWriteThrough, LineSizeKiB: 64, CacheSettings: prismv1.CacheSettings{
				Cleaning: &prismv1.CacheCleaning{Policy: prismv1.CleaningAcp}, DirtyData: prismv1.DirtyDataAllowLoss}}},
		{name: "classes compiled", cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack, ClassificationPolicyName: "ceph-osd"}, classes: def,
			want: &prismv1.NodeCachePlan{Mode: prismv1.CacheWriteBack, LineSizeKiB: 4, CacheSettings: prismv1.CacheSettings{DirtyData: prismv1.DirtyDataPreserve},
				ClassificationPolicyName: "ceph-osd", IOClassCSV: defCSV}},
		{name: "classification policy missing", cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack, ClassificationPolicyName: "nope"},
			wantErr: `spec.cache.classificationPolicyName: ClassificationPolicy "nope" not found`},
		{name: "another policy's classes are not used", cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack, ClassificationPolicyName: "other"}, classes: def,
			wantErr: `ClassificationPolicy "other" not found`},
		{name: "classes that do not compile", cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack, ClassificationPolicyName: "ceph-osd"}, classes: broken,
			wantErr: `ClassificationPolicy "ceph-osd" does not compile: spec.classes[1].allocation`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CachePlan(&prismv1.HybridStoragePolicySpec{Cache: tc.cache}, tc.classes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("a plan came with the error: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && !reflect.DeepEqual(*got, *tc.want)) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if !strings.HasPrefix(defCSV, "IO class id,IO class name,Eviction priority,Allocation\n") {
		t.Errorf("the compiled CSV does not start with casadm's header: %q", defCSV)
	}
}

// Cache ids follow fast devices across plans: a device keeps its id when another device
// joins or leaves, and a new device takes the lowest free id.
func TestPlanLayoutCacheIDsAreStable(t *testing.T) {
	spec := &prismv1.HybridStoragePolicySpec{Cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack}, DB: prismv1.DBSizing{PercentOfData: pct(1)}}
	devs, sel := node(3, optane375, 3, p5316)
	first := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	ids := cacheIDs(first.Plan)
	if ids["/dev/disk/by-id/nvme-FAST_00"] != 1 || ids["/dev/disk/by-id/nvme-FAST_01"] != 2 || ids["/dev/disk/by-id/nvme-FAST_02"] != 3 {
		t.Fatalf("first plan's cache ids: %v", ids)
	}
	// FAST_00 leaves: the others keep 2 and 3.
	sel2 := sel
	sel2.Fast = sel.Fast[1:]
	second := PlanLayout(LayoutInput{Selection: sel2, Devices: devs, Spec: spec, Previous: &first.Plan})
	ids = cacheIDs(second.Plan)
	if len(ids) != 2 || ids["/dev/disk/by-id/nvme-FAST_01"] != 2 || ids["/dev/disk/by-id/nvme-FAST_02"] != 3 {
		t.Fatalf("after FAST_00 left: %v", ids)
	}
	// A new device takes the freed id 1.
	devs = append(devs, prismv1.Device{Name: "nvme9n1", StablePath: "/dev/disk/by-id/nvme-FAST_09", SizeBytes: optane375})
	sel2.Fast = append(sel2.Fast, prismv1.SelectedDevice{Name: "nvme9n1", StablePath: "/dev/disk/by-id/nvme-FAST_09", SizeBytes: optane375})
	third := PlanLayout(LayoutInput{Selection: sel2, Devices: devs, Spec: spec, Previous: &second.Plan})
	ids = cacheIDs(third.Plan)
	if ids["/dev/disk/by-id/nvme-FAST_09"] != 1 || ids["/dev/disk/by-id/nvme-FAST_01"] != 2 || ids["/dev/disk/by-id/nvme-FAST_02"] != 3 {
		t.Fatalf("after FAST_09 joined: %v", ids)
	}
	// Without a cache no device gets an id.
	off := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: &prismv1.HybridStoragePolicySpec{DB: spec.DB}})
	if ids := cacheIDs(off.Plan); len(ids) != 0 {
		t.Errorf("cache ids without a cache: %v", ids)
	}
}

func cacheIDs(p prismv1.NodePlan) map[string]int32 {
	ids := map[string]int32{}
	for _, f := range p.FastDevices {
		if f.CacheID != 0 {
			if f.Cache == nil {
				ids["no cache partition but an id: "+f.StablePath] = f.CacheID
			}
			ids[f.StablePath] = f.CacheID
		}
	}
	return ids
}

func TestCacheCoresFollowSlotOrder(t *testing.T) {
	f := prismv1.FastDevicePlan{Slots: []prismv1.DBSlot{
		{Index: 2, DataDevice: "/dev/disk/by-id/c"}, {Index: 0, DataDevice: "/dev/disk/by-id/a"}, {Index: 1}, {Index: 3, DataDevice: "/dev/disk/by-id/b"},
	}}
	got := strings.Join(f.CacheCores(), " ")
	if want := "/dev/disk/by-id/a /dev/disk/by-id/c /dev/disk/by-id/b"; got != want {
		t.Errorf("cores %q, want %q", got, want)
	}
}

// Turning the cache off keeps the cache partition and its id (it may hold dirty data; the
// agent flushes and stops the cache) and says so.
func TestPlanLayoutCacheOffKeepsThePartition(t *testing.T) {
	on := &prismv1.HybridStoragePolicySpec{Cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteBack}, DB: prismv1.DBSizing{PercentOfData: pct(1)}}
	devs, sel := node(1, optane375, 2, p5316)
	first := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: on})
	off := on.DeepCopy()
	off.Cache.Mode = prismv1.CacheNone
	second := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: off, Previous: &first.Plan})
	a, b := first.Plan.FastDevices[0], second.Plan.FastDevices[0]
	if a.Cache == nil || b.Cache == nil || *a.Cache != *b.Cache || a.CacheID != 1 || b.CacheID != 1 {
		t.Fatalf("cache partition on: %+v (id %d), off: %+v (id %d)", a.Cache, a.CacheID, b.Cache, b.CacheID)
	}
	if len(second.Warnings) != 1 || !strings.Contains(second.Warnings[0], "the cache is off; its partition 3 stays") {
		t.Errorf("warnings: %q", second.Warnings)
	}
	// A node that never had a cache gets no partition with the cache off.
	if fresh := PlanLayout(LayoutInput{Selection: sel, Devices: devs, Spec: off}); fresh.Plan.FastDevices[0].Cache != nil {
		t.Errorf("a cache partition with the cache off: %+v", fresh.Plan.FastDevices[0].Cache)
	}
}
