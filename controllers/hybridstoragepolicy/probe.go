package hybridstoragepolicy

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// Ceph's answers about the nodes with held replacements come from probe pods in the
// CephCluster's namespace (docs/decisions/0047-asking-ceph-through-a-probe-pod.md): observe
// reads the finished ones into the decision's input, probeCeph starts and removes them.

// +kubebuilder:rbac:groups="",namespace=rook-ceph,resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=ceph.rook.io,namespace=rook-ceph,resources=cephclients,verbs=create;patch

// probeClientPoll is how soon a policy waiting for Rook to make the probe's key looks again:
// the operator does not watch CephClients (it may only create and patch them).
const probeClientPoll = 10 * time.Second

// probePods lists the policy's probe pods in the CephCluster's namespace (none without a
// CephCluster).
func (r *Reconciler) probePods(ctx context.Context, policy *prismv1.HybridStoragePolicy, cluster *unstructured.Unstructured) ([]*corev1.Pod, error) {
	if cluster == nil || !r.mayProbeIn(cluster.GetNamespace()) {
		return nil, nil
	}
	list := &corev1.PodList{}
	if err := r.Client.List(ctx, list, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{rook.LabelProbePolicy: rook.LabelValue(policy.Name)}); err != nil {
		return nil, fmt.Errorf("listing the policy's Ceph probes: %w", err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	return pods, nil
}

// probeCeph keeps one probe per node whose replacements the gate holds, fresh and asking about
// the drives held, and no other: a healthy cluster with nothing held runs no probe.
func (r *Reconciler) probeCeph(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.observed || !s.planned {
		return ctrl.Result{}, fmt.Errorf("internal error: probing Ceph without a complete observation")
	}
	cluster := s.obs.Cluster
	ch := rook.PlanProbes(s.probes, s.decision.Rook.Gate.Awaiting, s.obs.Now)
	var errs []error
	for _, p := range ch.Delete {
		if err := r.Client.Delete(ctx, p, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting Ceph probe %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	for node, a := range ch.Failed {
		r.event(s.policy, nil, eventWarning, EventCephProbeFailed, actionProbe, "asking Ceph about node %s: %s", node, a.Err)
	}
	if len(ch.Create) == 0 || cluster == nil {
		return ctrl.Result{}, kerrors.NewAggregate(errs)
	}
	if !r.mayProbeIn(cluster.GetNamespace()) {
		r.event(s.policy, nil, eventWarning, EventCephProbeFailed, actionProbe,
			"the operator may not ask Ceph in namespace %s, where CephCluster %s is: add it to the chart's operator.cephNamespaces (--ceph-namespaces %s)",
			cluster.GetNamespace(), cluster.GetName(), strings.Join(r.CephNamespaces, ","))
		return ctrl.Result{}, kerrors.NewAggregate(errs)
	}
	image, _, _ := unstructured.NestedString(cluster.Object, "spec", "cephVersion", "image")
	if image == "" {
		r.event(s.policy, nil, eventWarning, EventCephProbeFailed, actionProbe, "CephCluster %s/%s has no spec.cephVersion.image to ask Ceph with", cluster.GetNamespace(), cluster.GetName())
		return ctrl.Result{}, kerrors.NewAggregate(errs)
	}
	owner := *metav1.NewControllerRef(s.policy, prismv1.GroupVersion.WithKind("HybridStoragePolicy"))
	owner.Controller, owner.BlockOwnerDeletion = nil, nil
	cc := rook.ProbeCephClient(cluster.GetNamespace(), owner)
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(cc),
		client.FieldOwner(cephClusterManager(s.policy.Name)), client.ForceOwnership); err != nil {
		errs = append(errs, fmt.Errorf("applying CephClient %s/%s: %w", cluster.GetNamespace(), rook.ProbeClient, err))
		return ctrl.Result{}, kerrors.NewAggregate(errs)
	}
	// The apply's answer carries Rook's status: no probe before Rook has made the key it mounts.
	if ready, why, failed := rook.ProbeClientReady(cc); !ready {
		if failed {
			r.event(s.policy, nil, eventWarning, EventCephProbeFailed, actionProbe, "%s", why)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Not starting Ceph probes yet", "reason", why)
		return ctrl.Result{RequeueAfter: probeClientPoll}, kerrors.NewAggregate(errs)
	}
	hostnames := map[string]string{}
	for _, n := range s.obs.Nodes {
		hostnames[n.Name] = n.Labels[corev1.LabelHostname]
	}
	for _, ask := range ch.Create {
		pod := rook.ProbePod(rook.ProbeTarget{Policy: s.policy.Name, Owner: owner, Namespace: cluster.GetNamespace(), Image: image,
			Node: ask.Node, Hostname: hostnames[ask.Node], Devices: ask.Devices})
		if err := r.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating the Ceph probe of node %s: %w", ask.Node, err))
		}
	}
	return ctrl.Result{}, kerrors.NewAggregate(errs)
}
