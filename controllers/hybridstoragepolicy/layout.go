package hybridstoragepolicy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
)

// planNodes runs the planner (internal/plan.Plan, the one `kubectl prism plan` runs) on what
// findCandidates observed and the ClassificationPolicy the cache names: the selections, and
// the plans of the nodes with both tiers, starting from the plan already written to each
// StorageNode so that existing slots never move.
func (r *Reconciler) planNodes(ctx context.Context, s *scope) (ctrl.Result, error) {
	classes, err := r.classificationPolicy(ctx, s.policy)
	if err != nil {
		return ctrl.Result{}, err // transient: retried, and nothing after this phase runs
	}
	in := plan.Input{Spec: &s.policy.Spec, Classes: classes, DeviceClass: deviceClass(s.policy)}
	for _, c := range s.candidates {
		in.Nodes = append(in.Nodes, inputOf(c, s.policy.Name))
	}
	out := plan.Plan(in)
	s.plans = map[string]prismv1.NodePlan{}
	for _, n := range out.Nodes {
		s.selections = append(s.selections, n.Selection)
		if n.Plan != nil {
			s.plans[n.Node] = *n.Plan
		}
	}
	s.planProblems, s.cacheRefused = out.Problems, out.CacheRefused
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
