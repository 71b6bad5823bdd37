package hybridstoragepolicy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/internal/plan/rook"
)

// applyVolumes creates or fixes the local volumes (server-side apply under Prism's field
// manager), after making sure their StorageClass exists. It runs before the CephCluster
// apply, so Rook's claims find their volumes.
func (r *Reconciler) applyVolumes(ctx context.Context, volumes []*corev1.PersistentVolume) error {
	if len(volumes) == 0 {
		return nil
	}
	if err := r.ensureStorageClass(ctx); err != nil {
		return err
	}
	var errs []error
	for _, v := range volumes {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: obj}
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			errs = append(errs, fmt.Errorf("applying volume %s: %w", v.Name, err))
		}
	}
	return kerrors.NewAggregate(errs)
}

// deleteVolumes deletes volumes no set wants any more, each only if it is still the very
// object Prism saw unclaimed: the preconditions make the delete fail if a claim bound it since.
func (r *Reconciler) deleteVolumes(ctx context.Context, volumes []corev1.PersistentVolume) error {
	var errs []error
	for i := range volumes {
		v := &volumes[i]
		if v.Spec.ClaimRef != nil || !v.DeletionTimestamp.IsZero() {
			continue
		}
		uid, rv := v.UID, v.ResourceVersion
		err := r.Client.Delete(ctx, v, client.Preconditions{UID: &uid, ResourceVersion: &rv})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting volume %s: %w", v.Name, err))
		}
	}
	return kerrors.NewAggregate(errs)
}

// ensureStorageClass creates Prism's local StorageClass when it is missing and refuses one of
// that name that would not bind local volumes the way Rook's claims need.
func (r *Reconciler) ensureStorageClass(ctx context.Context) error {
	want := rook.LocalStorageClassObject()
	have := &storagev1.StorageClass{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: want.Name}, have)
	if apierrors.IsNotFound(err) {
		if err := r.Client.Create(ctx, want, client.FieldOwner(FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating StorageClass %s: %w", want.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading StorageClass %s: %w", want.Name, err)
	}
	if have.Provisioner != want.Provisioner || have.VolumeBindingMode == nil || *have.VolumeBindingMode != *want.VolumeBindingMode {
		return fmt.Errorf("StorageClass %s exists with provisioner %q and another binding mode than %s: Prism's local volumes need %s with WaitForFirstConsumer",
			want.Name, have.Provisioner, *want.VolumeBindingMode, want.Provisioner)
	}
	return nil
}
