package hybridstoragepolicy

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
)

// candidate is a node the selector matched, with its StorageNode when the agent created one.
type candidate struct {
	node      string
	storage   *prismv1.StorageNode
	claimedBy string // another policy that already manages the node
	want      prismv1.StorageNodeSpec
}

// nodeSelector turns spec.nodeSelector into a labels.Selector, or says which field is wrong.
// The API server accepts selectors metav1.LabelSelectorAsSelector refuses (operator In with
// no values, say): such a policy selects nothing, and must not look as if it matched no node.
func nodeSelector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if errs := metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("spec", "nodeSelector")); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	selector, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("spec.nodeSelector: %w", err)
	}
	return selector, nil
}

// findCandidates lists the nodes matching the policy's selector and every StorageNode. An
// invalid selector is the user's error: the reconcile stops without retrying (a spec change
// brings it back). Either way nothing after this phase runs: no node is released and no Rook
// entry withdrawn on a failed observation.
func (r *Reconciler) findCandidates(ctx context.Context, s *scope) (ctrl.Result, error) {
	selector, err := nodeSelector(s.policy.Spec.NodeSelector.LabelSelector())
	if err != nil {
		s.invalidSelector = err.Error()
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	nodes := &corev1.NodeList{}
	if err := r.Client.List(ctx, nodes, client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing nodes: %w", err)
	}
	storageNodes := &prismv1.StorageNodeList{}
	if err := r.Client.List(ctx, storageNodes); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing storage nodes: %w", err)
	}
	byName := map[string]*prismv1.StorageNode{}
	for i := range storageNodes.Items {
		sn := &storageNodes.Items[i]
		byName[sn.Name] = sn
		if sn.Spec.PolicyName == s.policy.Name {
			s.claimed = append(s.claimed, sn)
		}
	}
	for _, n := range nodes.Items {
		c := candidate{node: n.Name, storage: byName[n.Name]}
		if c.storage != nil && c.storage.Spec.PolicyName != "" && c.storage.Spec.PolicyName != s.policy.Name {
			c.claimedBy = c.storage.Spec.PolicyName
		}
		s.candidates = append(s.candidates, c)
	}
	sort.Slice(s.candidates, func(i, j int) bool { return s.candidates[i].node < s.candidates[j].node })
	s.observed = true
	return ctrl.Result{}, nil
}

// inputOf is what the planner needs to know of a candidate node.
func inputOf(c candidate, policy string) plan.NodeInventory {
	switch {
	case c.storage == nil:
		return plan.NodeInventory{Node: c.node, NoInventory: true}
	case c.claimedBy != "":
		return plan.NodeInventory{Node: c.node, ClaimedBy: c.claimedBy}
	}
	n := plan.NodeInventory{Node: c.node, Devices: c.storage.Status.Devices}
	if c.storage.Spec.PolicyName == policy {
		n.Previous = c.storage.Spec.Plan // devices it uses stay selected, and slots never move
	}
	return n
}
