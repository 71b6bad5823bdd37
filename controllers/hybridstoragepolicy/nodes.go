package hybridstoragepolicy

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// findCandidates lists the nodes matching the policy's selector and their StorageNodes.
func (r *Reconciler) findCandidates(ctx context.Context, s *scope) error {
	selector, err := metav1.LabelSelectorAsSelector(s.policy.Spec.NodeSelector.LabelSelector())
	if err != nil {
		return fmt.Errorf("spec.nodeSelector: %w", err)
	}
	nodes := &corev1.NodeList{}
	if err := r.Client.List(ctx, nodes, client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	storageNodes := &prismv1.StorageNodeList{}
	if err := r.Client.List(ctx, storageNodes); err != nil {
		return fmt.Errorf("listing storage nodes: %w", err)
	}
	byName := map[string]*prismv1.StorageNode{}
	for i := range storageNodes.Items {
		byName[storageNodes.Items[i].Name] = &storageNodes.Items[i]
	}
	for _, n := range nodes.Items {
		c := candidate{node: n.Name, storage: byName[n.Name]}
		if c.storage != nil && c.storage.Spec.PolicyName != "" && c.storage.Spec.PolicyName != s.policy.Name {
			c.claimedBy = c.storage.Spec.PolicyName
		}
		s.candidates = append(s.candidates, c)
	}
	sort.Slice(s.candidates, func(i, j int) bool { return s.candidates[i].node < s.candidates[j].node })
	return nil
}

// releaseNodes clears this policy's claim from every StorageNode not in keep.
func (r *Reconciler) releaseNodes(ctx context.Context, policy string, keep map[string]bool) error {
	list := &prismv1.StorageNodeList{}
	if err := r.Client.List(ctx, list); err != nil {
		return fmt.Errorf("listing storage nodes: %w", err)
	}
	var errs []error
	for i := range list.Items {
		sn := &list.Items[i]
		if sn.Spec.PolicyName != policy || keep[sn.Name] {
			continue
		}
		// The plan goes with the claim: the agent stops acting; what it made stays on disk.
		patch := client.MergeFrom(sn.DeepCopy())
		sn.Spec = prismv1.StorageNodeSpec{}
		if err := r.Client.Patch(ctx, sn, patch, client.FieldOwner(FieldManager)); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("releasing node %s: %w", sn.Name, err))
		}
	}
	return kerrors.NewAggregate(errs)
}

// selectDevices runs the pure selection on every candidate node.
func (r *Reconciler) selectDevices(_ context.Context, s *scope) error {
	for _, c := range s.candidates {
		switch {
		case c.storage == nil:
			s.selections = append(s.selections, prismv1.NodeSelection{Node: c.node, Message: "no StorageNode yet: is the prism agent running on this node?"})
		case c.claimedBy != "":
			s.selections = append(s.selections, prismv1.NodeSelection{Node: c.node, Message: fmt.Sprintf("managed by policy %s; a node belongs to one policy", c.claimedBy)})
		default:
			var current *prismv1.NodePlan
			if c.storage.Spec.PolicyName == s.policy.Name {
				current = c.storage.Spec.Plan // devices it uses stay selected once provisioned
			}
			s.selections = append(s.selections, plan.SelectNode(c.node, c.storage.Status.Devices, &s.policy.Spec, current))
		}
	}
	return nil
}
