package envtest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestAgentPublishesItsNodeInventory(t *testing.T) {
	ctx := context.Background()
	nodes := startNodes(t, env.Client, unique("agent"))
	a := nodes["optane-qlc-a"]
	if err := a.publisher(agentAPI(t, env.Config)).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, node); err != nil {
		t.Fatal(err)
	}
	if len(sn.OwnerReferences) != 1 || sn.OwnerReferences[0].UID != node.UID {
		t.Errorf("StorageNode is not owned by its Node: %+v", sn.OwnerReferences)
	}
	if got, want := len(sn.Status.Devices), len(a.fixture.Devices); got != want {
		t.Fatalf("published %d devices, fixture has %d", got, want)
	}
	// The fixture: one Optane, four P4326 QLC (one with a BlueStore label), a SATA boot disk.
	if sn.Status.FastDevices != 1 || sn.Status.CapacityDevices != 4 || sn.Status.EligibleDevices != 4 {
		t.Errorf("fast/capacity/eligible = %d/%d/%d, want 1/4/4", sn.Status.FastDevices, sn.Status.CapacityDevices, sn.Status.EligibleDevices)
	}
	cond := meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionInventoried)
	if cond == nil || cond.Status != "True" || sn.Status.LastInventoryTime == nil {
		t.Errorf("Inventoried condition = %+v, lastInventoryTime = %v", cond, sn.Status.LastInventoryTime)
	}
	for _, d := range sn.Status.Devices {
		if d.Name == "nvme4n1" && (d.Eligibility.Eligible || d.Eligibility.Reasons[0].Filter != prismv1.FilterNoSignatures) {
			t.Errorf("the QLC drive with a BlueStore label must be ineligible by NoSignatures: %+v", d.Eligibility)
		}
	}

	// An unchanged inventory is not written again (no API write per period).
	rv := sn.ResourceVersion
	if err := a.publisher(agentAPI(t, env.Config)).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil {
		t.Fatal(err)
	}
	if sn.ResourceVersion != rv {
		t.Errorf("an unchanged inventory was written again (resourceVersion %s -> %s)", rv, sn.ResourceVersion)
	}
}
