package classificationpolicy

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// SetupWithManager watches policies (spec changes) and StorageNodes: a node's plan names its
// policy, and its agent's cache statistics are the advisor's input. Updates map both the old
// and the new object, so a node moving between policies requeues both.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&prismv1.ClassificationPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&prismv1.StorageNode{}, handler.EnqueueRequestsFromMapFunc(policyOfObject)).
		Named("classificationpolicy").
		Complete(r)
}

// policyOfObject maps a StorageNode to the policy its cache plan names.
func policyOfObject(_ context.Context, o client.Object) []reconcile.Request {
	sn, ok := o.(*prismv1.StorageNode)
	if !ok {
		return nil
	}
	name := policyOf(sn)
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
}
