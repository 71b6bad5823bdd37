package envtest

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
)

func newPolicy(testLabel string, mode prismv1.PolicyMode) *prismv1.HybridStoragePolicy {
	return &prismv1.HybridStoragePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: unique("policy")},
		Spec: prismv1.HybridStoragePolicySpec{
			Mode:         mode,
			NodeSelector: prismv1.NodeSelector{MatchLabels: map[string]prismv1.LabelValue{"prism-test": prismv1.LabelValue(testLabel), "prism.storage.io/role": "storage"}},
			CephCluster:  prismv1.ObjectRef{Namespace: "rook-ceph", Name: "rook-ceph"},
			// 60 GiB slots: what fits 3-4 QLC drives on one Optane (2 % of 15 TB would not).
			DB: prismv1.DBSizing{Size: resource.NewQuantity(60<<30, resource.BinarySI)},
		},
	}
}

// reconcile runs the real reconciler until the policy is settled (the first pass only adds
// the finalizer) and returns the policy as stored.
func reconcile(t *testing.T, name string) *prismv1.HybridStoragePolicy {
	t.Helper()
	return reconcileAs(t, env.Client, name)
}

func selectionOf(p *prismv1.HybridStoragePolicy, node string) *prismv1.NodeSelection {
	for i := range p.Status.Nodes {
		if p.Status.Nodes[i].Node == node {
			return &p.Status.Nodes[i]
		}
	}
	return nil
}

func names(devs []prismv1.SelectedDevice) string {
	var n []string
	for _, d := range devs {
		n = append(n, d.Name)
	}
	return strings.Join(n, ",")
}

func TestPolicySelectsFastAndCapacityDevicesPerNode(t *testing.T) {
	ctx := context.Background()
	label := unique("select")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	policy := newPolicy(label, prismv1.ModeApply)
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	p := reconcile(t, policy.Name)

	if p.Status.SelectedNodes != int32(len(nodes)) || p.Status.ReadyNodes != pairable(nodes) || pairable(nodes) < 2 || p.Status.ObservedGeneration != p.Generation {
		t.Errorf("selected/ready/observedGeneration = %d/%d/%d", p.Status.SelectedNodes, p.Status.ReadyNodes, p.Status.ObservedGeneration)
	}
	a := selectionOf(p, nodes["optane-qlc-a"].name)
	if a == nil || names(a.Fast) != "nvme0n1" || names(a.Capacity) != "nvme1n1,nvme2n1,nvme3n1" {
		t.Fatalf("node a selection = %+v", a)
	}
	rejected := map[string]string{}
	for _, r := range a.Rejected {
		rejected[r.Name] = r.Reason
	}
	if !strings.Contains(rejected["nvme4n1"], "NoSignatures") || !strings.Contains(rejected["nvme4n1"], "ceph_bluestore") {
		t.Errorf("nvme4n1 (leftover BlueStore label) rejected for %q", rejected["nvme4n1"])
	}
	if !strings.Contains(rejected["sda"], "tier Other") {
		t.Errorf("sda (TLC boot disk) rejected for %q", rejected["sda"])
	}
	b := selectionOf(p, nodes["optane-qlc-b"].name)
	if b == nil || len(b.Fast) != 2 || len(b.Capacity) != 8 {
		t.Errorf("node b selection = %+v", b)
	}
	c := selectionOf(p, nodes["tlc-only-c"].name)
	if c == nil || len(c.Fast)+len(c.Capacity) != 0 || !strings.Contains(c.Message, "no device matched") {
		t.Errorf("node c selection = %+v", c)
	}
	ready := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != hybridstoragepolicy.ReasonNodesIncomplete || !strings.Contains(ready.Message, nodes["tlc-only-c"].name) {
		t.Errorf("Ready condition = %+v", ready)
	}
	for _, n := range nodes {
		sn := &prismv1.StorageNode{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, sn); err != nil {
			t.Fatal(err)
		}
		if sn.Spec.PolicyName != policy.Name {
			t.Errorf("StorageNode %s claimed by %q, want %q", n.name, sn.Spec.PolicyName, policy.Name)
		}
	}
}

// A wipe grant covers fast devices only (decision 0020): the QLC drive with an old BlueStore
// label stays rejected, and the rejection says why and what to do.
func TestWipeGrantDoesNotCoverCapacityDevices(t *testing.T) {
	ctx := context.Background()
	label := unique("wipe")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	a := nodes["optane-qlc-a"]
	policy := newPolicy(label, prismv1.ModeDryRun)
	policy.Spec.AllowWipe = []prismv1.WipeGrant{{Node: a.name, Path: "/dev/disk/by-id/nvme-INTEL_SSDPE2NV153T8_PHLN912000A415PAGN"}}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	p := reconcile(t, policy.Name)
	sel := selectionOf(p, a.name)
	if sel == nil || names(sel.Capacity) != "nvme1n1,nvme2n1,nvme3n1" {
		t.Fatalf("a wipe grant must not select the capacity drive nvme4n1: %+v", sel)
	}
	found := false
	for _, r := range sel.Rejected {
		if r.Name == "nvme4n1" {
			found = strings.Contains(r.Reason, "NoSignatures") && strings.Contains(r.Reason, "allowWipe does not cover capacity devices")
			if !found {
				t.Errorf("nvme4n1 rejected with %q", r.Reason)
			}
		}
	}
	if !found {
		t.Errorf("nvme4n1 is not among the rejected devices: %+v", sel.Rejected)
	}
}

func TestNodeBelongsToOnePolicy(t *testing.T) {
	ctx := context.Background()
	label := unique("claim")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	first, second := newPolicy(label, prismv1.ModeApply), newPolicy(label, prismv1.ModeApply)
	for _, p := range []*prismv1.HybridStoragePolicy{first, second} {
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	reconcile(t, first.Name)
	p2 := reconcile(t, second.Name)
	sel := selectionOf(p2, nodes["optane-qlc-b"].name)
	if sel == nil || len(sel.Fast)+len(sel.Capacity) != 0 || !strings.Contains(sel.Message, "managed by policy "+first.Name) {
		t.Fatalf("second policy selection on a claimed node = %+v", sel)
	}
	if p2.Status.ReadyNodes != 0 {
		t.Errorf("second policy reports %d ready nodes on nodes it does not own", p2.Status.ReadyNodes)
	}

	// Deleting the first policy releases its nodes (and touches no device); the second then takes them.
	if err := env.Client.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	if gone := reconcile(t, first.Name); gone.Name != "" {
		t.Fatalf("first policy still exists after its finalizer ran: %+v", gone.ObjectMeta)
	}
	p2 = reconcile(t, second.Name)
	if p2.Status.ReadyNodes != pairable(nodes) {
		t.Errorf("after the first policy went away the second has %d ready nodes, want %d", p2.Status.ReadyNodes, pairable(nodes))
	}
}

func TestDryRunWritesStatusOnly(t *testing.T) {
	ctx := context.Background()
	label := unique("dryrun")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	policy := newPolicy(label, prismv1.ModeDryRun)
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	p := reconcile(t, policy.Name)
	if p.Status.ReadyNodes != pairable(nodes) {
		t.Errorf("dry run should still compute the selection: %d ready nodes", p.Status.ReadyNodes)
	}
	for _, n := range nodes {
		sn := &prismv1.StorageNode{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, sn); err != nil {
			t.Fatal(err)
		}
		if sn.Spec.PolicyName != "" {
			t.Errorf("dry run claimed StorageNode %s", n.name)
		}
	}
}
