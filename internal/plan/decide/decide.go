// Package decide is the one pure entry point from what is observed of a HybridStoragePolicy to
// everything Prism applies for it: the selection and node plans (plan.Plan), the StorageNodes
// to claim and to release, and the Rook decision (rook.Decide). The operator observes
// the cluster, calls Policy once and applies the result; `kubectl prism plan` calls Policy on
// inventories read from files and prints it. Neither re-implements any step in between.
package decide

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// Why a node is released; each ends up in the status and in a NodeReleased Event.
const (
	ReleaseDryRun     = "the policy is in DryRun mode and claims no node"
	ReleaseNotMatched = "no Node matching spec.nodeSelector has this name any more"
)

// Observation is everything the decision reads, all of it observed before deciding: on a
// cluster by the operator (one list of Nodes and one of StorageNodes, so a node is never seen
// twice in two states), offline by the plugin from files.
type Observation struct {
	Policy *prismv1.HybridStoragePolicy
	// Classes is the ClassificationPolicy spec.cache names (nil: none, or it does not exist).
	Classes *prismv1.ClassificationPolicy
	// Nodes are the cluster's Nodes; spec.nodeSelector is matched here, not by the caller.
	Nodes []Node
	// StorageNodes are every StorageNode (the agents' inventories and the claims).
	StorageNodes []*prismv1.StorageNode
	// Cluster is the CephCluster spec.cephCluster names (nil: it does not exist).
	Cluster *unstructured.Unstructured
	// Ledger and Volumes are the policy's local volumes and volumes read by name
	// (rook.Input); a decision that needs more asks in Decision.Rook.Lookup.
	Ledger  map[string]rook.LedgerSet
	Volumes map[string]*corev1.PersistentVolume
	// Now is the clock for replacement pacing.
	Now time.Time
	// Answers are Ceph's answers per node, as the operator's probes read them (rook.Input).
	Answers map[string]rook.CephAnswers
	// AssumeProvisioned takes every planned node's partitions as Ready, its Pending DB volumes
	// as Ready at their planned paths, and its planned cache cores as Ready (core ids 1, 2, ...
	// in slot order, as an agent starting from nothing assigns them) for the Rook decision:
	// offline no agent reports them, and a preview should show where the OSDs will go. The
	// operator never sets it.
	AssumeProvisioned bool
	// MaxCephClusterBytes is the largest CephCluster the cluster's etcd stores (0: its
	// default; rook.Input).
	MaxCephClusterBytes int64
	// OperatorVersion is the operator's release version: agents outside the supported skew
	// get no claim and no new plan (AgentSkew); "" checks none.
	OperatorVersion string
}

// Node is a Kubernetes Node as the decision needs it.
type Node struct {
	Name   string
	Labels map[string]string
}

// Decision is everything to apply for one policy, in this order: Claims, Releases, then Rook
// (rook.Decision's own order). A non-empty InvalidSelector stops everything: nothing is
// claimed, released or withdrawn.
type Decision struct {
	// InvalidSelector is why spec.nodeSelector cannot be used, naming the field.
	InvalidSelector string
	// Selected are the nodes the selector matches, sorted; Unselected the others.
	Selected, Unselected []string
	// Plan is the planner's result for the selected nodes.
	Plan plan.ClusterPlan
	// Claims are the StorageNodes whose spec must change to the policy's claim and plan.
	Claims []Claim
	// Releases are the StorageNodes the policy lets go.
	Releases []Release
	// Rook is what the policy applies to its CephCluster; RookErr a merge conflict that stops
	// that step (claims and releases still go ahead).
	Rook    rook.Decision
	RookErr error
}

// Claim is one StorageNode spec to write.
type Claim struct {
	StorageNode *prismv1.StorageNode
	Want        prismv1.StorageNodeSpec
	// New: the node had no policy before (a NodeClaimed Event).
	New bool
}

// Release is one StorageNode to let go, and why.
type Release struct {
	StorageNode *prismv1.StorageNode
	Reason      string
}

// Policy decides everything for one policy from one observation. Pure.
func Policy(obs Observation) Decision {
	var d Decision
	policy := obs.Policy
	selector, err := NodeSelector(policy.Spec.NodeSelector.LabelSelector())
	if err != nil {
		d.InvalidSelector = err.Error()
		return d
	}
	byName := map[string]*prismv1.StorageNode{}
	for _, sn := range obs.StorageNodes {
		byName[sn.Name] = sn
	}
	hostnames := map[string]string{}
	for _, n := range obs.Nodes {
		if selector.Matches(labels.Set(n.Labels)) {
			d.Selected = append(d.Selected, n.Name)
			hostnames[n.Name] = hostnameOf(n)
		} else {
			d.Unselected = append(d.Unselected, n.Name)
		}
	}
	sort.Strings(d.Selected)
	sort.Strings(d.Unselected)

	in := plan.Input{Spec: &policy.Spec, Classes: obs.Classes}
	for _, name := range d.Selected {
		in.Nodes = append(in.Nodes, inventoryOf(name, byName[name], policy.Name))
	}
	d.Plan = plan.Plan(in)
	plans := d.Plan.Plans()
	refused := len(d.Plan.Problems) > 0
	dryRun := policy.Spec.Mode == prismv1.ModeDryRun

	unobserved := unobservedOf(d.Selected, byName)
	// An agent outside the version skew is treated as one that cannot be observed: nothing of
	// its node changes (no claim, no new plan, its entries kept) until it is upgraded.
	skewed := skewedOf(obs.OperatorVersion, d.Selected, byName)
	maps.Copy(unobserved, skewed)
	for name, why := range fastDeviceAbsentOf(policy.Name, d.Selected, byName, plans) {
		if _, seen := unobserved[name]; !seen {
			unobserved[name] = why
		}
	}
	if !dryRun && !refused {
		d.Claims = claimsOf(policy, d.Selected, byName, plans, unobserved, skewed)
	}
	d.Releases = releasesOf(policy, refused, d.Selected, obs.StorageNodes)

	rin := rook.Input{
		Policy: policy.Name, Manager: CephClusterManager(policy.Name), DryRun: dryRun, PlanRefused: refused,
		DeviceClass: DeviceClass(policy), SetMinAllocSize: policy.Spec.OSD.MinAllocSize != prismv1.MinAllocSizeDefault,
		ClusterRef: policy.Spec.CephCluster.Namespace + "/" + policy.Spec.CephCluster.Name, Cluster: obs.Cluster,
		Released: map[string]string{}, Unobserved: unobserved, Ledger: obs.Ledger, Volumes: obs.Volumes, Now: obs.Now,
		IgnoreHealthChecks:  policy.Spec.OSD.IgnoreHealthChecks,
		MaxCephClusterBytes: obs.MaxCephClusterBytes,
	}
	rin.Answers = obs.Answers
	for _, n := range d.Plan.Nodes {
		rin.Selections = append(rin.Selections, n.Selection)
	}
	for _, rel := range d.Releases {
		rin.Released[rel.StorageNode.Name] = rel.Reason
	}
	if rin.Volumes == nil {
		rin.Volumes = map[string]*corev1.PersistentVolume{}
	}
	pending := map[string]bool{}
	for _, c := range d.Claims {
		pending[c.StorageNode.Name] = true
	}
	for _, name := range d.Selected {
		p, ok := plans[name]
		sn := byName[name]
		if _, old := skewed[name]; !ok || sn == nil || old {
			continue
		}
		// A claim written now bumps the StorageNode's generation: its agent has not seen it.
		n := rook.Node{Name: name, Plan: p, Ready: !pending[name] && Provisioned(sn, p), Status: sn.Status, Hostname: hostnames[name]}
		if obs.AssumeProvisioned {
			n.Ready, n.Status = true, assumedStatus(sn.Status, p)
		}
		rin.Nodes = append(rin.Nodes, n)
	}
	d.Rook, d.RookErr = rook.Decide(rin)
	return d
}

// NodeSelector turns spec.nodeSelector into a labels.Selector, or says which field is wrong.
// The API server accepts selectors metav1.LabelSelectorAsSelector refuses (operator In with
// no values, say): such a policy selects nothing, and must not look as if it matched no node.
func NodeSelector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if errs := metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("spec", "nodeSelector")); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	selector, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("spec.nodeSelector: %w", err)
	}
	return selector, nil
}

// DeviceClass is the OSDs' device class: spec.osd.deviceClass, "qlc" when unset.
func DeviceClass(p *prismv1.HybridStoragePolicy) string {
	if p.Spec.OSD.DeviceClass == "" {
		return "qlc"
	}
	return p.Spec.OSD.DeviceClass
}

// CephClusterManager is the field manager of one policy's applies to its CephCluster. Each
// policy applies under its own name, so that server-side apply removes, of what a policy
// applied before, only what that policy no longer applies: under one name for all, a policy's
// apply dropped the other policies' annotations (nodes.prism.storage.io/<policy>), which say
// which storage.nodes entries are theirs.
func CephClusterManager(policy string) string { return FieldManager + "/" + policy }

// FieldManager names Prism's operator in managed fields.
const FieldManager = "prism-operator"

// Provisioned says whether the node's agent reports every partition of plan p Ready: the
// StorageNode carries exactly p and its status is about the current generation.
func Provisioned(sn *prismv1.StorageNode, p prismv1.NodePlan) bool {
	cond := meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionProvisioned)
	current := sn.Spec.Plan != nil && equality.Semantic.DeepEqual(*sn.Spec.Plan, p) &&
		sn.Status.ObservedPlanGeneration == sn.Generation
	return current && cond != nil && cond.Status == "True"
}

// assumedStatus is st with every cache of plan p Running and its cores Ready, and every DB
// volume its agent has not made yet (Pending, or a slot it has not reported at all: an agent
// makes them by default, decision 0036) Ready where the plan puts it, for a preview. Refused
// and Failed volumes stay as reported: the preview shows why their node waits; so does a
// reported slot without a volume (an agent run without --db-volumes).
func assumedStatus(st prismv1.StorageNodeStatus, p prismv1.NodePlan) prismv1.StorageNodeStatus {
	st.Partitions = slices.Clone(st.Partitions) // the StorageNode's own status is not changed
	for _, f := range p.FastDevices {
		for _, s := range f.Slots {
			if !slices.ContainsFunc(st.Partitions, func(ps prismv1.PartitionStatus) bool {
				return ps.Device == f.StablePath && ps.Number == s.Partition.Number
			}) {
				st.Partitions = append(st.Partitions, prismv1.PartitionStatus{Device: f.StablePath, Number: s.Partition.Number, Label: s.Partition.Label,
					Path: prismv1.PartitionPath(f.StablePath, s.Partition.Number), State: prismv1.PartitionReady,
					Volume: &prismv1.DBVolumeStatus{State: prismv1.DBVolumePending}})
			}
		}
	}
	for i := range st.Partitions {
		ps := &st.Partitions[i]
		if ps.Volume == nil || ps.Volume.State != prismv1.DBVolumePending {
			continue
		}
		for _, f := range p.FastDevices {
			for _, s := range f.Slots {
				if f.StablePath == ps.Device && s.Partition.Number == ps.Number {
					ps.Volume = &prismv1.DBVolumeStatus{Path: prismv1.DBVolumePath(f.StablePath, s.Index), State: prismv1.DBVolumeReady}
				}
			}
		}
	}
	st.Caches = nil
	for _, f := range p.FastDevices {
		if !f.BehindCache() {
			continue
		}
		c := prismv1.CacheStatus{FastDevice: f.StablePath, CacheID: f.CacheID, State: prismv1.CacheRunning}
		for i, dev := range f.CacheCores() {
			id := int32(i + 1)
			c.Cores = append(c.Cores, prismv1.CacheCoreStatus{Device: dev, CoreID: id, State: prismv1.CoreReady,
				ExportedObject: fmt.Sprintf("/dev/cas%d-%d", f.CacheID, id)})
		}
		st.Caches = append(st.Caches, c)
	}
	return st
}

// inventoryOf is what the planner needs to know of a selected node.
func inventoryOf(node string, sn *prismv1.StorageNode, policy string) plan.NodeInventory {
	switch {
	case sn == nil:
		return plan.NodeInventory{Node: node, NoInventory: true}
	case sn.Spec.PolicyName != "" && sn.Spec.PolicyName != policy:
		return plan.NodeInventory{Node: node, ClaimedBy: sn.Spec.PolicyName}
	}
	n := plan.NodeInventory{Node: node, Devices: sn.Status.Devices, Caches: sn.Status.Caches}
	if sn.Spec.PolicyName == policy {
		n.Previous = sn.Spec.Plan // devices it uses stay selected, and slots never move
		n.Partitions = sn.Status.Partitions
	}
	return n
}

// unobservedOf are the selected nodes with no inventory to decide on, and why: no StorageNode
// (deleted, or its agent never ran), or one whose agent has published no inventory yet (a
// re-created StorageNode). Their plans and Rook entries are left as they are: a node that
// cannot be seen is not a node without devices.
func unobservedOf(selected []string, byName map[string]*prismv1.StorageNode) map[string]string {
	out := map[string]string{}
	for _, name := range selected {
		sn := byName[name]
		switch {
		case sn == nil:
			out[name] = "no StorageNode"
		case len(sn.Status.Devices) == 0 && !meta.IsStatusConditionTrue(sn.Status.Conditions, prismv1.ConditionInventoried):
			out[name] = "its agent has published no inventory yet"
		}
	}
	return out
}

// fastDeviceAbsentOf maps the selected nodes this policy planned before, for which no plan can
// be made now while a fast device of their plan is missing from their inventory, to why: a
// fabric or an HBA that comes up after the agent's first inventory at boot, or a dead fast
// device before its replacement is inserted. A node without its fast device is not a node
// without a plan: dropping the plan and the Rook entry would leave the device, once back,
// holding partitions no plan claims. Their plans and entries stay, as for a node not seen.
func fastDeviceAbsentOf(policy string, selected []string, byName map[string]*prismv1.StorageNode, plans map[string]prismv1.NodePlan) map[string]string {
	out := map[string]string{}
	for _, name := range selected {
		sn := byName[name]
		if _, planned := plans[name]; planned || sn == nil || sn.Spec.PolicyName != policy || sn.Spec.Plan == nil {
			continue
		}
		var absent []string
		for _, f := range sn.Spec.Plan.FastDevices {
			if !slices.ContainsFunc(sn.Status.Devices, func(d prismv1.Device) bool { return d.StablePath == f.StablePath }) {
				absent = append(absent, f.StablePath)
			}
		}
		if len(absent) > 0 {
			out[name] = "the fast device " + strings.Join(absent, ", ") + " of its plan is not in its inventory (absent, or not enumerated yet)"
		}
	}
	return out
}

// skewedOf maps the selected nodes whose agent is outside the version skew of the operator to
// why (AgentSkew).
func skewedOf(operator string, selected []string, byName map[string]*prismv1.StorageNode) map[string]string {
	out := map[string]string{}
	for _, name := range selected {
		if sn := byName[name]; sn != nil {
			if why := AgentSkew(operator, sn.Status.AgentVersion); why != "" {
				out[name] = why
			}
		}
	}
	return out
}

// claimsOf are the selected nodes whose StorageNode spec differs from the policy's claim and
// plan. Nodes another policy claims, nodes without a StorageNode, and this policy's nodes
// whose agent has published no inventory yet (the plan they carry stays) are left alone.
func claimsOf(policy *prismv1.HybridStoragePolicy, selected []string, byName map[string]*prismv1.StorageNode, plans map[string]prismv1.NodePlan, unobserved, skewed map[string]string) []Claim {
	var out []Claim
	for _, name := range selected {
		sn := byName[name]
		if _, old := skewed[name]; old || sn == nil || (sn.Spec.PolicyName != "" && sn.Spec.PolicyName != policy.Name) {
			continue
		}
		if _, ok := unobserved[name]; ok && sn.Spec.PolicyName == policy.Name && sn.Spec.Plan != nil {
			continue
		}
		want := prismv1.StorageNodeSpec{PolicyName: policy.Name, Mode: policy.Spec.Mode}
		if p, ok := plans[name]; ok {
			want.Plan = &p
		}
		if !equality.Semantic.DeepEqual(sn.Spec, want) {
			out = append(out, Claim{StorageNode: sn, Want: want, New: sn.Spec.PolicyName == ""})
		}
	}
	return out
}

// releasesOf are the nodes the policy claims and lets go. A policy whose plan is refused keeps
// its nodes: it applies whole or not at all.
func releasesOf(policy *prismv1.HybridStoragePolicy, refused bool, selected []string, storageNodes []*prismv1.StorageNode) []Release {
	dryRun := policy.Spec.Mode == prismv1.ModeDryRun
	if !dryRun && refused {
		return nil
	}
	matched := map[string]bool{}
	for _, n := range selected {
		matched[n] = true
	}
	var out []Release
	for _, sn := range storageNodes {
		if sn.Spec.PolicyName != policy.Name {
			continue
		}
		switch {
		case dryRun:
			out = append(out, Release{StorageNode: sn, Reason: ReleaseDryRun})
		case !matched[sn.Name]:
			out = append(out, Release{StorageNode: sn, Reason: ReleaseNotMatched})
		}
	}
	return out
}

// hostnameOf is the node's kubernetes.io/hostname label, which local volumes are pinned with
// (it differs from the node name on some clouds); the node name without it.
func hostnameOf(n Node) string {
	if h := n.Labels["kubernetes.io/hostname"]; h != "" {
		return h
	}
	return n.Name
}
