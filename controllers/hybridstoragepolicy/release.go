package hybridstoragepolicy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Why a node is released; each ends up in the status and in a NodeReleased Event.
const (
	releaseDryRun     = "the policy is in DryRun mode and claims no node"
	releaseNotMatched = "no Node matching spec.nodeSelector has this name any more"
	releaseDeleted    = "the policy is being deleted"
)

// release is a node let go and why.
type release struct {
	node   string
	reason string
}

// releasesOf decides which of the nodes the policy claims it lets go, from one complete
// observation (the candidates and the claimed StorageNodes come from the same lists). A
// policy whose plan is refused keeps its nodes: it applies whole or not at all.
func releasesOf(mode prismv1.PolicyMode, planRefused bool, candidates []candidate, claimed []*prismv1.StorageNode) []release {
	if mode != prismv1.ModeDryRun && planRefused {
		return nil
	}
	matched := map[string]bool{}
	for _, c := range candidates {
		matched[c.node] = c.storage != nil
	}
	var out []release
	for _, sn := range claimed {
		switch {
		case mode == prismv1.ModeDryRun:
			out = append(out, release{node: sn.Name, reason: releaseDryRun})
		case !matched[sn.Name]:
			out = append(out, release{node: sn.Name, reason: releaseNotMatched})
		}
	}
	return out
}

// releaseNodes clears the claim and plan of the nodes the policy lets go. It runs only after
// findCandidates observed every Node and StorageNode without error.
func (r *Reconciler) releaseNodes(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.observed {
		return ctrl.Result{}, fmt.Errorf("internal error: releasing nodes without a complete observation")
	}
	byName := map[string]*prismv1.StorageNode{}
	for _, sn := range s.claimed {
		byName[sn.Name] = sn
	}
	var errs []error
	for _, rel := range releasesOf(s.policy.Spec.Mode, len(s.planProblems) > 0, s.candidates, s.claimed) {
		if err := r.release(ctx, s.policy, byName[rel.node], rel.reason); err != nil {
			errs = append(errs, err)
			continue
		}
		s.released = append(s.released, rel)
	}
	return ctrl.Result{}, kerrors.NewAggregate(errs)
}

// releaseAll releases every node the policy claims, when the policy is deleted.
func (r *Reconciler) releaseAll(ctx context.Context, policy *prismv1.HybridStoragePolicy) error {
	list := &prismv1.StorageNodeList{}
	if err := r.Client.List(ctx, list); err != nil {
		return fmt.Errorf("listing storage nodes: %w", err)
	}
	var errs []error
	for i := range list.Items {
		if sn := &list.Items[i]; sn.Spec.PolicyName == policy.Name {
			errs = append(errs, r.release(ctx, policy, sn, releaseDeleted))
		}
	}
	return kerrors.NewAggregate(errs)
}

// release clears one StorageNode's spec. The plan goes with the claim: the agent stops
// acting; what it made stays on disk. The optimistic lock makes the patch fail if the node
// changed since it was read (another policy claimed it meanwhile, say).
func (r *Reconciler) release(ctx context.Context, policy *prismv1.HybridStoragePolicy, sn *prismv1.StorageNode, reason string) error {
	patch := client.MergeFromWithOptions(sn.DeepCopy(), client.MergeFromWithOptimisticLock{})
	sn.Spec = prismv1.StorageNodeSpec{}
	if err := r.Client.Patch(ctx, sn, patch, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if apierrors.IsConflict(err) {
			return fmt.Errorf("node %s changed concurrently, will retry releasing it", sn.Name)
		}
		return fmt.Errorf("releasing node %s: %w", sn.Name, err)
	}
	r.event(sn, policy, eventNormal, EventNodeReleased, actionRelease, "released node %s from policy %s: %s", sn.Name, policy.Name, reason)
	return nil
}
