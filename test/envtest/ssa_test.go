package envtest

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// GitOps tools apply policies with server-side apply. Setting a selector or the DB sizing back
// to {} — the documented "every node", "every device of the tier", "the default size" — must
// replace what an earlier apply set, not merge into it (or fail, as it did with
// `must be of type object: "null"`). The selector-like structs are atomic, as Kubernetes
// marks its own LabelSelector.
func TestServerSideApplyCanEmptyTheSelectors(t *testing.T) {
	ctx := context.Background()
	name := unique("ssa")
	apply := func(spec map[string]any) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": prismv1.GroupVersion.String(), "kind": "HybridStoragePolicy",
			"metadata": map[string]any{"name": name},
			"spec":     spec,
		}}
		return env.Client.Patch(ctx, u, client.Apply, client.FieldOwner("gitops"), client.ForceOwnership)
	}
	base := func() map[string]any {
		return map[string]any{
			"mode":            "DryRun",
			"cephCluster":     map[string]any{"namespace": "rook-ceph", "name": "rook-ceph"},
			"nodeSelector":    map[string]any{"matchLabels": map[string]any{"prism.storage.io/role": "storage"}},
			"fastDevices":     map[string]any{"tiers": []any{"Fast"}, "models": []any{"INTEL SSDPF21Q*"}},
			"capacityDevices": map[string]any{"size": "10T:40T"},
			"db":              map[string]any{"size": "60Gi", "spareSlots": int64(1)},
		}
	}
	if err := apply(base()); err != nil {
		t.Fatalf("first apply: %v", err)
	}
	// Empty each, one field at a time, then change one label of the selector.
	for _, field := range []string{"nodeSelector", "fastDevices", "capacityDevices", "db"} {
		spec := base()
		spec[field] = map[string]any{}
		if err := apply(spec); err != nil {
			t.Fatalf("apply with %s: {}: %v", field, err)
		}
		got := &prismv1.HybridStoragePolicy{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		var empty bool
		switch field {
		case "nodeSelector":
			empty = len(got.Spec.NodeSelector.MatchLabels) == 0 && len(got.Spec.NodeSelector.MatchExpressions) == 0
		case "fastDevices":
			empty = len(got.Spec.FastDevices.Tiers) == 0 && len(got.Spec.FastDevices.Models) == 0
		case "capacityDevices":
			empty = got.Spec.CapacityDevices.Size == ""
		case "db":
			empty = got.Spec.DB.Size == nil && got.Spec.DB.SpareSlots == 0
		}
		if !empty {
			t.Errorf("after applying %s: {} the stored policy still has %+v", field, got.Spec)
		}
		if err := apply(base()); err != nil {
			t.Fatalf("re-apply: %v", err)
		}
	}
	// A field left out of the next apply is removed (this manager owned it).
	spec := base()
	delete(spec, "db")
	if err := apply(spec); err != nil {
		t.Fatal(err)
	}
	removed := &prismv1.HybridStoragePolicy{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, removed); err != nil {
		t.Fatal(err)
	}
	if removed.Spec.DB.Size != nil || removed.Spec.DB.SpareSlots != 0 {
		t.Errorf("db left out of the apply is still %+v", removed.Spec.DB)
	}
	spec = base()
	spec["nodeSelector"] = map[string]any{"matchLabels": map[string]any{"topology.kubernetes.io/zone": "rack-2"}}
	if err := apply(spec); err != nil {
		t.Fatal(err)
	}
	got := &prismv1.HybridStoragePolicy{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
		t.Fatal(err)
	}
	if l := got.Spec.NodeSelector.MatchLabels; len(l) != 1 || l["topology.kubernetes.io/zone"] != "rack-2" {
		t.Errorf("after changing the selector's one label: %v, want only the new one", l)
	}
}
