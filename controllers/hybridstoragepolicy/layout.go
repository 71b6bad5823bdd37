package hybridstoragepolicy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/decide"
)

// decidePolicy is the reconcile's one call into the planner (decide.Policy, the function
// `kubectl prism plan` runs): from what observe read to the selections and plans, the claims,
// the releases and the Rook decision. Volumes outside the policy's ledger (adopted, or created
// before a crash lost their label) are read and the policy decided again, once; the second
// decision asks for nothing more.
func (r *Reconciler) decidePolicy(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.observed {
		return ctrl.Result{}, fmt.Errorf("internal error: deciding without a complete observation")
	}
	d := decide.Policy(s.obs)
	if d.InvalidSelector != "" {
		// The user's error: stop without retrying (a spec change brings the policy back).
		s.invalidSelector = d.InvalidSelector
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("%s", d.InvalidSelector))
	}
	if d.RookErr == nil && len(d.Rook.Lookup) > 0 {
		if err := r.lookupVolumes(ctx, s.obs.Volumes, d.Rook.Lookup); err != nil {
			return ctrl.Result{}, err
		}
		d = decide.Policy(s.obs)
		if d.RookErr == nil && len(d.Rook.Lookup) > 0 {
			d.RookErr = fmt.Errorf("internal error: volumes %v still unknown after looking them up", d.Rook.Lookup)
		}
	}
	s.decision, s.planned = d, true
	for _, n := range d.Plan.Nodes {
		s.selections = append(s.selections, n.Selection)
	}
	s.planProblems, s.cacheRefused = d.Plan.Problems, d.Plan.CacheRefused
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
