package hybridstoragepolicy

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/internal/plan/decide"
	"github.com/prism-storage/prism/internal/workpool"
)

// claimNodes writes the claims the decision made, one patch per node, several at a time.
// DryRun and a refused plan anywhere decide none: a policy applies whole. Letting nodes go is
// releaseNodes' business.
func (r *Reconciler) claimNodes(ctx context.Context, s *scope) (ctrl.Result, error) {
	errs := parallel(ctx, s.decision.Claims, func(ctx context.Context, c decide.Claim) error {
		sn := c.StorageNode.DeepCopy()
		// Optimistic lock: if another policy claims the node at the same moment, one patch fails.
		patch := client.MergeFromWithOptions(c.StorageNode, client.MergeFromWithOptimisticLock{})
		sn.Spec = c.Want
		if err := r.Client.Patch(ctx, sn, patch, client.FieldOwner(FieldManager)); err != nil {
			if apierrors.IsConflict(err) {
				return fmt.Errorf("node %s changed concurrently, will retry", sn.Name)
			}
			return fmt.Errorf("writing the spec of node %s: %w", sn.Name, err)
		}
		if c.New {
			r.event(sn, s.policy, eventNormal, EventNodeClaimed, actionClaim, "policy %s claimed node %s", s.policy.Name, sn.Name)
		}
		return nil
	})
	return ctrl.Result{}, kerrors.NewAggregate(errs)
}

// writeConcurrency bounds parallel API writes: a policy over 1000 nodes writes 1000 specs.
const writeConcurrency = 16

// parallel runs fn on every item, writeConcurrency at a time, and returns the errors in the
// items' order.
func parallel[T any](ctx context.Context, items []T, fn func(context.Context, T) error) []error {
	errs := make([]error, len(items))
	workpool.Each(len(items), writeConcurrency, func(i int) { errs[i] = fn(ctx, items[i]) })
	return slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}
