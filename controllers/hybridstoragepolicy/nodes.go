package hybridstoragepolicy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/decide"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// observe reads everything the decision needs, before anything is decided: every Node and
// StorageNode (one list each, so a node is never seen twice in two states), the
// ClassificationPolicy the cache names, the CephCluster, the policy's local volumes and its
// finished Ceph probes (probe.go). Any
// failed read stops the reconcile here: no node is claimed or released and no Rook entry
// withdrawn on less than a complete observation.
func (r *Reconciler) observe(ctx context.Context, s *scope) (ctrl.Result, error) {
	obs := decide.Observation{Policy: s.policy, Now: r.now(), Volumes: map[string]*corev1.PersistentVolume{}, MaxCephClusterBytes: r.MaxCephClusterBytes, OperatorVersion: r.Version}
	nodes := &corev1.NodeList{}
	if err := r.Client.List(ctx, nodes); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing nodes: %w", err)
	}
	for _, n := range nodes.Items {
		obs.Nodes = append(obs.Nodes, decide.Node{Name: n.Name, Labels: n.Labels})
	}
	storageNodes := &prismv1.StorageNodeList{}
	if err := r.Client.List(ctx, storageNodes); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing storage nodes: %w", err)
	}
	for i := range storageNodes.Items {
		obs.StorageNodes = append(obs.StorageNodes, &storageNodes.Items[i])
	}
	var err error
	if obs.Classes, err = r.classificationPolicy(ctx, s.policy); err != nil {
		return ctrl.Result{}, err
	}
	if obs.Cluster, err = r.getCephCluster(ctx, s.policy); err != nil {
		return ctrl.Result{}, err
	}
	if obs.Ledger, err = r.ledger(ctx, s.policy.Name); err != nil {
		return ctrl.Result{}, err
	}
	if s.probes, err = r.probePods(ctx, s.policy, obs.Cluster); err != nil {
		return ctrl.Result{}, err
	}
	obs.Answers = rook.PlanProbes(s.probes, nil, obs.Now).Answers
	s.obs, s.observed = obs, true
	return ctrl.Result{}, nil
}
