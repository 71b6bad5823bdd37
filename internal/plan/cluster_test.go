package plan

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Plan plans nodes on several goroutines; its output must not depend on how many.
func TestPlanClusterIsTheSameOnAnyNumberOfCPUs(t *testing.T) {
	nodes := clusterOf(50)
	// Vary the nodes so that an entry landing at another node's index would show: one node
	// without fast devices (a problem), one with a QLC device fewer, and
	// the input in reverse order.
	nodes[7].Devices = nodes[7].Devices[2:]
	nodes[11].Devices = nodes[11].Devices[:23]
	for i, j := 0, len(nodes)-1; i < j; i, j = i+1, j-1 {
		nodes[i], nodes[j] = nodes[j], nodes[i]
	}
	spec := &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{Size: resource.NewQuantity(60*GiB, resource.BinarySI), SpareSlots: 1}}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sequential := Plan(Input{Nodes: nodes, Spec: spec})
	for _, procs := range []int{2, 8} {
		runtime.GOMAXPROCS(procs)
		if got := Plan(Input{Nodes: nodes, Spec: spec}); !equality.Semantic.DeepEqual(got, sequential) {
			t.Errorf("GOMAXPROCS %d: the plan differs from the sequential one", procs)
		}
	}
	if sequential.Nodes[7].Plan != nil || len(sequential.Plans()) != 49 {
		t.Errorf("node-0007 has no fast device: want no plan and 49 plans, got %d", len(sequential.Plans()))
	}
	if got := occupied(sequential.Nodes[11].Plan); got != 21 {
		t.Errorf("node-0011 has %d occupied DB slots, want 21", got)
	}
	for i, n := range sequential.Nodes {
		if want := fmt.Sprintf("node-%04d", i); n.Node != want {
			t.Fatalf("node %d is %s, want %s (sorted by name)", i, n.Node, want)
		}
	}
}

// occupied counts the DB slots of p that serve a data device.
func occupied(p *prismv1.NodePlan) int {
	n := 0
	for _, f := range p.FastDevices {
		for _, s := range f.Slots {
			if s.DataDevice != "" {
				n++
			}
		}
	}
	return n
}

// Each capacity device gets its slot's partition whatever the order of the selection, a
// device listed twice gets it twice, and a device with two slots the last one.
func TestAnnotateSlotsInAnyOrder(t *testing.T) {
	const fast = "/dev/disk/by-id/F"
	p := prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: fast, Slots: []prismv1.DBSlot{
		{Index: 0, Partition: prismv1.PlannedPartition{Number: 1}, DataDevice: "/dev/disk/by-id/a"},
		{Index: 1, Partition: prismv1.PlannedPartition{Number: 2}, DataDevice: "/dev/disk/by-id/b"},
		{Index: 2, Partition: prismv1.PlannedPartition{Number: 3}, DataDevice: "/dev/disk/by-id/b"},
		{Index: 3, Partition: prismv1.PlannedPartition{Number: 4}},
		{Index: 4, Partition: prismv1.PlannedPartition{Number: 5}, DataDevice: "/dev/disk/by-id/d"},
	}}}}
	sel := prismv1.NodeSelection{Capacity: []prismv1.SelectedDevice{
		{StablePath: "/dev/disk/by-id/d"}, {StablePath: "/dev/disk/by-id/a"}, {StablePath: "/dev/disk/by-id/c", DBSlot: "stale"},
		{StablePath: "/dev/disk/by-id/b"}, {StablePath: "/dev/disk/by-id/b"}, {StablePath: ""}, {StablePath: "/dev/disk/by-id/a"},
	}}
	annotateSlots(&sel, &p)
	want := []string{fast + "-part5", fast + "-part1", "", fast + "-part3", fast + "-part3", "", fast + "-part1"}
	for i, c := range sel.Capacity {
		if c.DBSlot != want[i] {
			t.Errorf("capacity %d (%q): dbSlot %q, want %q", i, c.StablePath, c.DBSlot, want[i])
		}
	}
	annotateSlots(&sel, nil)
	for i, c := range sel.Capacity {
		if c.DBSlot != "" {
			t.Errorf("no plan: capacity %d (%q) keeps dbSlot %q", i, c.StablePath, c.DBSlot)
		}
	}
}
