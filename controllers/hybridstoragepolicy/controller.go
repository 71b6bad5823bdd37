// Package hybridstoragepolicy reconciles HybridStoragePolicies: it selects nodes and their
// devices from the StorageNode inventories, claims the nodes, and reports the selection.
package hybridstoragepolicy

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Finalizer lets the controller release its node claims before a policy goes away.
const Finalizer = "prism.storage.io/release-nodes"

// FieldManager names Prism's operator in managed fields.
const FieldManager = "prism-operator"

// Reconciler reconciles a HybridStoragePolicy.
type Reconciler struct {
	Client client.Client
	// APIReader reads objects the manager's cache leaves out (CacheOptions); Client when nil.
	APIReader client.Reader
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time
}

func (r *Reconciler) apiReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// scope carries what the phases read and decide during one reconcile.
type scope struct {
	policy     *prismv1.HybridStoragePolicy
	candidates []candidate // nodes matching the selector, sorted by name
	selections []prismv1.NodeSelection
	// plans are the layouts of the nodes with both tiers, by node name.
	plans map[string]prismv1.NodePlan
	// planProblems block writing any plan or Rook entry.
	planProblems []string
	// rook is what happened to the CephCluster.
	rook rookOutcome
	// requeueAfter asks to look again for state no watch reports (Ceph's health); 0: no need.
	requeueAfter time.Duration
}

type phase func(ctx context.Context, s *scope) error

// +kubebuilder:rbac:groups=prism.storage.io,resources=hybridstoragepolicies,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=prism.storage.io,resources=hybridstoragepolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=prism.storage.io,resources=hybridstoragepolicies/finalizers,verbs=update
// +kubebuilder:rbac:groups=prism.storage.io,resources=storagenodes,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=prism.storage.io,resources=classificationpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=ceph.rook.io,resources=cephclusters,verbs=get;list;watch;patch

// Reconcile selects nodes and devices for one policy and reports them in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	policy := &prismv1.HybridStoragePolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, policy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !policy.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, policy)
	}
	// Carry on after adding the finalizer: the update event is filtered out (no generation change).
	if controllerutil.AddFinalizer(policy, Finalizer) {
		if err := r.Client.Update(ctx, policy); err != nil {
			return ctrl.Result{}, err
		}
	}

	before := policy.DeepCopy()
	s := &scope{policy: policy}
	var errs []error
	for _, p := range []phase{r.findCandidates, r.selectDevices, r.planLayouts, r.writeSpecs, r.applyRook} {
		if err := p(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	policy.Status = computeStatus(policy, s.selections, s.planProblems, s.rook, errs)
	if !equality.Semantic.DeepEqual(before.Status, policy.Status) {
		if err := r.Client.Status().Patch(ctx, policy, client.MergeFrom(before), client.FieldOwner(FieldManager)); err != nil {
			errs = append(errs, fmt.Errorf("patching status: %w", err))
		}
	}
	return ctrl.Result{RequeueAfter: s.requeueAfter}, kerrors.NewAggregate(errs)
}

// reconcileDelete removes Prism's entries from the CephCluster and releases every node this
// policy claimed, then drops the finalizer. It never touches a device: the OSDs Rook created
// keep running until an admin removes them (docs/runbooks).
func (r *Reconciler) reconcileDelete(ctx context.Context, policy *prismv1.HybridStoragePolicy) error {
	if err := r.removeRookEntries(ctx, policy); err != nil {
		return err
	}
	if err := r.releaseNodes(ctx, policy.Name, nil); err != nil {
		return err
	}
	if controllerutil.RemoveFinalizer(policy, Finalizer) {
		return r.Client.Update(ctx, policy)
	}
	return nil
}
