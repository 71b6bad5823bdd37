package hybridstoragepolicy

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/kube"
	"github.com/prism-storage/prism/internal/plan"
)

// Condition reasons.
const (
	ReasonNodesSelected     = "NodesSelected"
	ReasonNoNodesMatched    = "NoNodesMatched"
	ReasonSelectionComplete = "SelectionComplete"
	ReasonNodesIncomplete   = "NodesIncomplete"
	ReasonReconcileError    = "ReconcileError"
	// ReasonInvalidNodeSelector: spec.nodeSelector is one the API server stores but no
	// selector can be built from (operator In without values, say).
	ReasonInvalidNodeSelector = "InvalidNodeSelector"
	ReasonPlanned             = "Planned"
	ReasonPlanRefused         = "PlanRefused"
	ReasonNothingToPlan       = "NothingToPlan"
	ReasonProvisioning        = "Provisioning"
	ReasonProvisioned         = "Provisioned"
)

// statusInput is everything the status is computed from, gathered by one reconcile.
type statusInput struct {
	// planned: the selection and the layouts were computed from a complete observation.
	// Otherwise the node counts and details of the last good reconcile stay.
	planned      bool
	selections   []prismv1.NodeSelection
	planProblems []string
	rook         rookOutcome
	released     []release
	// invalidSelector names the field of spec.nodeSelector that cannot be used.
	invalidSelector string
	// observed: the Nodes and StorageNodes were listed; err stopped the reconcile (nil: none did).
	observed bool
	err      error
}

func statusInputOf(s *scope, err error) statusInput {
	return statusInput{
		planned: s.planned, selections: s.selections, planProblems: s.planProblems, rook: s.rook, released: s.released,
		invalidSelector: s.invalidSelector, observed: s.observed, err: err,
	}
}

// computeStatus derives the policy status from what one reconcile observed and did. Pure:
// the same inputs give the same status.
func computeStatus(policy *prismv1.HybridStoragePolicy, in statusInput) prismv1.HybridStoragePolicyStatus {
	st := *policy.Status.DeepCopy()
	st.Conditions = append([]metav1.Condition(nil), policy.Status.Conditions...)
	st.ObservedGeneration = policy.Generation
	gen := policy.Generation
	if in.planned {
		st.SelectedNodes = int32(len(in.selections))
		st.ReadyNodes = 0
		st.Nodes, st.OmittedNodes = detailedNodes(in.selections)
		for _, sel := range in.selections {
			if plan.Complete(sel) {
				st.ReadyNodes++
			}
		}
		setSelectionConditions(&st, in, gen)
	}
	if in.invalidSelector != "" {
		set(&st, prismv1.ConditionNodesSelected, false, ReasonInvalidNodeSelector, in.invalidSelector, gen)
	}
	if in.rook.reason != "" {
		set(&st, prismv1.ConditionRookConfigured, in.rook.ok, in.rook.reason, in.rook.message, gen)
	}
	reason, msg, ok := readiness(policy.Spec.Mode, &st, in)
	set(&st, prismv1.ConditionReady, ok, reason, msg, gen)
	return st
}

// setSelectionConditions sets NodesSelected and Planned from a complete selection.
func setSelectionConditions(st *prismv1.HybridStoragePolicyStatus, in statusInput, gen int64) {
	if st.SelectedNodes == 0 {
		set(st, prismv1.ConditionNodesSelected, false, ReasonNoNodesMatched, "spec.nodeSelector matches no node"+releasedNote(in.released), gen)
	} else {
		set(st, prismv1.ConditionNodesSelected, true, ReasonNodesSelected,
			fmt.Sprintf("%d of %d matched nodes have fast and capacity devices", st.ReadyNodes, st.SelectedNodes)+releasedNote(in.released), gen)
	}
	switch {
	case len(in.planProblems) > 0:
		set(st, prismv1.ConditionPlanned, false, ReasonPlanRefused, summarise(in.planProblems), gen)
	case st.ReadyNodes == 0:
		set(st, prismv1.ConditionPlanned, false, ReasonNothingToPlan, "no node has both a fast and a capacity device", gen)
	default:
		set(st, prismv1.ConditionPlanned, true, ReasonPlanned, fmt.Sprintf("DB slots planned on %d nodes", st.ReadyNodes), gen)
	}
}

// readiness is the Ready condition: the failure that stopped the reconcile first, then what
// keeps the policy from being fully provisioned.
func readiness(mode prismv1.PolicyMode, st *prismv1.HybridStoragePolicyStatus, in statusInput) (reason, msg string, ok bool) {
	switch {
	case in.invalidSelector != "":
		return ReasonInvalidNodeSelector, in.invalidSelector + "; no node was claimed, released or withdrawn from Rook", false
	case in.err != nil && !in.observed:
		return ReasonReconcileError, "could not observe the cluster, so no node was claimed or released and no Rook entry withdrawn: " + in.err.Error(), false
	case in.err != nil:
		return ReasonReconcileError, in.err.Error(), false
	case st.SelectedNodes == 0:
		return ReasonNoNodesMatched, "spec.nodeSelector matches no node", false
	case len(in.planProblems) > 0:
		return ReasonPlanRefused, summarise(in.planProblems), false
	case st.ReadyNodes < st.SelectedNodes:
		return ReasonNodesIncomplete, incompleteMessage(in.selections), false
	case mode == prismv1.ModeDryRun:
		return ReasonSelectionComplete, fmt.Sprintf("dry run: every one of %d nodes has fast and capacity devices and a plan", st.SelectedNodes), true
	case !in.rook.ok:
		return ReasonProvisioning, in.rook.message, false
	default:
		return ReasonProvisioned, fmt.Sprintf("every one of %d nodes is partitioned and in the CephCluster", st.SelectedNodes), true
	}
}

// releasedNote names the nodes this reconcile released and why.
func releasedNote(released []release) string {
	if len(released) == 0 {
		return ""
	}
	notes := make([]string, 0, len(released))
	for _, r := range released {
		notes = append(notes, r.node+" ("+r.reason+")")
	}
	return "; released " + summarise(notes)
}

// MaxDetailedNodes bounds status.nodes: a policy over thousands of nodes would otherwise
// exceed the API server's object size limit.
const MaxDetailedNodes = 100

// detailedNodes lists every node up to MaxDetailedNodes; beyond that, the nodes that need
// attention (a message or warnings) first, up to the limit.
func detailedNodes(selections []prismv1.NodeSelection) ([]prismv1.NodeSelection, int32) {
	if len(selections) <= MaxDetailedNodes {
		return selections, 0
	}
	var listed []prismv1.NodeSelection
	for _, sel := range selections {
		if (sel.Message != "" || len(sel.Warnings) > 0) && len(listed) < MaxDetailedNodes {
			listed = append(listed, sel)
		}
	}
	return listed, int32(len(selections) - len(listed))
}

func summarise(problems []string) string { return kube.Summarise(problems) }

func incompleteMessage(selections []prismv1.NodeSelection) string {
	var msg string
	n := 0
	for _, sel := range selections {
		if plan.Complete(sel) {
			continue
		}
		n++
		if n <= 5 {
			msg += fmt.Sprintf("%s: %s; ", sel.Node, sel.Message)
		}
	}
	if n > 5 {
		msg += fmt.Sprintf("and %d more nodes; ", n-5)
	}
	return fmt.Sprintf("%d nodes incomplete: %s", n, msg[:len(msg)-2])
}

func set(st *prismv1.HybridStoragePolicyStatus, condType string, ok bool, reason, msg string, gen int64) {
	kube.SetCondition(&st.Conditions, condType, ok, reason, msg, gen)
}
