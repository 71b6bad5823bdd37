package hybridstoragepolicy

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// claimNodes claims each matched node and writes its plan in one patch per node that
// changed, several at a time. DryRun writes nothing; a refused plan anywhere writes nothing:
// a policy applies whole. Letting nodes go is releaseNodes' business.
func (r *Reconciler) claimNodes(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.policy.Spec.Mode == prismv1.ModeDryRun || len(s.planProblems) > 0 {
		return ctrl.Result{}, nil
	}
	var todo []*candidate
	for i := range s.candidates {
		c := &s.candidates[i]
		if c.storage == nil || c.claimedBy != "" {
			continue
		}
		want := prismv1.StorageNodeSpec{PolicyName: s.policy.Name, Mode: s.policy.Spec.Mode}
		if p, ok := s.plans[c.node]; ok {
			want.Plan = &p
		}
		if !equality.Semantic.DeepEqual(c.storage.Spec, want) {
			c.want = want
			todo = append(todo, c)
		}
	}
	errs := parallel(ctx, todo, func(ctx context.Context, c *candidate) error {
		// Optimistic lock: if another policy claims the node at the same moment, one patch fails.
		patch := client.MergeFromWithOptions(c.storage.DeepCopy(), client.MergeFromWithOptimisticLock{})
		newClaim := c.storage.Spec.PolicyName == ""
		c.storage.Spec = c.want
		if err := r.Client.Patch(ctx, c.storage, patch, client.FieldOwner(FieldManager)); err != nil {
			if apierrors.IsConflict(err) {
				return fmt.Errorf("node %s changed concurrently, will retry", c.node)
			}
			return fmt.Errorf("writing the spec of node %s: %w", c.node, err)
		}
		if newClaim {
			r.event(c.storage, s.policy, eventNormal, EventNodeClaimed, actionClaim, "policy %s claimed node %s", s.policy.Name, c.node)
		}
		return nil
	})
	return ctrl.Result{}, kerrors.NewAggregate(errs)
}

// writeConcurrency bounds parallel API writes: a policy over 1000 nodes writes 1000 specs.
const writeConcurrency = 16

// parallel runs fn on every item, writeConcurrency at a time, and returns the errors.
func parallel[T any](ctx context.Context, items []T, fn func(context.Context, T) error) []error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, writeConcurrency)
	)
	for _, it := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(ctx, it); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}
