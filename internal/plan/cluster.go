package plan

import (
	"fmt"
	"runtime"
	"sort"
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

// Input is everything the planner needs: the policy, every node its selector matches, the
// ClassificationPolicy its cache names (nil when none, or when it does not exist), and the
// Rook device class of its OSDs.
type Input struct {
	Spec        *prismv1.HybridStoragePolicySpec
	Nodes       []NodeInventory
	Classes     *prismv1.ClassificationPolicy
	DeviceClass string
}

// Plan selects and lays out every node, adds the cache plan, and makes the Rook entries of
// the nodes whose OSDs go into spec.storage.nodes. It is the one planner: the operator calls
// it on what it observed and applies the result; `kubectl prism plan` prints it. Pure.
func Plan(in Input) ClusterPlan {
	cache, cacheErr := CachePlan(in.Spec, in.Classes)
	out := planCluster(in.Nodes, in.Spec, in.DeviceClass)
	if cacheErr != nil {
		// No node gets a plan: caches without the classes the user asked for are worse
		// than none, and a plan without its cache would be rewritten once it compiles.
		out.CacheRefused = cacheErr.Error()
		out.Problems = append(out.Problems, cacheErr.Error())
		for i := range out.Nodes {
			out.Nodes[i].Plan = nil
			annotateSlots(&out.Nodes[i].Selection, nil)
		}
		out.RookStorageNodes = []RookNode{}
		return out
	}
	if cache != nil {
		for i := range out.Nodes {
			if p := out.Nodes[i].Plan; p != nil && HasCachePartition(*p) {
				p.Cache = cache.DeepCopy()
			}
		}
		out.RookStorageNodes = RookNodes(out.Plans(), in.DeviceClass)
	}
	var byName map[string]*NodeInventory
	for i, n := range out.Nodes {
		if n.Plan == nil || !n.Plan.OnClaims() {
			continue
		}
		if byName == nil {
			byName = make(map[string]*NodeInventory, len(in.Nodes))
			for j := range in.Nodes {
				byName[in.Nodes[j].Node] = &in.Nodes[j]
			}
		}
		src := byName[n.Node]
		osds := ClaimOSDsOf(n.Node, *n.Plan, prismv1.StorageNodeStatus{Devices: src.Devices, Caches: src.Caches})
		out.Nodes[i].ClaimOSDs = &osds
	}
	return out
}

// annotateSlots records each capacity device's planned DB partition in the selection; slots
// are its plan's slotEntries, sorted by data device. Where a device had two slots, the last
// counts.
func annotateSlots(sel *prismv1.NodeSelection, slots []RookDevice) {
	// SelectNode lists the capacity devices by stable path too, so the two lists are walked
	// together; a device out of that order starts the walk over.
	j, prev := 0, ""
	for i := range sel.Capacity {
		c := &sel.Capacity[i]
		if c.StablePath < prev {
			j = 0
		}
		prev = c.StablePath
		for j < len(slots) && slots[j].Name < c.StablePath {
			j++
		}
		c.DBSlot = ""
		for k := j; k < len(slots) && slots[k].Name == c.StablePath; k++ {
			c.DBSlot = slots[k].Config.MetadataDevice
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
	// ClaimOSDs are, for a node with a cache (OnClaims), its OSDs that Rook creates from
	// claims: those that can be created now, and those that wait (for their cache core).
	ClaimOSDs *ClaimOSDs `json:"claimOSDs,omitempty"`
}

// ClusterPlan is the whole plan for a policy: per node, and what Rook and cephadm get.
type ClusterPlan struct {
	Nodes []NodeResult `json:"nodes"`
	// RookStorageNodes are the entries for CephCluster spec.storage.nodes.
	RookStorageNodes []RookNode `json:"rookStorageNodes"`
	// Problems block applying anything.
	Problems []string `json:"problems,omitempty"`
	// CacheRefused is why no cache plan could be made (a missing or broken
	// ClassificationPolicy); then no node has a plan.
	CacheRefused string `json:"cacheRefused,omitempty"`
}

// planCluster selects and lays out every node, and makes the Rook entries of their plans.
func planCluster(nodes []NodeInventory, spec *prismv1.HybridStoragePolicySpec, deviceClass string) ClusterPlan {
	sorted := append([]NodeInventory(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Node < sorted[j].Node })
	results := make([]NodeResult, len(sorted))
	rook := make([]RookNode, len(sorted)) // a node without an entry keeps the zero RookNode
	// Nodes are planned independently, so a large cluster is planned on every CPU; each result
	// lands at its node's index, which keeps the output identical to a sequential run.
	workpool.Each(len(sorted), runtime.GOMAXPROCS(0), func(i int) {
		var slots []RookDevice
		results[i], slots = planNode(sorted[i], spec)
		if p := results[i].Plan; p != nil {
			rook[i], _ = rookNode(sorted[i].Node, *p, deviceClass, slots)
		}
	})
	entries := 0
	for i := range rook {
		if rook[i].Devices != nil {
			entries++
		}
	}
	out := ClusterPlan{Nodes: results, RookStorageNodes: make([]RookNode, 0, entries)}
	for i, r := range results {
		for _, p := range r.Problems {
			out.Problems = append(out.Problems, r.Node+": "+p)
		}
		if rook[i].Devices != nil {
			out.RookStorageNodes = append(out.RookStorageNodes, rook[i])
		}
	}
	return out
}

// planNode selects and lays out one node; the slots are its plan's slotEntries.
func planNode(n NodeInventory, spec *prismv1.HybridStoragePolicySpec) (NodeResult, []RookDevice) {
	r := NodeResult{Node: n.Node}
	switch {
	case n.NoInventory:
		r.Selection = prismv1.NodeSelection{Node: n.Node, Message: "no StorageNode yet: is the prism agent running on this node?"}
		return r, nil
	case n.ClaimedBy != "":
		r.Selection = prismv1.NodeSelection{Node: n.Node, Message: fmt.Sprintf("managed by policy %s; a node belongs to one policy", n.ClaimedBy)}
		return r, nil
	}
	r.Selection = SelectNode(n.Node, n.Devices, spec, n.Previous)
	if !Complete(r.Selection) {
		return r, nil
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
		return r, nil
	}
	slots := slotEntries(l.Plan)
	annotateSlots(&r.Selection, slots)
	p := l.Plan
	r.Plan = &p
	return r, slots
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
