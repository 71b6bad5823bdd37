package plan

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// clusterOf builds n nodes with 2 fast and 22 capacity devices each (24 devices per node).
func clusterOf(n int) []NodeInventory {
	nodes := make([]NodeInventory, n)
	for i := range nodes {
		var devs []prismv1.Device
		for j := 0; j < 24; j++ {
			d := prismv1.Device{
				Name: fmt.Sprintf("nvme%dn1", j), StablePath: fmt.Sprintf("/dev/disk/by-id/nvme-NODE%04d_DEV%02d", i, j),
				Model: "INTEL SSDPF2NV307TZ", SizeBytes: 30720827326464, Tier: prismv1.TierCapacity,
				TierReason: "D5-P5316", Eligibility: prismv1.Eligibility{Eligible: true},
			}
			if j < 2 {
				d.Model, d.SizeBytes, d.Tier = "INTEL SSDPF21Q016TB", 1600321314816, prismv1.TierFast
			}
			devs = append(devs, d)
		}
		nodes[i] = NodeInventory{Node: fmt.Sprintf("node-%04d", i), Devices: devs}
	}
	return nodes
}

// benchSpec is the benchmarks' policy: 60 GiB slots and a spare on each fast device.
func benchSpec() *prismv1.HybridStoragePolicySpec {
	return &prismv1.HybridStoragePolicySpec{DB: prismv1.DBSizing{Size: resource.NewQuantity(60*GiB, resource.BinarySI), SpareSlots: 1}}
}

// BenchmarkPlanCluster1000x24 plans 1000 nodes of 24 devices: selection and DB slots. cpu-ns/op is the process's CPU time (every thread, the garbage collector's
// included) per plan, which a busy machine changes less than ns/op.
func BenchmarkPlanCluster1000x24(b *testing.B) {
	benchPlan(b, clusterOf(1000))
}

// BenchmarkReplanCluster1000x24 plans the same cluster again on the plans in force: what
// the operator does on every reconcile once the nodes are planned.
func BenchmarkReplanCluster1000x24(b *testing.B) {
	nodes := clusterOf(1000)
	first := Plan(Input{Nodes: nodes, Spec: benchSpec()})
	for i := range nodes {
		nodes[i].Previous = first.Nodes[i].Plan
	}
	benchPlan(b, nodes)
}

func benchPlan(b *testing.B, nodes []NodeInventory) {
	spec := benchSpec()
	b.ReportAllocs()
	var cpu0 int64
	for b.Loop() {
		if cpu0 == 0 {
			cpu0 = processCPUNanos()
		}
		p := Plan(Input{Nodes: nodes, Spec: spec})
		if len(p.Problems) != 0 || len(p.Plans()) != 1000 {
			b.Fatalf("problems %v, %d plans", p.Problems, len(p.Plans()))
		}
	}
	if cpu := processCPUNanos(); cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
