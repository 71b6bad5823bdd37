package hybridstoragepolicy

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/internal/plan/rook"
)

// CacheOptions keeps the manager's informer on PersistentVolumes to Prism's own local volumes
// (those labelled with a policy): a cluster can hold thousands of other volumes, which the
// operator never reads. Reads of any other volume go to the API server (Reconciler.APIReader).
// Likewise for Pods: the operator reads only its Ceph probes (probe.go), in cephNamespaces
// when any are given.
func CacheOptions(cephNamespaces []string) cache.Options {
	ours, err := labels.NewRequirement(rook.LabelPolicy, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant label key
	}
	probes, err := labels.NewRequirement(rook.LabelProbePolicy, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	pods := cache.ByObject{Label: labels.NewSelector().Add(*probes)}
	if len(cephNamespaces) > 0 {
		// Its RBAC lets it list pods there only (operator.cephNamespaces).
		pods.Namespaces = map[string]cache.Config{}
		for _, ns := range cephNamespaces {
			pods.Namespaces[ns] = cache.Config{}
		}
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.PersistentVolume{}: {Label: labels.NewSelector().Add(*ours)},
		&corev1.Pod{}:              pods,
	}}
}
