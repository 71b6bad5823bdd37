package hybridstoragepolicy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// SetupWithManager watches policies, StorageNodes (inventories change selections), Node
// labels (they change which nodes a selector matches), ClassificationPolicies (their
// classes go into the cache plans), Prism's local volumes and its Ceph probe pods.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	allPolicies := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&prismv1.HybridStoragePolicy{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&prismv1.StorageNode{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.enqueue(ctx, q, e.Object)
			},
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
			},
			DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.enqueue(ctx, q, e.Object)
			},
			GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.enqueue(ctx, q, e.Object)
			},
		}).
		Watches(&corev1.Node{}, allPolicies, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// A ClassificationPolicy's classes are compiled into every node's cache plan.
		Watches(&prismv1.ClassificationPolicy{}, allPolicies, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, compiledHashChanged()))).
		// Prism's local volumes (the only ones cached, see CacheOptions): a claim binding one
		// means an OSD may exist, which keeps its device set.
		Watches(&corev1.PersistentVolume{}, allPolicies).
		// Prism's Ceph probes (the only pods cached): a finished probe brings Ceph's answers.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.probeOwner))
	// Watch the CephClusters when Rook is installed: someone editing spec.storage must see
	// Prism's entries restored; Rook's frequent status updates do not change the generation.
	if _, err := mgr.GetRESTMapper().RESTMapping(CephClusterGVK.GroupKind(), CephClusterGVK.Version); err == nil {
		cluster := &unstructured.Unstructured{}
		cluster.SetGroupVersionKind(CephClusterGVK)
		b = b.Watches(cluster, allPolicies, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})))
	} else {
		mgr.GetLogger().Info("Rook's CephCluster kind is not installed; not watching it", "reason", err.Error())
	}
	return b.Named("hybridstoragepolicy").Complete(r)
}

// enqueue adds the policies a StorageNode event concerns (claimants, for each version of it).
func (r *Reconciler) enqueue(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
	seen := map[string]bool{}
	for _, o := range objs {
		for _, req := range r.claimants(ctx, o) {
			if !seen[req.Name] {
				seen[req.Name] = true
				q.Add(req)
			}
		}
	}
}

// claimants maps a StorageNode to the policy that claims it: its inventory and status matter to
// that policy alone. A node no policy claims may be claimed by any of them, so it maps to all.
// (An update that changes the claim is mapped from both its old and new versions, so a
// released node reaches every policy.)
func (r *Reconciler) claimants(ctx context.Context, o client.Object) []reconcile.Request {
	if sn, ok := o.(*prismv1.StorageNode); ok && sn.Spec.PolicyName != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: sn.Spec.PolicyName}}}
	}
	return r.allPolicies(ctx, o)
}

// allPolicies maps a Node label change, a ClassificationPolicy, a volume or a CephCluster change
// to every policy: there are few policies, and any of them may be concerned.
func (r *Reconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &prismv1.HybridStoragePolicyList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing policies to requeue")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, p := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}})
	}
	return reqs
}

// compiledHashChanged passes ClassificationPolicy updates whose status.compiledHash changed:
// with spec.advisor.apply Automatic the file nodes load changes without a new generation.
func compiledHashChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*prismv1.ClassificationPolicy)
		n, ok2 := e.ObjectNew.(*prismv1.ClassificationPolicy)
		return ok1 && ok2 && o.Status.CompiledHash != n.Status.CompiledHash
	}}
}

// probeOwner maps a Ceph probe pod to the policy that started it (its label holds
// rook.LabelValue of the policy's name).
func (r *Reconciler) probeOwner(ctx context.Context, o client.Object) []reconcile.Request {
	label, ok := o.GetLabels()[rook.LabelProbePolicy]
	if !ok {
		return nil
	}
	var out []reconcile.Request
	for _, req := range r.allPolicies(ctx, o) {
		if rook.LabelValue(req.Name) == label {
			out = append(out, req)
		}
	}
	return out
}
