package rook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CephClusterGVK is Rook's CephCluster.
var CephClusterGVK = schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster"}

// ManagedNodesAnnotation records, on the CephCluster, which nodes' entries a policy owns, so
// that entries of nodes the policy lets go are removed and everybody else's are kept.
func ManagedNodesAnnotation(policy string) string {
	name := policy
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(policy))
		name = name[:50] + "-" + hex.EncodeToString(sum[:])[:12]
	}
	return "nodes.prism.storage.io/" + name
}

// ReleaseAnnotation records on the CephCluster the last re-created OSD a policy handed to
// Rook, so that pacing survives operator restarts.
func ReleaseAnnotation(policy string) string {
	return "replacing." + ManagedNodesAnnotation(policy)
}

// healthChanged is the CephCluster's status.ceph.lastChanged: when Ceph's health last changed
// (zero when Rook has not reported it).
func healthChanged(cluster *unstructured.Unstructured) time.Time {
	// Rook writes lastChanged as RFC 3339 (pkg/operator/ceph/cluster/cephstatus.go formatTime).
	changed, _, _ := unstructured.NestedString(cluster.Object, "status", "ceph", "lastChanged")
	t, err := time.Parse(time.RFC3339, changed)
	if err != nil {
		return time.Time{}
	}
	return t
}

// lastRelease is the release annotation's re-created OSD (nil when none or unreadable).
func lastRelease(cluster *unstructured.Unstructured, policy string) *Release {
	if v := cluster.GetAnnotations()[ReleaseAnnotation(policy)]; v != "" {
		if r, err := ParseRelease(v); err == nil {
			return &r
		}
	}
	return nil
}

func configApplied(cluster *unstructured.Unstructured, config map[string]any) bool {
	for who, v := range config {
		for k, want := range v.(map[string]any) {
			got, _, _ := unstructured.NestedString(cluster.Object, "spec", "cephConfig", who, k)
			if got != want {
				return false
			}
		}
	}
	return true
}

// applyObject is the apply configuration: only the fields Prism owns.
func applyObject(cluster *unstructured.Unstructured, key, managed string, nodes []any, config map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"storage": map[string]any{"nodes": nodes}},
	}}
	u.SetGroupVersionKind(CephClusterGVK)
	u.SetNamespace(cluster.GetNamespace())
	u.SetName(cluster.GetName())
	if key != "" {
		u.SetAnnotations(map[string]string{key: managed})
	}
	if config != nil {
		_ = unstructured.SetNestedMap(u.Object, config, "spec", "cephConfig")
	}
	return u
}

// OwnsField says whether manager's server-side apply owns the field at path.
func OwnsField(obj *unstructured.Unstructured, manager string, path ...string) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != "Apply" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if json.Unmarshal(mf.FieldsV1.Raw, &fields) != nil {
			continue
		}
		found := true
		for _, p := range path {
			next, ok := fields["f:"+p].(map[string]any)
			if !ok {
				found = false
				break
			}
			fields = next
		}
		if found {
			return true
		}
	}
	return false
}

// Removal is what a deleted policy leaves behind: its entries and annotation go from the
// CephCluster; device sets whose volumes a claim holds stay (Rook cannot reconcile an OSD
// whose set is gone), the other sets go, and their volumes with them.
type Removal struct {
	// Object is the apply configuration; nil when the CephCluster needs no apply.
	Object *unstructured.Unstructured
	// DeleteVolumes are deleted after the apply.
	DeleteVolumes []corev1.PersistentVolume
}

// DecideRemoval decides the removal from the policy's name, manager and ledger, and the
// CephCluster (nil when it does not exist).
func DecideRemoval(policy, manager string, cluster *unstructured.Unstructured, ledger map[string]LedgerSet) (Removal, error) {
	in := Input{Policy: policy, Manager: manager, Cluster: cluster, Ledger: ledger}
	sets, _, err := decideDeviceSets(in, nil, nil, nil)
	if err != nil {
		return Removal{}, err
	}
	out := Removal{DeleteVolumes: sets.obsolete}
	if cluster == nil {
		return out, nil
	}
	previous, ok := cluster.GetAnnotations()[ManagedNodesAnnotation(policy)]
	if !ok && !sets.changed() {
		return out, nil
	}
	existing, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "storage", "nodes")
	merged, err := MergeRookNodes(existing, splitNodes(previous), nil)
	if err != nil {
		return Removal{}, err
	}
	out.Object = applyObject(cluster, "", "", merged, nil)
	sets.addTo(out.Object)
	return out, nil
}
