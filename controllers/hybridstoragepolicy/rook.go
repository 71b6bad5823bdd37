package hybridstoragepolicy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
)

// CephClusterGVK is Rook's CephCluster.
var CephClusterGVK = schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster"}

// Reasons of the RookConfigured condition.
const (
	ReasonRookApplied            = "Applied"
	ReasonRookDryRun             = "DryRun"
	ReasonRookPlanRefused        = "PlanRefused"
	ReasonCephClusterNotFound    = "CephClusterNotFound"
	ReasonCephClusterAllNodes    = "CephClusterUsesAllNodes"
	ReasonWaitingForPartitions   = "WaitingForPartitions"
	ReasonRookNothingToConfigure = "NothingToConfigure"
	// ReasonReplacingOSDs: OSDs whose DB moved to a new fast device are handed to Rook one at
	// a time, each once Ceph is healthy again.
	ReasonReplacingOSDs = "ReplacingOSDs"
)

// rookOutcome is what applyRook did, for the status.
type rookOutcome struct {
	reason  string
	message string
	ok      bool
}

// cephClusterManager is the field manager of one policy's applies to its CephCluster. Each
// policy applies under its own name, so that server-side apply removes, of what a policy
// applied before, only what that policy no longer applies: under one name for all, a policy's
// apply dropped the other policies' annotations (nodes.prism.storage.io/<policy>), which say
// which storage.nodes entries are theirs.
func cephClusterManager(policy string) string { return FieldManager + "/" + policy }

// managedNodesAnnotation records, on the CephCluster, which nodes' entries a policy owns, so
// that entries of nodes the policy lets go are removed and everybody else's are kept.
func managedNodesAnnotation(policy string) string {
	name := policy
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(policy))
		name = name[:50] + "-" + hex.EncodeToString(sum[:])[:12]
	}
	return "nodes.prism.storage.io/" + name
}

// applyRook writes the OSD entries of every provisioned node into the target CephCluster
// with server-side apply under Prism's field manager, and the QLC allocation unit into its
// cephConfig. A node's entries appear only once its agent reports every slot partition
// Ready, so Rook never looks for a partition that does not exist yet.
func (r *Reconciler) applyRook(ctx context.Context, s *scope) (ctrl.Result, error) {
	switch {
	case !s.observed || !s.planned:
		return ctrl.Result{}, fmt.Errorf("internal error: configuring Rook without a complete observation")
	case s.policy.Spec.Mode == prismv1.ModeDryRun:
		s.rook = rookOutcome{reason: ReasonRookDryRun, message: "dry run: the CephCluster is not changed"}
		return ctrl.Result{}, nil
	case len(s.planProblems) > 0:
		s.rook = rookOutcome{reason: ReasonRookPlanRefused, message: "nothing applied while a node's plan is refused"}
		return ctrl.Result{}, nil
	}
	cluster, err := r.getCephCluster(ctx, s.policy)
	if err != nil || cluster == nil {
		if err == nil {
			ref := s.policy.Spec.CephCluster
			s.rook = rookOutcome{reason: ReasonCephClusterNotFound, message: fmt.Sprintf("CephCluster %s/%s does not exist", ref.Namespace, ref.Name)}
		}
		return ctrl.Result{}, err
	}
	if all, _, _ := unstructured.NestedBool(cluster.Object, "spec", "storage", "useAllNodes"); all {
		s.rook = rookOutcome{reason: ReasonCephClusterAllNodes, message: "spec.storage.useAllNodes is true, so Rook ignores per-node entries: set it to false"}
		return ctrl.Result{}, nil
	}

	ready, waiting := provisionedPlans(s)
	entries := plan.RookNodes(ready, deviceClass(s.policy))
	existing, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "storage", "nodes")
	gate := gateReplacements(cluster, s.policy.Name, entries, existing, r.now())
	entries = gate.Entries
	key := managedNodesAnnotation(s.policy.Name)
	// A node whose plan is being re-provisioned keeps the entry it has: dropping it would
	// flap Rook's view of running OSDs.
	previous, kept := splitNodes(cluster.GetAnnotations()[key]), []string{}
	raw := stayingInNodes(previous, ready, existing)
	var drop []string
	for _, n := range previous {
		if slices.Contains(waiting, n) || slices.Contains(raw, n) {
			kept = append(kept, n)
		} else {
			drop = append(drop, n)
		}
	}
	merged, err := plan.MergeRookNodes(existing, drop, entries)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("CephCluster %s: %w", cluster.GetName(), err)
	}
	config, configNote := r.cephConfig(s, ready)
	managed := joinNodes(append(nodeNamesOf(entries), kept...))
	sets, err := r.planDeviceSets(ctx, s, cluster, ready, waiting, raw)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Volumes first, so that Rook's claims find them.
	if err := r.applyVolumes(ctx, sets.apply); err != nil {
		return ctrl.Result{}, err
	}

	releaseKey, release := releaseAnnotation(s.policy.Name), cluster.GetAnnotations()[releaseAnnotation(s.policy.Name)]
	if gate.Released != nil {
		release = gate.Released.String()
	}
	unchanged := equality.Semantic.DeepEqual(existing, merged) && cluster.GetAnnotations()[key] == managed && configApplied(cluster, config) &&
		!sets.changed() && cluster.GetAnnotations()[releaseKey] == release
	if !unchanged {
		apply := applyObject(cluster, key, managed, merged, config)
		if release != "" {
			// Re-sent on every apply: an annotation Prism's field manager stops sending is removed.
			apply.SetAnnotations(map[string]string{key: managed, releaseKey: release})
		}
		sets.addTo(apply)
		if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(cephClusterManager(s.policy.Name)), client.ForceOwnership); err != nil {
			return ctrl.Result{}, fmt.Errorf("applying CephCluster %s/%s: %w", cluster.GetNamespace(), cluster.GetName(), err)
		}
	}
	if err := r.deleteVolumes(ctx, sets.obsolete); err != nil {
		return ctrl.Result{}, err
	}
	msg := fmt.Sprintf("%d nodes' OSD entries in CephCluster %s/%s", len(entries), cluster.GetNamespace(), cluster.GetName())
	var withdrawn string
	if w := withdrawals(drop, s); len(w) > 0 {
		withdrawn = "withdrew " + summarise(w)
	}
	if !unchanged {
		r.event(s.policy, nil, eventNormal, EventOSDEntriesApplied, actionApplyRook, "applied %s%s", msg, prefixed(withdrawn))
	}
	for _, note := range []string{configNote, sets.summary(), withdrawn} {
		if note != "" {
			msg += "; " + note
		}
	}
	if len(sets.waiting) > 0 {
		msg += "; " + summarise(sets.waiting)
	}
	if gate.Released != nil {
		msg += fmt.Sprintf("; released the re-created OSD on %s %s to Rook", gate.Released.Node, gate.Released.Device)
	}
	if len(gate.Held) > 0 {
		// Ceph's health is in the CephCluster's status, which no watch event reports: look again.
		s.requeueAfter = time.Minute
		s.rook = rookOutcome{reason: ReasonReplacingOSDs, message: fmt.Sprintf("%s; %d OSDs to re-create one at a time, first: %s", msg, len(gate.Held), gate.Held[0])}
		return ctrl.Result{}, nil
	}
	if len(waiting) > 0 {
		s.rook = rookOutcome{reason: ReasonWaitingForPartitions, message: msg + "; waiting for the agents to create the DB partitions on " + strings.Join(waiting, ", ")}
		return ctrl.Result{}, nil
	}
	if len(sets.waiting) > 0 {
		s.rook = rookOutcome{reason: ReasonWaitingForCacheCores, message: msg}
		return ctrl.Result{}, nil
	}
	if len(entries) == 0 && sets.wanted == 0 {
		s.rook = rookOutcome{reason: ReasonRookNothingToConfigure, message: "no node has a plan"}
		return ctrl.Result{}, nil
	}
	s.rook = rookOutcome{reason: ReasonRookApplied, message: msg, ok: true}
	return ctrl.Result{}, nil
}

// withdrawals names each node whose storage.nodes entry this reconcile removes, and why,
// from what the reconcile observed: released, no longer selected, or without a plan.
func withdrawals(drop []string, s *scope) []string {
	why := map[string]string{}
	for _, rel := range s.released {
		why[rel.node] = "released: " + rel.reason
	}
	for _, sel := range s.selections {
		if _, ok := why[sel.Node]; ok {
			continue
		}
		switch {
		case sel.Message != "":
			why[sel.Node] = "no plan: " + sel.Message
		default:
			why[sel.Node] = "no plan"
		}
	}
	out := make([]string, 0, len(drop))
	for _, n := range drop {
		reason, ok := why[n]
		if !ok {
			reason = "no longer selected by the policy"
		}
		out = append(out, fmt.Sprintf("the entry of node %s (%s)", n, reason))
	}
	return out
}

// removeRookEntries drops this policy's entries and annotation from the CephCluster.
// Device sets whose volumes a claim holds stay (Rook cannot reconcile an OSD whose set is
// gone); the other sets go, and their volumes with them.
func (r *Reconciler) removeRookEntries(ctx context.Context, policy *prismv1.HybridStoragePolicy) error {
	cluster, err := r.getCephCluster(ctx, policy)
	if err != nil {
		return err
	}
	sets, err := r.planDeviceSets(ctx, &scope{policy: policy}, cluster, nil, nil, nil)
	if err != nil || cluster == nil {
		if err == nil {
			err = r.deleteVolumes(ctx, sets.obsolete)
		}
		return err
	}
	key := managedNodesAnnotation(policy.Name)
	previous, ok := cluster.GetAnnotations()[key]
	if !ok && !sets.changed() {
		return r.deleteVolumes(ctx, sets.obsolete)
	}
	existing, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "storage", "nodes")
	merged, err := plan.MergeRookNodes(existing, splitNodes(previous), nil)
	if err != nil {
		return err
	}
	apply := applyObject(cluster, "", "", merged, nil)
	sets.addTo(apply)
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(cephClusterManager(policy.Name)), client.ForceOwnership); err != nil {
		return err
	}
	return r.deleteVolumes(ctx, sets.obsolete)
}

func (r *Reconciler) getCephCluster(ctx context.Context, policy *prismv1.HybridStoragePolicy) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(CephClusterGVK)
	ref := policy.Spec.CephCluster
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("getting CephCluster %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return u, nil
}

// provisionedPlans returns the plans whose partitions the node's agent reports Ready for the
// current plan, and the names of the nodes still waiting.
func provisionedPlans(s *scope) (map[string]prismv1.NodePlan, []string) {
	ready := map[string]prismv1.NodePlan{}
	var waiting []string
	for _, c := range s.candidates {
		p, ok := s.plans[c.node]
		if !ok || c.storage == nil {
			continue
		}
		cond := meta.FindStatusCondition(c.storage.Status.Conditions, prismv1.ConditionProvisioned)
		current := c.storage.Spec.Plan != nil && equality.Semantic.DeepEqual(*c.storage.Spec.Plan, p) &&
			c.storage.Status.ObservedPlanGeneration == c.storage.Generation
		if current && cond != nil && cond.Status == "True" {
			ready[c.node] = p
		} else {
			waiting = append(waiting, c.node)
		}
	}
	sort.Strings(waiting)
	return ready, waiting
}

// cephConfig is the Rook cephConfig Prism sets: bluestore_min_alloc_size for its OSDs' device
// class, matching the capacity devices' internal write unit.
func (r *Reconciler) cephConfig(s *scope, ready map[string]prismv1.NodePlan) (map[string]any, string) {
	if s.policy.Spec.OSD.MinAllocSize == prismv1.MinAllocSizeDefault || len(ready) == 0 {
		return nil, ""
	}
	var devices []prismv1.Device
	for _, c := range s.candidates {
		if _, ok := ready[c.node]; !ok {
			continue
		}
		for _, sel := range s.selections {
			if sel.Node != c.node {
				continue
			}
			for _, d := range c.storage.Status.Devices {
				for _, cd := range sel.Capacity {
					if cd.StablePath == d.StablePath {
						devices = append(devices, d)
					}
				}
			}
		}
	}
	iu, err := plan.MinAllocSize(devices)
	if err != nil {
		return nil, "bluestore_min_alloc_size left at Ceph's default: " + err.Error()
	}
	return map[string]any{plan.CephConfigSection(deviceClass(s.policy)): map[string]any{"bluestore_min_alloc_size": strconv.FormatInt(iu, 10)}},
		fmt.Sprintf("bluestore_min_alloc_size %d for device class %s", iu, deviceClass(s.policy))
}

func configApplied(cluster *unstructured.Unstructured, config map[string]any) bool {
	for who, v := range config {
		for k, want := range v.(map[string]any) {
			got, _, _ := unstructured.NestedString(cluster.Object, "spec", "cephConfig", who, k)
			if got != want {
				return false
			}
		}
	}
	return true
}

// applyObject is the apply configuration: only the fields Prism owns.
func applyObject(cluster *unstructured.Unstructured, key, managed string, nodes []any, config map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"storage": map[string]any{"nodes": nodes}},
	}}
	u.SetGroupVersionKind(CephClusterGVK)
	u.SetNamespace(cluster.GetNamespace())
	u.SetName(cluster.GetName())
	if key != "" {
		u.SetAnnotations(map[string]string{key: managed})
	}
	if config != nil {
		_ = unstructured.SetNestedMap(u.Object, config, "spec", "cephConfig")
	}
	return u
}

func deviceClass(p *prismv1.HybridStoragePolicy) string {
	if p.Spec.OSD.DeviceClass == "" {
		return "qlc"
	}
	return p.Spec.OSD.DeviceClass
}

func nodeNamesOf(entries []plan.RookNode) []string {
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	return names
}

func joinNodes(names []string) string {
	sort.Strings(names)
	return strings.Join(names, ",")
}

func splitNodes(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func prefixed(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}
