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

// releaseDeleted is why every node goes when the policy is deleted (the others are decided:
// decide.ReleaseDryRun, decide.ReleaseNotMatched).
const releaseDeleted = "the policy is being deleted"

// release is a node let go and why.
type release struct {
	node   string
	reason string
}

// releaseNodes clears the claim and plan of the nodes the decision lets go.
func (r *Reconciler) releaseNodes(ctx context.Context, s *scope) (ctrl.Result, error) {
	var errs []error
	for _, rel := range s.decision.Releases {
		if err := r.release(ctx, s.policy, rel.StorageNode.DeepCopy(), rel.Reason); err != nil {
			errs = append(errs, err)
			continue
		}
		s.released = append(s.released, release{node: rel.StorageNode.Name, reason: rel.Reason})
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
