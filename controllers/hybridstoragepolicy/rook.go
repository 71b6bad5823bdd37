package hybridstoragepolicy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/decide"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// CephClusterGVK is Rook's CephCluster.
var CephClusterGVK = rook.CephClusterGVK

// Reasons of the RookConfigured condition (decided by rook.Decide).
const (
	ReasonRookApplied            = rook.ReasonApplied
	ReasonRookDryRun             = rook.ReasonDryRun
	ReasonRookPlanRefused        = rook.ReasonPlanRefused
	ReasonCephClusterNotFound    = rook.ReasonCephClusterNotFound
	ReasonCephClusterAllNodes    = rook.ReasonCephClusterAllNodes
	ReasonWaitingForPartitions   = rook.ReasonWaitingForPartitions
	ReasonRookNothingToConfigure = rook.ReasonNothingToConfigure
	ReasonReplacingOSDs          = rook.ReasonReplacingOSDs
	ReasonNewOSDsHeld            = rook.ReasonNewOSDsHeld
	ReasonWaitingForCacheCores   = rook.ReasonWaitingForCacheCores
	ReasonCephLosesPartitionDB   = rook.ReasonCephLosesPartitionDB
	ReasonCephClusterTooLarge    = rook.ReasonCephClusterTooLarge
)

// rookOutcome is what applyRook did, for the status.
type rookOutcome struct {
	reason  string
	message string
	ok      bool
}

func cephClusterManager(policy string) string { return decide.CephClusterManager(policy) }

// applyRook hands the provisioned nodes to Rook as the decision says: volumes, then the
// CephCluster with server-side apply under the policy's field manager, then obsolete volumes.
// A node's entries appear only once its agent reports every slot partition Ready, so Rook
// never looks for a partition that does not exist yet.
func (r *Reconciler) applyRook(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.observed || !s.planned {
		return ctrl.Result{}, fmt.Errorf("internal error: configuring Rook without a complete observation")
	}
	if s.decision.RookErr != nil {
		return ctrl.Result{}, s.decision.RookErr
	}
	d := s.decision.Rook
	// A decision that stops early (dry run, no CephCluster, ...) has nothing to apply.
	if err := r.applyDecision(ctx, s.policy, d); err != nil {
		return ctrl.Result{}, err
	}
	s.rook = rookOutcome{reason: d.Outcome.Reason, message: d.Outcome.Message, ok: d.Outcome.OK}
	s.requeueAfter = max(s.requeueAfter, d.Outcome.RequeueAfter)
	return ctrl.Result{}, nil
}

// applyDecision carries out a decision: volumes first (so that Rook's claims find them), the
// CephCluster when it changes, then the volumes no set wants any more.
func (r *Reconciler) applyDecision(ctx context.Context, policy *prismv1.HybridStoragePolicy, d rook.Decision) error {
	if err := r.applyVolumes(ctx, d.ApplyVolumes); err != nil {
		return err
	}
	if d.Changed {
		if err := r.applyCephCluster(ctx, policy, d.Object); err != nil {
			return err
		}
	}
	if err := r.deleteVolumes(ctx, d.DeleteVolumes); err != nil {
		return err
	}
	if d.Changed {
		r.event(policy, nil, eventNormal, EventOSDEntriesApplied, actionApplyRook, "%s", d.Event)
	}
	return nil
}

func (r *Reconciler) applyCephCluster(ctx context.Context, policy *prismv1.HybridStoragePolicy, apply *unstructured.Unstructured) error {
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(cephClusterManager(policy.Name)), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying CephCluster %s/%s: %w", apply.GetNamespace(), apply.GetName(), err)
	}
	return nil
}

// removeRookEntries drops this policy's entries and annotation from the CephCluster, and its
// device sets and volumes that no claim holds (rook.DecideRemoval).
func (r *Reconciler) removeRookEntries(ctx context.Context, policy *prismv1.HybridStoragePolicy) error {
	ledger, err := r.ledger(ctx, policy.Name)
	if err != nil {
		return err
	}
	cluster, err := r.getCephCluster(ctx, policy)
	if err != nil {
		return err
	}
	d, err := rook.DecideRemoval(policy.Name, cephClusterManager(policy.Name), cluster, ledger)
	if err != nil {
		return err
	}
	if d.Object != nil {
		if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(d.Object), client.FieldOwner(cephClusterManager(policy.Name)), client.ForceOwnership); err != nil {
			return err
		}
	}
	return r.deleteVolumes(ctx, d.DeleteVolumes)
}

func (r *Reconciler) getCephCluster(ctx context.Context, policy *prismv1.HybridStoragePolicy) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(CephClusterGVK)
	ref := policy.Spec.CephCluster
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("getting CephCluster %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return u, nil
}
