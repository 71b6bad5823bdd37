package envtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/internal/plan/rook"
)

// cephClusterOfSize is a CephCluster whose storage.nodes make its JSON about size bytes.
func cephClusterOfSize(ns string, size int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"cephVersion": map[string]any{"image": "quay.io/ceph/ceph:v20.2.4"}, "dataDirHostPath": "/var/lib/rook"}}}
	u.SetGroupVersionKind(rook.CephClusterGVK)
	u.SetNamespace(ns)
	u.SetName("ceph")
	var nodes []any
	for n := 0; ; n++ {
		var devices []any
		for d := range 22 {
			devices = append(devices, map[string]any{"name": fmt.Sprintf("/dev/disk/by-id/nvme-INTEL_SSDPF2NV307TZ_PHAC%06d%02dP6AGN", n, d),
				"config": map[string]any{"metadataDevice": fmt.Sprintf("/dev/prism-db-%012x-%02d/prism-db-%02d", n, d, d)}})
		}
		nodes = append(nodes, map[string]any{"name": fmt.Sprintf("node-%05d", n), "config": map[string]any{"deviceClass": "qlc"}, "devices": devices})
		_ = unstructured.SetNestedSlice(u.Object, nodes, "spec", "storage", "nodes")
		if b, _ := json.Marshal(u.Object); len(b) >= size {
			return u
		}
	}
}

// TestEtcdStoresWhatDecideApplies checks rook.SizeLimit against the real API server and
// etcd: a CephCluster at the limit Prism applies is stored, one just over etcd's default
// --max-request-bytes is refused. If etcd's default or the encoding changed, Prism would
// either apply objects that fail on every reconcile or withhold ones that fit.
func TestEtcdStoresWhatDecideApplies(t *testing.T) {
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		size   int
		stored bool
	}{
		{size: int(rook.SizeLimit(0)), stored: true},
		{size: rook.DefaultMaxCephClusterBytes + 16<<10, stored: false},
	} {
		ns := unique("cephsize")
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		obj := cephClusterOfSize(ns, tc.size)
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("prism-operator/size"), client.ForceOwnership)
		switch {
		case tc.stored && err != nil:
			t.Errorf("a CephCluster of %d bytes (Prism's limit) was refused: %v", tc.size, err)
		case !tc.stored && err == nil:
			t.Errorf("a CephCluster of %d bytes (over etcd's default limit) was stored: Prism's limit is too low", tc.size)
		case !tc.stored && !strings.Contains(err.Error(), "too large"):
			t.Errorf("a CephCluster of %d bytes refused for another reason: %v", tc.size, err)
		}
	}
}
