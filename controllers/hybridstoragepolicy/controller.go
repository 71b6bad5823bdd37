// Package hybridstoragepolicy reconciles HybridStoragePolicies: it observes the Nodes, the
// StorageNodes and the CephCluster, decides with internal/plan/decide, applies, and reports.
package hybridstoragepolicy

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/decide"
)

// Finalizer lets the controller release its node claims before a policy goes away.
const Finalizer = "prism.storage.io/release-nodes"

// FieldManager names Prism's operator in managed fields.
const FieldManager = decide.FieldManager

// Reconciler reconciles a HybridStoragePolicy.
type Reconciler struct {
	Client client.Client
	// APIReader reads objects the manager's cache leaves out (CacheOptions); Client when nil.
	APIReader client.Reader
	// Recorder publishes the Events an admin must notice (events.go); none when nil.
	Recorder events.EventRecorder
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time
	// MaxCephClusterBytes is the largest CephCluster the cluster's etcd stores (0: etcd's
	// default): Prism withholds an apply that would exceed it (rook.SizeLimit).
	MaxCephClusterBytes int64
	// Version is the operator's release version; agents outside its skew get no new plan
	// (decide.AgentSkew). "" checks none.
	Version string
	// CephNamespaces are the namespaces the operator may run Ceph probes in (its RBAC and
	// CacheOptions); empty: every namespace.
	CephNamespaces []string
}

// mayProbeIn reports whether the operator may run Ceph probes in namespace ns.
func (r *Reconciler) mayProbeIn(ns string) bool {
	return len(r.CephNamespaces) == 0 || slices.Contains(r.CephNamespaces, ns)
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
	policy *prismv1.HybridStoragePolicy
	// observed: observe read everything the decision needs without error. Nothing is
	// claimed, released or withdrawn from Rook on anything less.
	observed bool
	obs      decide.Observation
	// probes are the policy's Ceph probe pods, as observed.
	probes []*corev1.Pod
	// invalidSelector is why spec.nodeSelector cannot be used (naming the field); "" when valid.
	invalidSelector string
	// planned: decidePolicy ran to its end; decision is what it decided.
	planned  bool
	decision decide.Decision
	// selections, planProblems and cacheRefused are the decision's, for the status.
	selections   []prismv1.NodeSelection
	planProblems []string
	cacheRefused string
	// released are the nodes this reconcile let go, each with the reason.
	released []release
	// rook is what happened to the CephCluster.
	rook rookOutcome
	// requeueAfter asks to look again for state no watch reports (Ceph's health); 0: no need.
	requeueAfter time.Duration
}

// phase is one step of a reconcile. The reconcile stops at the first phase that fails: the
// later ones (claims, releases, Rook) act only on a complete observation.
type phase func(ctx context.Context, s *scope) (ctrl.Result, error)

// +kubebuilder:rbac:groups=prism.storage.io,resources=hybridstoragepolicies,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=prism.storage.io,resources=hybridstoragepolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=prism.storage.io,resources=hybridstoragepolicies/finalizers,verbs=update
// +kubebuilder:rbac:groups=prism.storage.io,resources=storagenodes,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=prism.storage.io,resources=classificationpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=ceph.rook.io,resources=cephclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile selects nodes and devices for one policy, claims and plans them, configures
// Rook, and writes the status once, whatever happened.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	policy := &prismv1.HybridStoragePolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, policy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !policy.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, policy)
	}
	// Carry on after adding the finalizer: the update event is filtered out (no generation
	// change). A patch of metadata.finalizers alone, checked against the resourceVersion read:
	// never a full Update that would write a stale spec back.
	if orig := policy.DeepCopy(); controllerutil.AddFinalizer(policy, Finalizer) {
		if err := r.Client.Patch(ctx, policy, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, err
		}
	}

	before := policy.DeepCopy()
	s := &scope{policy: policy}
	res, err := runPhases(ctx, s, r.observe, r.decidePolicy, r.claimNodes, r.releaseNodes, r.applyRook, r.probeCeph)
	policy.Status = computeStatus(policy, statusInputOf(s, err))
	r.recordTransitions(before, policy, s)
	if !equality.Semantic.DeepEqual(before.Status, policy.Status) {
		if perr := r.Client.Status().Patch(ctx, policy, client.MergeFrom(before), client.FieldOwner(FieldManager)); perr != nil {
			err = kerrors.NewAggregate([]error{err, fmt.Errorf("patching status: %w", perr)})
		}
	}
	return res, err
}

// runPhases runs the phases in order and stops at the first error; the results of the phases
// that ran are merged (the shortest requeue wins).
func runPhases(ctx context.Context, s *scope, phases ...phase) (ctrl.Result, error) {
	var res ctrl.Result
	for _, p := range phases {
		r, err := p(ctx, s)
		res = lowestResult(res, r)
		if err != nil {
			return res, err
		}
	}
	if s.requeueAfter > 0 {
		res = lowestResult(res, ctrl.Result{RequeueAfter: s.requeueAfter})
	}
	return res, nil
}

func lowestResult(a, b ctrl.Result) ctrl.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0 || a.RequeueAfter < b.RequeueAfter:
		return a
	default:
		return b
	}
}

// reconcileDelete removes Prism's entries from the CephCluster and releases every node this
// policy claimed, then drops the finalizer. It never touches a device: the OSDs Rook created
// keep running until an admin removes them (docs/runbooks).
func (r *Reconciler) reconcileDelete(ctx context.Context, policy *prismv1.HybridStoragePolicy) error {
	if err := r.removeRookEntries(ctx, policy); err != nil {
		return err
	}
	if err := r.releaseAll(ctx, policy); err != nil {
		return err
	}
	if orig := policy.DeepCopy(); controllerutil.RemoveFinalizer(policy, Finalizer) {
		return r.Client.Patch(ctx, policy, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	}
	return nil
}
