package hybridstoragepolicy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/internal/plan/rook"
)

// OSDs on a cache become local volumes and storageClassDeviceSets (rook.Decide decides which,
// docs/decisions/0010-rook-osds-on-cas.md); this file observes what that decision reads.

// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch;create

// ledger lists the policy's volumes (its label) by device set.
func (r *Reconciler) ledger(ctx context.Context, policy string) (map[string]rook.LedgerSet, error) {
	list := &corev1.PersistentVolumeList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{rook.LabelPolicy: rook.LabelValue(policy)}); err != nil {
		return nil, fmt.Errorf("listing the policy's local volumes: %w", err)
	}
	return rook.Ledger(list.Items), nil
}

// lookupVolumes reads volumes by name into found (nil: absent): volumes outside the ledger,
// adopted from another policy or created before a crash lost nothing but the label.
func (r *Reconciler) lookupVolumes(ctx context.Context, found map[string]*corev1.PersistentVolume, names []string) error {
	for _, name := range names {
		v := &corev1.PersistentVolume{}
		// From the API server: a volume of this name without Prism's label is not in the cache.
		if err := r.apiReader().Get(ctx, client.ObjectKey{Name: name}, v); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("reading volume %s: %w", name, err)
			}
			v = nil
		}
		found[name] = v
	}
	return nil
}
