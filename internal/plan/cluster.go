package plan

import (
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// NodeInventory is one node's devices, as a StorageNode status or `prism-agent inventory` holds them.
type NodeInventory struct {
	Node    string
	Devices []prismv1.Device
	// Previous is the plan already in force on the node, if any.
	Previous *prismv1.NodePlan
}

// NodeResult is what the planner decided for one node.
type NodeResult struct {
	Node      string                `json:"node"`
	Selection prismv1.NodeSelection `json:"selection"`
	Plan      *prismv1.NodePlan     `json:"plan,omitempty"`
	Warnings  []string              `json:"warnings,omitempty"`
	Problems  []string              `json:"problems,omitempty"`
}

// ClusterPlan is the whole plan for a policy: per node, and what Rook and cephadm get.
type ClusterPlan struct {
	Nodes []NodeResult `json:"nodes"`
	// RookStorageNodes are the entries for CephCluster spec.storage.nodes.
	RookStorageNodes []RookNode `json:"rookStorageNodes"`
	// Problems block applying anything.
	Problems []string `json:"problems,omitempty"`
}

// PlanCluster selects and lays out every node. It is what the operator does, without a
// cluster: `kubectl prism plan` prints it.
func PlanCluster(nodes []NodeInventory, spec *prismv1.HybridStoragePolicySpec, deviceClass string) ClusterPlan {
	sorted := append([]NodeInventory(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Node < sorted[j].Node })
	results := make([]NodeResult, len(sorted))
	rook := make([]*RookNode, len(sorted))
	// Nodes are planned independently, so a large cluster is planned on every CPU; each result
	// lands at its node's index, which keeps the output identical to a sequential run.
	eachIndex(len(sorted), func(i int) {
		results[i] = planNode(sorted[i], spec)
		if p := results[i].Plan; p != nil {
			if n, ok := rookNode(sorted[i].Node, *p, deviceClass); ok {
				rook[i] = &n
			}
		}
	})
	out := ClusterPlan{Nodes: results, RookStorageNodes: []RookNode{}}
	for i, r := range results {
		for _, p := range r.Problems {
			out.Problems = append(out.Problems, r.Node+": "+p)
		}
		if rook[i] != nil {
			out.RookStorageNodes = append(out.RookStorageNodes, *rook[i])
		}
	}
	return out
}

// planNode selects and lays out one node.
func planNode(n NodeInventory, spec *prismv1.HybridStoragePolicySpec) NodeResult {
	r := NodeResult{Node: n.Node, Selection: SelectNode(n.Node, n.Devices, spec, n.Previous)}
	if !Complete(r.Selection) {
		return r
	}
	l := PlanLayout(LayoutInput{Selection: r.Selection, Devices: n.Devices, Spec: spec, Previous: n.Previous})
	r.Warnings = l.Warnings
	r.Problems = append(r.Problems, l.Problems...)
	for _, u := range l.Unplaced {
		r.Problems = append(r.Problems, u.Name+": "+u.Reason)
	}
	if len(r.Problems) == 0 {
		p := l.Plan
		r.Plan = &p
	}
	return r
}

// eachIndex calls fn(i) for every i in [0, n), on up to GOMAXPROCS goroutines.
func eachIndex(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// Plans returns the node plans by node name.
func (c ClusterPlan) Plans() map[string]prismv1.NodePlan {
	m := map[string]prismv1.NodePlan{}
	for _, n := range c.Nodes {
		if n.Plan != nil {
			m[n.Node] = *n.Plan
		}
	}
	return m
}

// WithCache adds the policy's cache plan (plan.CachePlan) to every node plan that has a cache
// partition, as the operator does; classes is the ClassificationPolicy the policy names (nil
// when none). An error (a missing or broken ClassificationPolicy) is a problem that blocks
// applying anything, as in the operator.
func (c *ClusterPlan) WithCache(spec *prismv1.HybridStoragePolicySpec, classes *prismv1.ClassificationPolicy) {
	cache, err := CachePlan(spec, classes)
	if err != nil {
		c.Problems = append(c.Problems, err.Error())
		return
	}
	for i := range c.Nodes {
		if p := c.Nodes[i].Plan; p != nil && HasCachePartition(*p) {
			p.Cache = cache.DeepCopy()
		}
	}
}

// HasCachePartition says whether any fast device of p has a cache partition.
func HasCachePartition(p prismv1.NodePlan) bool {
	for _, f := range p.FastDevices {
		if f.Cache != nil {
			return true
		}
	}
	return false
}
