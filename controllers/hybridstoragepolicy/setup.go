package hybridstoragepolicy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// SetupWithManager watches policies, StorageNodes (inventories change selections), Node
// labels (they change which nodes a selector matches), ClassificationPolicies (their
// classes go into the cache plans) and Prism's local volumes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	allPolicies := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&prismv1.HybridStoragePolicy{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&prismv1.StorageNode{}, allPolicies).
		Watches(&corev1.Node{}, allPolicies, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// A ClassificationPolicy's classes are compiled into every node's cache plan.
		Watches(&prismv1.ClassificationPolicy{}, allPolicies, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, compiledHashChanged()))).
		// Prism's local volumes (the only ones cached, see CacheOptions): a claim binding one
		// means an OSD may exist, which keeps its device set.
		Watches(&corev1.PersistentVolume{}, allPolicies)
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

// allPolicies maps any StorageNode or Node change to every policy: there are few policies,
// and any of them may start or stop matching the node.
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
