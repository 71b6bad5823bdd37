package hybridstoragepolicy

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
)

// planLayouts plans DB slots on every node that has both tiers, starting from the plan
// already written to its StorageNode so that existing slots never move.
func (r *Reconciler) planLayouts(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.plans = map[string]prismv1.NodePlan{}
	classes, err := r.classificationPolicy(ctx, s.policy)
	if err != nil {
		return ctrl.Result{}, err // transient: retried, and nothing after this phase runs
	}
	cache, err := plan.CachePlan(&s.policy.Spec, classes)
	if err != nil {
		s.planProblems = append(s.planProblems, err.Error())
		s.cacheRefused = err.Error()
		s.planned = true
		return ctrl.Result{}, nil
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
	s.planned = true
	return ctrl.Result{}, nil
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
				slot[s.DataDevice] = prismv1.PartitionPath(f.StablePath, s.Partition.Number)
			}
		}
	}
	for i := range sel.Capacity {
		sel.Capacity[i].DBSlot = slot[sel.Capacity[i].StablePath]
	}
}
