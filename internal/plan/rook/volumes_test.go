package rook

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// p5316 is a D5-P5316 15.36 TB, as internal/plan/layout_test.go has it (fastA, qlc0 and qlc1
// are claims_test.go's).
const p5316 = int64(15362991415296)

func TestLocalVolumesAndDeviceSetPairADeviceWithItsOwnSlot(t *testing.T) {
	osds := []ClaimOSD{
		{Node: "node-a", DataDevice: qlc0, DataPath: "/dev/cas1-1", Cached: true, DataSizeBytes: p5316, FastDevice: fastA, Slot: fastA + "-part1", SlotSizeBytes: 60 * GiB},
		{Node: "node-a", DataDevice: qlc1, DataPath: "/dev/cas1-2", Cached: true, DataSizeBytes: p5316, FastDevice: fastA, Slot: fastA + "-part2", SlotSizeBytes: 60 * GiB},
	}
	var volumes []*corev1.PersistentVolume
	for _, o := range osds {
		d, m := LocalVolumes(o, "node-a.example.com", "policy-1")
		volumes = append(volumes, d, m)
	}
	for i, o := range osds {
		data, meta := volumes[2*i], volumes[2*i+1]
		if data.Spec.Local.Path != o.DataPath || meta.Spec.Local.Path != o.Slot {
			t.Errorf("%s: volume paths %s and %s, want the exported object and the slot", o.DataDevice, data.Spec.Local.Path, meta.Spec.Local.Path)
		}
		if c := data.Spec.Capacity[corev1.ResourceStorage]; c.Value() != p5316 {
			t.Errorf("data capacity %s", c.String())
		}
		if c := meta.Spec.Capacity[corev1.ResourceStorage]; c.Value() != 60*GiB {
			t.Errorf("metadata capacity %s", c.String())
		}
		for _, v := range []*corev1.PersistentVolume{data, meta} {
			term := v.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
			if term.Key != "kubernetes.io/hostname" || term.Values[0] != "node-a.example.com" ||
				*v.Spec.VolumeMode != corev1.PersistentVolumeBlock || v.Spec.StorageClassName != LocalStorageClass ||
				v.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || v.Labels[LabelPolicy] != "policy-1" ||
				v.Annotations[AnnotationNode] != "node-a" {
				t.Errorf("volume %s = %+v %+v", v.Name, v.ObjectMeta, v.Spec)
			}
			if errs := validation.IsDNS1123Subdomain(v.Name); len(errs) > 0 || len(v.Name) > 63 {
				t.Errorf("volume name %q: %v", v.Name, errs)
			}
		}

		// The set's claim templates each select exactly one of all the volumes: this device's.
		set := DeviceSet(o, "qlc")
		if set.Name != DeviceSetName("node-a", o.DataDevice) || set.Count != 1 || set.Portable || len(set.VolumeClaimTemplates) != 2 {
			t.Fatalf("set = %+v", set)
		}
		for _, tmpl := range set.VolumeClaimTemplates {
			sel := labels.SelectorFromSet(tmpl.Spec.Selector.MatchLabels)
			var matched []string
			for _, v := range volumes {
				if sel.Matches(labels.Set(v.Labels)) {
					matched = append(matched, v.Name)
				}
			}
			want := map[string]*corev1.PersistentVolume{RoleData: data, RoleMetadata: meta}[tmpl.Metadata.Name]
			if want == nil || len(matched) != 1 || matched[0] != want.Name {
				t.Fatalf("template %q selects %v", tmpl.Metadata.Name, matched)
			}
			req, capacity := tmpl.Spec.Resources.Requests[corev1.ResourceStorage], want.Spec.Capacity[corev1.ResourceStorage]
			if req.Cmp(capacity) > 0 || *tmpl.Spec.StorageClassName != LocalStorageClass || *tmpl.Spec.VolumeMode != corev1.PersistentVolumeBlock ||
				tmpl.Spec.AccessModes[0] != want.Spec.AccessModes[0] {
				t.Errorf("template %q cannot bind %s: %+v", tmpl.Metadata.Name, want.Name, tmpl.Spec)
			}
		}
		if set.VolumeClaimTemplates[0].Metadata.Annotations["crushDeviceClass"] != "qlc" {
			t.Errorf("data template annotations = %v", set.VolumeClaimTemplates[0].Metadata.Annotations)
		}
	}
}

func TestMergeRookDeviceSetsKeepsForeignSetsInPlace(t *testing.T) {
	o := ClaimOSD{Node: "node-a", DataDevice: qlc0, DataPath: "/dev/cas1-1", Cached: true, DataSizeBytes: p5316, FastDevice: fastA, Slot: fastA + "-part1", SlotSizeBytes: 60 * GiB}
	mine := DeviceSet(o, "qlc")
	existing := []any{
		map[string]any{"name": "user-ssd", "count": int64(3)},
		map[string]any{"name": "prism-node-b-0123456789", "count": int64(1)}, // was Prism's, now released
		map[string]any{"name": mine.Name, "count": int64(7)},                 // Prism's, outdated
		map[string]any{"name": "user-hdd", "count": int64(2)},
	}
	merged, err := MergeRookDeviceSets(existing, []string{"prism-node-b-0123456789"}, []RookDeviceSet{mine})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range merged {
		names = append(names, e.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "user-ssd,user-hdd,"+mine.Name {
		t.Fatalf("merged sets %v", names)
	}
	if c := merged[2].(map[string]any)["count"]; c != int64(1) {
		t.Errorf("count = %#v, want int64 1 as the API server returns it", c)
	}
	if _, err := MergeRookDeviceSets([]any{"oops"}, nil, nil); err == nil || !strings.Contains(err.Error(), "spec.storage.storageClassDeviceSets[0]") {
		t.Errorf("a malformed entry gives %v", err)
	}
	// The footprint per OSD in the CephCluster (docs/decisions/0010-rook-osds-on-cas.md).
	b, _ := json.Marshal(merged[2])
	t.Logf("one device set is %d bytes of JSON", len(b))
}

func TestVolumeDrift(t *testing.T) {
	o := ClaimOSD{Node: "node-a", DataDevice: qlc0, DataPath: "/dev/cas1-1", Cached: true, DataSizeBytes: p5316, FastDevice: fastA, Slot: fastA + "-part1", SlotSizeBytes: 60 * GiB}
	want, _ := LocalVolumes(o, "node-a", "policy-1")
	if im, mu := VolumeDrift(want.DeepCopy(), want); len(im)+len(mu) != 0 {
		t.Fatalf("identical volumes drift: %v %v", im, mu)
	}
	moved := want.DeepCopy()
	moved.Spec.Local.Path = "/dev/cas1-2"
	moved.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"node-b"}
	if im, _ := VolumeDrift(moved, want); strings.Join(im, "; ") != `spec.local.path "/dev/cas1-2" (want "/dev/cas1-1"); spec.nodeAffinity "node-b" (want "node-a")` {
		t.Errorf("immutable drift = %v", im)
	}
	relabelled := want.DeepCopy()
	relabelled.Labels[LabelPolicy] = "policy-0"
	delete(relabelled.Annotations, AnnotationDevice)
	relabelled.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: *resourceOf(GiB)}
	im, mu := VolumeDrift(relabelled, want)
	if len(im) != 0 || strings.Join(mu, ",") != "metadata.annotations[prism.storage.io/device],metadata.labels[prism.storage.io/policy],spec.capacity" {
		t.Errorf("drift = %v / %v", im, mu)
	}
	fs := want.DeepCopy()
	fs.Spec.VolumeMode = nil
	if im, _ := VolumeDrift(fs, want); len(im) != 1 || im[0] != "spec.volumeMode Filesystem" {
		t.Errorf("a filesystem volume drifts %v", im)
	}
}

func resourceOf(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.BinarySI) }
