// Package classificationpolicy reconciles ClassificationPolicies: it compiles the classes to
// the Open CAS IO class file, reports which nodes run them, and runs the PRISM advisor over
// the nodes' per-class cache statistics.
package classificationpolicy

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/advisor"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/plan/decide"
)

// DefaultWindow is the advisor's default window: long enough for a class's rewrites to show.
const DefaultWindow = 10 * time.Minute

// Reconciler reconciles a ClassificationPolicy.
type Reconciler struct {
	Client client.Client
	// Window is the advisor's window (DefaultWindow when zero).
	Window time.Duration
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
	// Params are the advisor's thresholds (advisor.Defaults() when nil).
	Params *advisor.Params

	// Namespace keeps each policy's open window in a ConfigMap (persist.go), read with
	// APIReader, so that a new leader resumes it; "" keeps it in memory only (then a restart
	// waits one window, docs/decisions/0008-advisor.md).
	Namespace string
	APIReader client.Reader

	mu sync.Mutex
	// memory holds each policy's observations and last advice between reconciles.
	memory map[string]*memory
}

// memory is one policy's observations and the advice made from its last window.
type memory struct {
	tracker advisor.Tracker
	// advice was made from window for generation: it is made again only when either changes,
	// so the recommendations (and under Automatic the nodes' file) stay put between windows.
	advice     *advisor.Result
	window     *advisor.Window
	generation int64
	// kept is the start of the window last written to the ConfigMap.
	kept time.Time
}

// scope carries what the phases read and decide during one reconcile.
type scope struct {
	policy     *prismv1.ClassificationPolicy
	now        time.Time
	compiled   ioclass.Config
	compileErr error
	// nodes are the StorageNodes whose cache plan names the policy, by name; listed says
	// the list succeeded (an empty list must not look like every node gone).
	nodes  []prismv1.StorageNode
	listed bool
	// observing is the open window: since when, how many caches.
	since     time.Time
	observing int
	window    *advisor.Window
	advice    *advisor.Result
}

type phase func(ctx context.Context, s *scope) error

// +kubebuilder:rbac:groups=prism.storage.io,resources=classificationpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=prism.storage.io,resources=classificationpolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=prism.storage.io,resources=storagenodes,verbs=get;list;watch

// Reconcile compiles one policy, counts the nodes that load it, advises, and writes the status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	policy := &prismv1.ClassificationPolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, policy); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := policy.DeepCopy()
	s := &scope{policy: policy, now: r.now()}
	var errs []error
	for _, p := range []phase{r.compile, r.findNodes, r.observe, r.advise} {
		if err := p(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	policy.Status = computeStatus(s, r.window(), errs)
	if !equality.Semantic.DeepEqual(before.Status, policy.Status) {
		if err := r.Client.Status().Patch(ctx, policy, client.MergeFrom(before), client.FieldOwner(decide.FieldManager)); err != nil {
			errs = append(errs, fmt.Errorf("patching status: %w", err))
		}
	}
	return ctrl.Result{}, kerrors.NewAggregate(errs)
}

// compile checks the classes as written; a policy that does not compile is the user's
// error, reported in the Compiled condition, not a reconcile failure.
func (r *Reconciler) compile(_ context.Context, s *scope) error {
	s.compiled, s.compileErr = ioclass.Compile(&s.policy.Spec)
	return nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) window() time.Duration {
	if r.Window > 0 {
		return r.Window
	}
	return DefaultWindow
}

func (r *Reconciler) params() advisor.Params {
	if r.Params != nil {
		return *r.Params
	}
	return advisor.Defaults()
}
