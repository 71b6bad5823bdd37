package envtest

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
	"github.com/prism-storage/prism/test/support/testenv"
)

// userCephCluster is what an admin applied: fields and a node entry Prism does not own.
const userCephCluster = `
apiVersion: ceph.rook.io/v1
kind: CephCluster
spec:
  cephVersion: {image: quay.io/ceph/ceph:v19.2.3}
  dataDirHostPath: /var/lib/rook
  mon: {count: 3}
  cephConfig:
    global: {osd_pool_default_size: "3"}
  storage:
    useAllNodes: false
    useAllDevices: false
    nodes:
    - name: hdd-node-1
      devices:
      - name: sdb
`

// newCephCluster creates the admin's CephCluster in its own namespace.
func newCephCluster(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return createCephCluster(t, userCephCluster)
}

// createCephCluster creates a CephCluster from manifest, as the admin, in its own namespace,
// one of the operator's Ceph namespaces (the chart's operator.cephNamespaces Role there).
func createCephCluster(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	ns := unique("rook-ceph")
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	grantProbeNamespace(t, ns)
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(ns)
	u.SetName("rook-ceph")
	if err := env.Client.Create(ctx, u, client.FieldOwner("admin")); err != nil {
		t.Fatal(err)
	}
	return u
}

func getCephCluster(t *testing.T, ref *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(hybridstoragepolicy.CephClusterGVK)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ref), u); err != nil {
		t.Fatal(err)
	}
	return u
}

// markProvisioned reports, as the node's agent would, every planned partition Ready.
func markProvisioned(t *testing.T, node string) {
	t.Helper()
	if err := testenv.MarkProvisioned(context.Background(), env.Client, node); err != nil {
		t.Fatal(err)
	}
}

func storageNodes(t *testing.T, c *unstructured.Unstructured) map[string]map[string]any {
	return namedEntries(t, c, "nodes")
}

func TestRookEntriesAppliedOnlyForProvisionedNodesAndForeignFieldsSurvive(t *testing.T) {
	ctx := context.Background()
	label := unique("rook")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	cluster := newCephCluster(t)
	policy := newPolicy(label, prismv1.ModeApply)
	policy.Spec.CephCluster = prismv1.ObjectRef{Namespace: cluster.GetNamespace(), Name: cluster.GetName()}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	p := reconcile(t, policy.Name)
	if c := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured); c == nil || c.Reason != hybridstoragepolicy.ReasonWaitingForPartitions {
		t.Fatalf("before any agent reports partitions: RookConfigured = %+v", c)
	}
	a, b := nodes["optane-qlc-a"], nodes["optane-qlc-b"]
	if got := storageNodes(t, getCephCluster(t, cluster)); len(got) != 1 {
		t.Fatalf("nothing may be applied before partitions exist, nodes = %v", got)
	}

	// Node a's agent reports its partitions: only node a's OSDs appear in the CephCluster.
	markProvisioned(t, a.name)
	reconcile(t, policy.Name)
	c := getCephCluster(t, cluster)
	got := storageNodes(t, c)
	if _, ok := got[a.name]; !ok || len(got) != 2 {
		t.Fatalf("after node a is provisioned the CephCluster has nodes %v", keys(got))
	}
	devices := got[a.name]["devices"].([]any)
	if len(devices) != 3 {
		t.Fatalf("node a has %d OSD devices, want its 3 eligible QLC drives", len(devices))
	}
	first := devices[0].(map[string]any)
	cfg := first["config"].(map[string]any)
	// Settings shared by every device sit in the node's config, which Rook applies to each device.
	nodeCfg := got[a.name]["config"].(map[string]any)
	if !strings.HasPrefix(first["name"].(string), "/dev/disk/by-id/nvme-INTEL_SSDPE2NV153T8_") ||
		cfg["metadataDevice"] != "/dev/disk/by-id/nvme-INTEL_SSDPE21K375GA_PHKE752000AA375AGN-part1" ||
		nodeCfg["databaseSizeMB"] != "61440" || nodeCfg["deviceClass"] != "qlc" {
		t.Fatalf("node a = %v", got[a.name])
	}
	// The admin's fields and node entry survive, and Prism records what it manages.
	if _, ok := got["hdd-node-1"]; !ok {
		t.Error("the admin's node entry was lost")
	}
	if v, _, _ := unstructured.NestedString(c.Object, "spec", "cephConfig", "global", "osd_pool_default_size"); v != "3" {
		t.Error("the admin's cephConfig was lost")
	}
	if v, _, _ := unstructured.NestedInt64(c.Object, "spec", "mon", "count"); v != 3 {
		t.Error("the admin's mon count was lost")
	}
	if c.GetAnnotations()["nodes.prism.storage.io/"+policy.Name] != a.name {
		t.Errorf("annotations = %v", c.GetAnnotations())
	}

	// Nothing changed: no write (one CephCluster apply per change, not per reconcile).
	rv := c.GetResourceVersion()
	reconcile(t, policy.Name)
	if got := getCephCluster(t, cluster).GetResourceVersion(); got != rv {
		t.Errorf("an unchanged plan rewrote the CephCluster (%s -> %s)", rv, got)
	}

	// Every pairable node provisioned: Ready.
	markProvisioned(t, b.name)
	markProvisioned(t, nodes["optane-qlc-homelab-d"].name)
	p = reconcile(t, policy.Name)
	if c := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("RookConfigured = %+v", c)
	}
	if n := len(storageNodes(t, getCephCluster(t, cluster))); n != 4 {
		t.Fatalf("CephCluster has %d nodes, want the admin's and 3 of Prism's", n)
	}

	// Deleting the policy removes Prism's entries and only those.
	if err := env.Client.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcile(t, policy.Name)
	c = getCephCluster(t, cluster)
	if got := storageNodes(t, c); len(got) != 1 || got["hdd-node-1"] == nil {
		t.Fatalf("after deleting the policy the CephCluster has nodes %v", keys(got))
	}
	if _, ok := c.GetAnnotations()["nodes.prism.storage.io/"+policy.Name]; ok {
		t.Error("the policy's annotation is still there")
	}
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil || sn.Spec.Plan != nil || sn.Spec.PolicyName != "" {
		t.Fatalf("node a's plan and claim must be released: %+v %v", sn.Spec, err)
	}
}

func TestRookDryRunAndMissingClusterAndRefusedPlan(t *testing.T) {
	ctx := context.Background()
	label := unique("rookbad")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	cluster := newCephCluster(t)

	t.Run("dry run changes nothing", func(t *testing.T) {
		policy := newPolicy(label, prismv1.ModeDryRun)
		policy.Spec.CephCluster = prismv1.ObjectRef{Namespace: cluster.GetNamespace(), Name: cluster.GetName()}
		if err := env.Client.Create(ctx, policy); err != nil {
			t.Fatal(err)
		}
		before := getCephCluster(t, cluster).GetResourceVersion()
		p := reconcile(t, policy.Name)
		if after := getCephCluster(t, cluster).GetResourceVersion(); after != before {
			t.Error("dry run changed the CephCluster")
		}
		sel := selectionOf(p, nodes["optane-qlc-a"].name)
		if sel == nil || sel.Capacity[0].DBSlot == "" {
			t.Fatalf("dry run must still publish the planned DB slots: %+v", sel)
		}
		for _, n := range nodes {
			sn := &prismv1.StorageNode{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, sn); err != nil || sn.Spec.Plan != nil {
				t.Errorf("dry run wrote a plan for %s", n.name)
			}
		}
		if err := env.Client.Delete(ctx, policy); err != nil {
			t.Fatal(err)
		}
		reconcile(t, policy.Name)
	})

	t.Run("missing CephCluster", func(t *testing.T) {
		policy := newPolicy(label, prismv1.ModeApply)
		policy.Spec.CephCluster = prismv1.ObjectRef{Namespace: "nowhere", Name: "missing"}
		if err := env.Client.Create(ctx, policy); err != nil {
			t.Fatal(err)
		}
		p := reconcile(t, policy.Name)
		c := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured)
		if c == nil || c.Reason != hybridstoragepolicy.ReasonCephClusterNotFound || !strings.Contains(c.Message, "nowhere/missing") {
			t.Fatalf("RookConfigured = %+v", c)
		}
		if err := env.Client.Delete(ctx, policy); err != nil {
			t.Fatal(err)
		}
		reconcile(t, policy.Name)
	})

	t.Run("a plan that does not fit is refused and nothing is written", func(t *testing.T) {
		policy := newPolicy(label, prismv1.ModeApply)
		policy.Spec.CephCluster = prismv1.ObjectRef{Namespace: cluster.GetNamespace(), Name: cluster.GetName()}
		policy.Spec.DB.Size = resource.NewQuantity(200<<30, resource.BinarySI) // 3 x 200 GiB > a 375 GB Optane
		if err := env.Client.Create(ctx, policy); err != nil {
			t.Fatal(err)
		}
		before := getCephCluster(t, cluster).GetResourceVersion()
		p := reconcile(t, policy.Name)
		ready := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionReady)
		if ready == nil || ready.Reason != hybridstoragepolicy.ReasonPlanRefused || !strings.Contains(ready.Message, "is too small for 3 DB slots of 204800 MiB") {
			t.Fatalf("Ready = %+v", ready)
		}
		if getCephCluster(t, cluster).GetResourceVersion() != before {
			t.Error("a refused plan changed the CephCluster")
		}
		for _, n := range nodes {
			sn := &prismv1.StorageNode{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, sn); err != nil || sn.Spec.Plan != nil {
				t.Errorf("a refused policy wrote a plan for %s", n.name)
			}
		}
	})
}

func keys(m map[string]map[string]any) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}
