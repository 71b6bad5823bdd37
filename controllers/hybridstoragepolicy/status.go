package hybridstoragepolicy

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"

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
	ReasonPlanned           = "Planned"
	ReasonPlanRefused       = "PlanRefused"
	ReasonNothingToPlan     = "NothingToPlan"
	ReasonProvisioning      = "Provisioning"
	ReasonProvisioned       = "Provisioned"
)

// computeStatus derives the policy status from the per-node selections and the errors of
// this reconcile. Pure: the same inputs give the same status.
func computeStatus(policy *prismv1.HybridStoragePolicy, selections []prismv1.NodeSelection, planProblems []string, rook rookOutcome, errs []error) prismv1.HybridStoragePolicyStatus {
	st := prismv1.HybridStoragePolicyStatus{
		Conditions:         append([]metav1.Condition(nil), policy.Status.Conditions...),
		ObservedGeneration: policy.Generation,
		SelectedNodes:      int32(len(selections)),
	}
	st.Nodes, st.OmittedNodes = detailedNodes(selections)
	for _, sel := range selections {
		if plan.Complete(sel) {
			st.ReadyNodes++
		}
	}
	gen := policy.Generation
	if st.SelectedNodes == 0 {
		set(&st, prismv1.ConditionNodesSelected, false, ReasonNoNodesMatched, "spec.nodeSelector matches no node", gen)
	} else {
		set(&st, prismv1.ConditionNodesSelected, true, ReasonNodesSelected,
			fmt.Sprintf("%d of %d matched nodes have fast and capacity devices", st.ReadyNodes, st.SelectedNodes), gen)
	}
	switch {
	case len(planProblems) > 0:
		set(&st, prismv1.ConditionPlanned, false, ReasonPlanRefused, summarise(planProblems), gen)
	case st.ReadyNodes == 0:
		set(&st, prismv1.ConditionPlanned, false, ReasonNothingToPlan, "no node has both a fast and a capacity device", gen)
	default:
		set(&st, prismv1.ConditionPlanned, true, ReasonPlanned, fmt.Sprintf("DB slots planned on %d nodes", st.ReadyNodes), gen)
	}
	if rook.reason != "" {
		set(&st, prismv1.ConditionRookConfigured, rook.ok, rook.reason, rook.message, gen)
	}
	switch {
	case len(errs) > 0:
		set(&st, prismv1.ConditionReady, false, ReasonReconcileError, kerrors.NewAggregate(errs).Error(), gen)
	case st.SelectedNodes == 0:
		set(&st, prismv1.ConditionReady, false, ReasonNoNodesMatched, "spec.nodeSelector matches no node", gen)
	case len(planProblems) > 0:
		set(&st, prismv1.ConditionReady, false, ReasonPlanRefused, summarise(planProblems), gen)
	case st.ReadyNodes < st.SelectedNodes:
		set(&st, prismv1.ConditionReady, false, ReasonNodesIncomplete, incompleteMessage(selections), gen)
	case policy.Spec.Mode == prismv1.ModeDryRun:
		set(&st, prismv1.ConditionReady, true, ReasonSelectionComplete,
			fmt.Sprintf("dry run: every one of %d nodes has fast and capacity devices and a plan", st.SelectedNodes), gen)
	case !rook.ok:
		set(&st, prismv1.ConditionReady, false, ReasonProvisioning, rook.message, gen)
	default:
		set(&st, prismv1.ConditionReady, true, ReasonProvisioned,
			fmt.Sprintf("every one of %d nodes is partitioned and in the CephCluster", st.SelectedNodes), gen)
	}
	return st
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
