package hybridstoragepolicy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
)

// Condition reasons.
const (
	ReasonNodesSelected     = "NodesSelected"
	ReasonNoNodesMatched    = "NoNodesMatched"
	ReasonSelectionComplete = "SelectionComplete"
	ReasonNodesIncomplete   = "NodesIncomplete"
	ReasonReconcileError    = "ReconcileError"
)

// computeStatus derives the policy status from the per-node selections and the errors of
// this reconcile. Pure: the same inputs give the same status.
func computeStatus(policy *prismv1.HybridStoragePolicy, selections []prismv1.NodeSelection, errs []error) prismv1.HybridStoragePolicyStatus {
	st := prismv1.HybridStoragePolicyStatus{
		Conditions:         append([]metav1.Condition(nil), policy.Status.Conditions...),
		ObservedGeneration: policy.Generation,
		SelectedNodes:      int32(len(selections)),
		Nodes:              selections,
	}
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
	case len(errs) > 0:
		set(&st, prismv1.ConditionReady, false, ReasonReconcileError, kerrors.NewAggregate(errs).Error(), gen)
	case st.SelectedNodes == 0:
		set(&st, prismv1.ConditionReady, false, ReasonNoNodesMatched, "spec.nodeSelector matches no node", gen)
	case st.ReadyNodes < st.SelectedNodes:
		set(&st, prismv1.ConditionReady, false, ReasonNodesIncomplete, incompleteMessage(selections), gen)
	default:
		set(&st, prismv1.ConditionReady, true, ReasonSelectionComplete,
			fmt.Sprintf("every one of %d nodes has fast and capacity devices", st.SelectedNodes), gen)
	}
	return st
}

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
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: condType, Status: status, Reason: reason, Message: truncate(msg, 32768), ObservedGeneration: gen,
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
