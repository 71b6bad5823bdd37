package envtest

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// TestPlanSurvivesWhatItPutOnTheDevices: once the agent has partitioned node a's fast device
// (a GPT and partitions) and an OSD sits on a capacity device (a BlueStore label), the next
// inventory reports both as holding data. The operator keeps the node's plan as it was; it
// did drop it before (found by the demo, whose agents really partition loop devices). A
// policy that did not plan the node still refuses the same devices.
func TestPlanSurvivesWhatItPutOnTheDevices(t *testing.T) {
	ctx := context.Background()
	label := unique("provisioned")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	policy := newPolicy(label, prismv1.ModeApply)
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcile(t, policy.Name)
	a := nodes["optane-qlc-a"]
	before := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, before); err != nil || before.Spec.Plan == nil {
		t.Fatalf("node a has no plan: %v", err)
	}

	// What provisioning and Rook leave: the fixture's GPT (the boot disk's) on the fast device
	// with a partition in sysfs, and the fixture's BlueStore label on a capacity device.
	copyFile(t, filepath.Join(a.root, "dev", "sda"), filepath.Join(a.root, "dev", "nvme0n1"))
	writeFile(t, filepath.Join(a.root, "sys", "block", "nvme0n1", "nvme0n1p1", "partition"), "1\n")
	copyFile(t, filepath.Join(a.root, "dev", "nvme4n1"), filepath.Join(a.root, "dev", "nvme1n1"))
	if err := a.publisher(agentAPI(t, env.Config)).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil {
		t.Fatal(err)
	}
	for _, d := range sn.Status.Devices {
		if (d.Name == "nvme0n1" || d.Name == "nvme1n1") && d.Eligibility.Eligible {
			t.Fatalf("the inventory must see %s holding data: %+v", d.Name, d.Eligibility)
		}
	}

	p := reconcile(t, policy.Name)
	after := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, after); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after.Spec.Plan, before.Spec.Plan) {
		t.Errorf("the plan changed after provisioning:\nbefore %+v\nafter  %+v", before.Spec.Plan, after.Spec.Plan)
	}
	if sel := selectionOf(p, a.name); sel == nil || names(sel.Fast) != "nvme0n1" || names(sel.Capacity) != "nvme1n1,nvme2n1,nvme3n1" {
		t.Errorf("selection after provisioning: %+v", sel)
	}

	// Another policy, for the same devices on another node, has no plan to keep: refused.
	other := newPolicy(unique("fresh"), prismv1.ModeDryRun)
	other.Spec.NodeSelector.MatchLabels = map[string]prismv1.LabelValue{"prism-test": prismv1.LabelValue(label)}
	if err := env.Client.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcile(t, policy.Name)
	if err := env.Client.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	q := reconcile(t, other.Name)
	sel := selectionOf(q, a.name)
	rejected := map[string]string{}
	for _, r := range sel.Rejected {
		rejected[r.Name] = r.Reason
	}
	if sel == nil || len(sel.Fast) != 0 || !strings.Contains(rejected["nvme0n1"], "NoSignatures") || !strings.Contains(rejected["nvme1n1"], "ceph_bluestore") {
		t.Errorf("a policy without a plan for node a must refuse its used devices: %+v", sel)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(data))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
