package hybridstoragepolicy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rookdecide"
)

// CephClusterGVK is Rook's CephCluster.
var CephClusterGVK = rookdecide.CephClusterGVK

// Reasons of the RookConfigured condition (decided by rookdecide.Decide).
const (
	ReasonRookApplied            = rookdecide.ReasonApplied
	ReasonRookDryRun             = rookdecide.ReasonDryRun
	ReasonRookPlanRefused        = rookdecide.ReasonPlanRefused
	ReasonCephClusterNotFound    = rookdecide.ReasonCephClusterNotFound
	ReasonCephClusterAllNodes    = rookdecide.ReasonCephClusterAllNodes
	ReasonWaitingForPartitions   = rookdecide.ReasonWaitingForPartitions
	ReasonRookNothingToConfigure = rookdecide.ReasonNothingToConfigure
	ReasonReplacingOSDs          = rookdecide.ReasonReplacingOSDs
	ReasonWaitingForCacheCores   = rookdecide.ReasonWaitingForCacheCores
)

// rookOutcome is what applyRook did, for the status.
type rookOutcome struct {
	reason  string
	message string
	ok      bool
}

// cephClusterManager is the field manager of one policy's applies to its CephCluster. Each
// policy applies under its own name, so that server-side apply removes, of what a policy
// applied before, only what that policy no longer applies: under one name for all, a policy's
// apply dropped the other policies' annotations (nodes.prism.storage.io/<policy>), which say
// which storage.nodes entries are theirs.
func cephClusterManager(policy string) string { return FieldManager + "/" + policy }

// applyRook hands the provisioned nodes to Rook: observe (the CephCluster, the nodes'
// readiness, the policy's volumes) → rookdecide.Decide → apply (volumes, then the CephCluster
// with server-side apply under the policy's field manager, then obsolete volumes). A node's
// entries appear only once its agent reports every slot partition Ready, so Rook never looks
// for a partition that does not exist yet.
func (r *Reconciler) applyRook(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.observed || !s.planned {
		return ctrl.Result{}, fmt.Errorf("internal error: configuring Rook without a complete observation")
	}
	in, err := r.observeRook(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	d, err := rookdecide.Decide(in)
	if err == nil && len(d.Lookup) > 0 {
		// Volumes outside the policy's ledger (adopted, or new): read them and decide again,
		// once; the second decision asks for nothing more.
		if err := r.lookupVolumes(ctx, in.Volumes, d.Lookup); err != nil {
			return ctrl.Result{}, err
		}
		d, err = rookdecide.Decide(in)
		if err == nil && len(d.Lookup) > 0 {
			err = fmt.Errorf("internal error: volumes %v still unknown after looking them up", d.Lookup)
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	// A decision that stops early (dry run, no CephCluster, ...) has nothing to apply.
	if err := r.applyDecision(ctx, s.policy, d); err != nil {
		return ctrl.Result{}, err
	}
	s.rook = rookOutcome{reason: d.Outcome.Reason, message: d.Outcome.Message, ok: d.Outcome.OK}
	s.requeueAfter = max(s.requeueAfter, d.Outcome.RequeueAfter)
	return ctrl.Result{}, nil
}

// observeRook reads what the decision needs. Nothing of the CephCluster's is read in dry run or
// while a plan is refused: nothing is applied then.
func (r *Reconciler) observeRook(ctx context.Context, s *scope) (rookdecide.Input, error) {
	ref := s.policy.Spec.CephCluster
	in := rookdecide.Input{
		Policy: s.policy.Name, Manager: cephClusterManager(s.policy.Name),
		DryRun: s.policy.Spec.Mode == prismv1.ModeDryRun, PlanRefused: len(s.planProblems) > 0,
		DeviceClass: deviceClass(s.policy), SetMinAllocSize: s.policy.Spec.OSD.MinAllocSize != prismv1.MinAllocSizeDefault,
		ClusterRef: ref.Namespace + "/" + ref.Name, Selections: s.selections, Released: map[string]string{},
		Volumes: map[string]*corev1.PersistentVolume{}, Now: r.now(),
	}
	if in.DryRun || in.PlanRefused {
		return in, nil
	}
	for _, rel := range s.released {
		in.Released[rel.node] = rel.reason
	}
	var err error
	if in.Cluster, err = r.getCephCluster(ctx, s.policy); err != nil || in.Cluster == nil {
		return in, err
	}
	for _, c := range s.candidates {
		p, ok := s.plans[c.node]
		if !ok || c.storage == nil {
			continue
		}
		n := rookdecide.Node{Name: c.node, Plan: p, Ready: provisioned(c.storage, p), Status: c.storage.Status}
		if n.Ready {
			if n.Hostname, err = r.hostname(ctx, c.node); err != nil {
				return in, err
			}
		}
		in.Nodes = append(in.Nodes, n)
	}
	in.Ledger, err = r.ledger(ctx, s.policy.Name)
	return in, err
}

// provisioned says whether the node's agent reports every partition of plan p Ready: the
// StorageNode carries exactly p and its status is about the current generation.
func provisioned(sn *prismv1.StorageNode, p prismv1.NodePlan) bool {
	cond := meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionProvisioned)
	current := sn.Spec.Plan != nil && equality.Semantic.DeepEqual(*sn.Spec.Plan, p) &&
		sn.Status.ObservedPlanGeneration == sn.Generation
	return current && cond != nil && cond.Status == "True"
}

// applyDecision carries out a decision: volumes first (so that Rook's claims find them), the
// CephCluster when it changes, then the volumes no set wants any more.
func (r *Reconciler) applyDecision(ctx context.Context, policy *prismv1.HybridStoragePolicy, d rookdecide.Decision) error {
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
// device sets and volumes that no claim holds (rookdecide.DecideRemoval).
func (r *Reconciler) removeRookEntries(ctx context.Context, policy *prismv1.HybridStoragePolicy) error {
	ledger, err := r.ledger(ctx, policy.Name)
	if err != nil {
		return err
	}
	cluster, err := r.getCephCluster(ctx, policy)
	if err != nil {
		return err
	}
	d, err := rookdecide.DecideRemoval(policy.Name, cephClusterManager(policy.Name), cluster, ledger)
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

func deviceClass(p *prismv1.HybridStoragePolicy) string {
	if p.Spec.OSD.DeviceClass == "" {
		return "qlc"
	}
	return p.Spec.OSD.DeviceClass
}
