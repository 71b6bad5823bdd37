package plan

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Plan plans nodes on several goroutines; its output must not depend on how many, and
// its Rook entries must be exactly what RookNodes makes of its plans.
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
	sequential := Plan(Input{Nodes: nodes, Spec: spec, DeviceClass: "qlc"})
	for _, procs := range []int{2, 8} {
		runtime.GOMAXPROCS(procs)
		if got := Plan(Input{Nodes: nodes, Spec: spec, DeviceClass: "qlc"}); !equality.Semantic.DeepEqual(got, sequential) {
			t.Errorf("GOMAXPROCS %d: the plan differs from the sequential one", procs)
		}
	}
	if sequential.Nodes[7].Plan != nil || len(sequential.RookStorageNodes) != 49 {
		t.Errorf("node-0007 has no fast device: want no plan and 49 Rook entries, got %d", len(sequential.RookStorageNodes))
	}
	if got := len(sequential.RookStorageNodes[10].Devices); sequential.RookStorageNodes[10].Name != "node-0011" || got != 21 {
		t.Errorf("Rook entry 10 is %s with %d devices, want node-0011 with 21", sequential.RookStorageNodes[10].Name, got)
	}
	if want := RookNodes(sequential.Plans(), "qlc"); !equality.Semantic.DeepEqual(sequential.RookStorageNodes, want) {
		t.Errorf("Rook entries differ from RookNodes of the plans:\n got %v\nwant %v", sequential.RookStorageNodes, want)
	}
	for i, n := range sequential.Nodes {
		if want := fmt.Sprintf("node-%04d", i); n.Node != want {
			t.Fatalf("node %d is %s, want %s (sorted by name)", i, n.Node, want)
		}
	}
}
