package hybridstoragepolicy

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Event reasons: what an admin must notice, as Kubernetes Events (events.k8s.io). Claims and
// releases are recorded on the StorageNode (related: the policy); the rest on the policy.
const (
	EventNodeClaimed       = "NodeClaimed"
	EventNodeReleased      = "NodeReleased"
	EventOSDEntriesApplied = "OSDEntriesApplied"
	// EventOSDEntriesWithheld: Prism writes nothing to the CephCluster (a refused plan, no
	// CephCluster, useAllNodes, a CephCluster too large to store), or no new OSD entry (a
	// Ceph that loses partition DBs);
	// recorded when the reason or message changes.
	EventOSDEntriesWithheld = "OSDEntriesWithheld"
	// EventCachePlanRefused: the cache's ClassificationPolicy does not compile (or is missing),
	// so no node gets a plan; recorded when the message changes.
	EventCachePlanRefused = "CachePlanRefused"
	// EventNewOSDsHeld: new drives of a node are not written while Ceph has an OSD destroyed
	// under the node's CRUSH host (decision 0061); recorded per node when the RookConfigured
	// condition changes, naming the ids and the purge.
	EventNewOSDsHeld = "NewOSDsHeld"
	// EventCephProbeFailed: a probe pod could not get Ceph's answers for a node, whose
	// replacements stay held (probe.go); recorded once per failed probe, when it is replaced.
	EventCephProbeFailed = "CephProbeFailed"
)

// Event actions (the events API's verb for what the operator did or refused).
const (
	actionClaim     = "Claim"
	actionRelease   = "Release"
	actionApplyRook = "ApplyCephCluster"
	actionPlan      = "Plan"
	actionProbe     = "ProbeCeph"
)

const (
	eventNormal  = "Normal"
	eventWarning = "Warning"
)

// withheld are the RookConfigured reasons under which Prism leaves the CephCluster alone.
var withheld = map[string]bool{ReasonRookPlanRefused: true, ReasonCephClusterNotFound: true, ReasonCephClusterAllNodes: true,
	ReasonCephLosesPartitionDB: true, ReasonCephClusterTooLarge: true}

func (r *Reconciler) event(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
	}
}

// recordTransitions records the Events of states an admin must notice, once per change of
// the condition that reports them (not on every reconcile).
func (r *Reconciler) recordTransitions(before, after *prismv1.HybridStoragePolicy, s *scope) {
	if c := changed(before, after, prismv1.ConditionRookConfigured); c != nil && withheld[c.Reason] {
		r.event(after, nil, eventWarning, EventOSDEntriesWithheld, actionApplyRook, "%s: %s", c.Reason, c.Message)
	}
	if c := changed(before, after, prismv1.ConditionRookConfigured); c != nil && c.Reason == ReasonNewOSDsHeld {
		held := s.decision.Rook.Gate.Destroyed
		for _, node := range slices.Sorted(maps.Keys(held)) {
			r.event(after, nil, eventWarning, EventNewOSDsHeld, actionApplyRook, "new drives of node %s not written: %s", node, held[node])
		}
	}
	if s.cacheRefused != "" && changed(before, after, prismv1.ConditionPlanned) != nil {
		r.event(after, nil, eventWarning, EventCachePlanRefused, actionPlan, "no node gets a plan: %s", s.cacheRefused)
	}
}

// changed returns after's condition of type t when its reason or message differs from before's.
func changed(before, after *prismv1.HybridStoragePolicy, t string) *metav1.Condition {
	a := meta.FindStatusCondition(after.Status.Conditions, t)
	if a == nil {
		return nil
	}
	if b := meta.FindStatusCondition(before.Status.Conditions, t); b != nil && b.Reason == a.Reason && b.Message == a.Message {
		return nil
	}
	return a
}
