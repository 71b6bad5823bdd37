package hybridstoragepolicy

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
)

// planLayouts plans DB slots on every node that has both tiers, starting from the plan
// already written to its StorageNode so that existing slots never move.
func (r *Reconciler) planLayouts(_ context.Context, s *scope) error {
	s.plans = map[string]prismv1.NodePlan{}
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
		s.plans[sel.Node] = l.Plan
	}
	return nil
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

// writePlans writes each node's plan into its StorageNode spec, for the agent to carry out.
// Nothing is written in DryRun or while any node's plan is refused: a policy applies whole.
func (r *Reconciler) writePlans(ctx context.Context, s *scope) error {
	if s.policy.Spec.Mode != prismv1.ModeApply || len(s.planProblems) > 0 {
		return nil
	}
	var errs []error
	for _, c := range s.candidates {
		p, ok := s.plans[c.node]
		if !ok || c.storage == nil || c.claimedBy != "" {
			continue
		}
		want := prismv1.StorageNodeSpec{PolicyName: s.policy.Name, Mode: s.policy.Spec.Mode, Plan: &p}
		if equality.Semantic.DeepEqual(c.storage.Spec, want) {
			continue
		}
		patch := client.MergeFromWithOptions(c.storage.DeepCopy(), client.MergeFromWithOptimisticLock{})
		c.storage.Spec = want
		if err := r.Client.Patch(ctx, c.storage, patch, client.FieldOwner(FieldManager)); err != nil {
			errs = append(errs, fmt.Errorf("writing the plan of node %s: %w", c.node, err))
		}
	}
	return kerrors.NewAggregate(errs)
}
