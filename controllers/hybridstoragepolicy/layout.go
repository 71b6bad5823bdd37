package hybridstoragepolicy

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
)

// planLayouts plans DB slots on every node that has both tiers, starting from the plan
// already written to its StorageNode so that existing slots never move.
func (r *Reconciler) planLayouts(ctx context.Context, s *scope) error {
	s.plans = map[string]prismv1.NodePlan{}
	classes, err := r.classificationPolicy(ctx, s.policy)
	if err != nil {
		s.planProblems = append(s.planProblems, err.Error())
		return err // transient: retried
	}
	cache, err := plan.CachePlan(&s.policy.Spec, classes)
	if err != nil {
		s.planProblems = append(s.planProblems, err.Error())
		return nil
	}
	storage := map[string]*prismv1.StorageNode{}
	for _, c := range s.candidates {
		storage[c.node] = c.storage
	}
	for i := range s.selections {
		sel := &s.selections[i]
		sn := storage[sel.Node]
		if sn == nil || !plan.Complete(*sel) {
			continue
		}
		l := plan.PlanLayout(plan.LayoutInput{Selection: *sel, Devices: sn.Status.Devices, Spec: &s.policy.Spec, Previous: sn.Spec.Plan})
		sel.Warnings = l.Warnings
		var problems []string
		problems = append(problems, l.Problems...)
		for _, u := range l.Unplaced {
			problems = append(problems, u.Name+": "+u.Reason)
		}
		if len(problems) > 0 {
			sel.Message = "plan refused: " + strings.Join(problems, "; ")
			for _, p := range problems {
				s.planProblems = append(s.planProblems, sel.Node+": "+p)
			}
			continue
		}
		annotateSlots(sel, l.Plan)
		if plan.HasCachePartition(l.Plan) {
			l.Plan.Cache = cache.DeepCopy()
		}
		s.plans[sel.Node] = l.Plan
	}
	return nil
}

// classificationPolicy reads the ClassificationPolicy the policy's cache names (nil when it
// names none or it does not exist: plan.CachePlan then reports it, and no node's plan is
// written, rather than caches without the classes the user asked for).
func (r *Reconciler) classificationPolicy(ctx context.Context, policy *prismv1.HybridStoragePolicy) (*prismv1.ClassificationPolicy, error) {
	name := policy.Spec.Cache.ClassificationPolicyName
	if name == "" || policy.Spec.Cache.Mode == prismv1.CacheNone {
		return nil, nil
	}
	classes := &prismv1.ClassificationPolicy{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, classes); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ClassificationPolicy %q: %w", name, err)
	}
	return classes, nil
}

// annotateSlots records each capacity device's planned DB partition in the selection.
func annotateSlots(sel *prismv1.NodeSelection, p prismv1.NodePlan) {
	slot := map[string]string{}
	for _, f := range p.FastDevices {
		for _, s := range f.Slots {
			if s.DataDevice != "" {
				slot[s.DataDevice] = plan.PartitionPath(f.StablePath, s.Partition.Number)
			}
		}
	}
	for i := range sel.Capacity {
		sel.Capacity[i].DBSlot = slot[sel.Capacity[i].StablePath]
	}
}

// writeSpecs claims each matched node and writes its plan in one patch per node that
// changed, several at a time. DryRun writes nothing (and gives up earlier claims); a refused
// plan anywhere writes nothing: a policy applies whole. Nodes the policy no longer matches are
// released.
func (r *Reconciler) writeSpecs(ctx context.Context, s *scope) error {
	if s.policy.Spec.Mode == prismv1.ModeDryRun {
		return r.releaseNodes(ctx, s.policy.Name, nil)
	}
	if len(s.planProblems) > 0 {
		return nil
	}
	keep := map[string]bool{}
	var todo []*candidate
	for i := range s.candidates {
		c := &s.candidates[i]
		if c.storage == nil || c.claimedBy != "" {
			continue
		}
		keep[c.node] = true
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
		c.storage.Spec = c.want
		if err := r.Client.Patch(ctx, c.storage, patch, client.FieldOwner(FieldManager)); err != nil {
			if apierrors.IsConflict(err) {
				return fmt.Errorf("node %s changed concurrently, will retry", c.node)
			}
			return fmt.Errorf("writing the spec of node %s: %w", c.node, err)
		}
		return nil
	})
	errs = append(errs, r.releaseNodes(ctx, s.policy.Name, keep))
	return kerrors.NewAggregate(errs)
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
