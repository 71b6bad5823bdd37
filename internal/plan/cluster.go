package plan

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/workpool"
)

// NodeInventory is one node's devices, as a StorageNode status or `prism-agent inventory` holds them.
type NodeInventory struct {
	Node    string
	Devices []prismv1.Device
	// Previous is the plan already in force on the node, if any.
	Previous *prismv1.NodePlan
	// Partitions are what the node's agent reports of its plan's partitions (nil when unknown,
	// offline): a slot is given to another data device only once reported Empty.
	Partitions []prismv1.PartitionStatus
	// NoInventory: the node has no StorageNode yet (its agent has not reported).
	NoInventory bool
	// ClaimedBy names another policy that manages the node ("" when none).
	ClaimedBy string
	// Caches are what the node's agent reports of its caches (nil when unknown, offline): a
	// cached OSD's claims wait for its core.
	Caches []prismv1.CacheStatus
}

// Input is everything the planner needs: the policy, every node its selector matches, and the
// ClassificationPolicy its cache names (nil when none, or when it does not exist).
type Input struct {
	Spec    *prismv1.HybridStoragePolicySpec
	Nodes   []NodeInventory
	Classes *prismv1.ClassificationPolicy
}

// Plan selects and lays out every node and adds the cache plan: node plans only. It is the one
// planner: the operator calls it on what it observed and applies the result; `kubectl prism
// plan` prints it. What Rook gets of the plans is internal/plan/rook's to decide. Pure.
func Plan(in Input) ClusterPlan {
	cache, cacheErr := CachePlan(in.Spec, in.Classes)
	out := planCluster(in.Nodes, in.Spec)
	if cacheErr != nil {
		// No node gets a plan: caches without the classes the user asked for are worse
		// than none, and a plan without its cache would be rewritten once it compiles.
		out.CacheRefused = cacheErr.Error()
		out.Problems = append(out.Problems, cacheErr.Error())
		for i := range out.Nodes {
			out.Nodes[i].Plan = nil
			annotateSlots(&out.Nodes[i].Selection, nil)
		}
		return out
	}
	if cache != nil {
		for i := range out.Nodes {
			if p := out.Nodes[i].Plan; p != nil && HasCachePartition(*p) {
				p.Cache = cache.DeepCopy()
			}
		}
	}
	return out
}

// annotateSlots records each capacity device's planned DB partition (prismv1.PartitionPath) in
// the selection: "" for a device without a slot, or when p is nil; where a device had two
// slots, the last in plan order counts.
func annotateSlots(sel *prismv1.NodeSelection, p *prismv1.NodePlan) {
	for i := range sel.Capacity {
		sel.Capacity[i].DBSlot = ""
	}
	if p == nil {
		return
	}
	// The paths are cut from one string, so that planning 1000 nodes makes no string per slot.
	var num [12]byte
	size := 0
	for _, f := range p.FastDevices {
		for _, s := range f.Slots {
			if s.DataDevice != "" {
				size += len(f.StablePath) + len(prismv1.PartitionSuffix) + len(strconv.AppendInt(num[:0], int64(s.Partition.Number), 10))
			}
		}
	}
	var b strings.Builder
	b.Grow(size)
	for _, f := range p.FastDevices {
		for _, s := range f.Slots {
			if s.DataDevice == "" {
				continue
			}
			start := b.Len()
			b.WriteString(f.StablePath)
			b.WriteString(prismv1.PartitionSuffix)
			b.Write(strconv.AppendInt(num[:0], int64(s.Partition.Number), 10))
			path := b.String()[start:]
			for i := range sel.Capacity {
				if sel.Capacity[i].StablePath == s.DataDevice {
					sel.Capacity[i].DBSlot = path
				}
			}
		}
	}
}

// NodeResult is what the planner decided for one node.
type NodeResult struct {
	Node      string                `json:"node"`
	Selection prismv1.NodeSelection `json:"selection"`
	Plan      *prismv1.NodePlan     `json:"plan,omitempty"`
	Warnings  []string              `json:"warnings,omitempty"`
	Problems  []string              `json:"problems,omitempty"`
}

// ClusterPlan is the whole plan for a policy, per node.
type ClusterPlan struct {
	Nodes []NodeResult `json:"nodes"`
	// Problems block applying anything.
	Problems []string `json:"problems,omitempty"`
	// CacheRefused is why no cache plan could be made (a missing or broken
	// ClassificationPolicy); then no node has a plan.
	CacheRefused string `json:"cacheRefused,omitempty"`
}

// planCluster selects and lays out every node.
func planCluster(nodes []NodeInventory, spec *prismv1.HybridStoragePolicySpec) ClusterPlan {
	sorted := append([]NodeInventory(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Node < sorted[j].Node })
	results := make([]NodeResult, len(sorted))
	// Nodes are planned independently, so a large cluster is planned on every CPU; each result
	// lands at its node's index, which keeps the output identical to a sequential run.
	workpool.Each(len(sorted), runtime.GOMAXPROCS(0), func(i int) {
		results[i] = planNode(sorted[i], spec)
	})
	out := ClusterPlan{Nodes: results}
	for _, r := range results {
		for _, p := range r.Problems {
			out.Problems = append(out.Problems, r.Node+": "+p)
		}
	}
	return out
}

// planNode selects and lays out one node.
func planNode(n NodeInventory, spec *prismv1.HybridStoragePolicySpec) NodeResult {
	r := NodeResult{Node: n.Node}
	switch {
	case n.NoInventory:
		r.Selection = prismv1.NodeSelection{Node: n.Node, Message: "no StorageNode yet: is the prism agent running on this node?"}
		return r
	case n.ClaimedBy != "":
		r.Selection = prismv1.NodeSelection{Node: n.Node, Message: fmt.Sprintf("managed by policy %s; a node belongs to one policy", n.ClaimedBy)}
		return r
	}
	r.Selection = SelectNode(n.Node, n.Devices, spec, n.Previous)
	if !Complete(r.Selection) {
		return r
	}
	l := PlanLayout(LayoutInput{Selection: r.Selection, Devices: n.Devices, Spec: spec, Previous: n.Previous, Partitions: n.Partitions})
	// The selection's own warnings (planned devices kept although their record is partial) first.
	r.Selection.Warnings = append(r.Selection.Warnings, l.Warnings...)
	r.Warnings = r.Selection.Warnings
	r.Problems = append(r.Problems, l.Problems...)
	for _, u := range l.Unplaced {
		r.Problems = append(r.Problems, u.Name+": "+u.Reason)
	}
	if len(r.Problems) > 0 {
		r.Selection.Message = "plan refused: " + strings.Join(r.Problems, "; ")
		return r
	}
	p := l.Plan
	annotateSlots(&r.Selection, &p)
	r.Plan = &p
	return r
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

// HasCachePartition says whether any fast device of p has a cache partition.
func HasCachePartition(p prismv1.NodePlan) bool {
	for _, f := range p.FastDevices {
		if f.Cache != nil {
			return true
		}
	}
	return false
}
