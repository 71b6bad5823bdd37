package rook

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The Kubernetes objects of Prism's PVC-based Rook OSDs (docs/decisions/0010-rook-osds-on-cas.md):
// the local StorageClass, the two static local block volumes of each OSD and its
// storageClassDeviceSet, built from the claims of claims.go.

// hostnameLabel is the node label local volumes are pinned with.
const hostnameLabel = "kubernetes.io/hostname"

// LocalStorageClassObject is the StorageClass Prism creates when it first needs it.
func LocalStorageClassObject() *storagev1.StorageClass {
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	reclaim := corev1.PersistentVolumeReclaimRetain
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: LocalStorageClass, Labels: map[string]string{"app.kubernetes.io/managed-by": "prism"}},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &wait,
		ReclaimPolicy:     &reclaim,
	}
}

// LocalVolumes are the two static local block volumes of one OSD: its data path (the
// exported object, or the capacity device) and its DB slot partition (metadata), both pinned
// to the node by hostname and kept (Retain) when their claims go, since they hold its data.
func LocalVolumes(o ClaimOSD, hostname, policy string) (data, metadata *corev1.PersistentVolume) {
	set := DeviceSetName(o.Node, o.DataDevice)
	return localVolume(o, set, RoleData, o.DataPath, o.DataDevice, o.DataSizeBytes, hostname, policy),
		localVolume(o, set, RoleMetadata, o.Slot, o.Slot, o.SlotSizeBytes, hostname, policy)
}

func localVolume(o ClaimOSD, set, role, path, device string, size int64, hostname, policy string) *corev1.PersistentVolume {
	block := corev1.PersistentVolumeBlock
	name := VolumeName(set, role)
	return &corev1.PersistentVolume{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				LabelPolicy: LabelValue(policy), LabelNode: LabelValue(o.Node),
				LabelDeviceSet: set, LabelRole: role, LabelVolume: name,
			},
			Annotations: map[string]string{AnnotationNode: o.Node, AnnotationDevice: device},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(size, resource.BinarySI)},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              LocalStorageClass,
			VolumeMode:                    &block,
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{hostname}}},
			}}}},
		},
	}
}

// RookDeviceSet is one entry of CephCluster spec.storage.storageClassDeviceSets, with only
// the fields Prism sets. Rook creates one data and one metadata claim per count from the
// templates, verbatim (rook v1.20.4 pkg/operator/ceph/cluster/osd/deviceSet.go), so a set of
// count 1 whose templates select one volume each pairs a capacity device with its own DB slot.
type RookDeviceSet struct {
	Name string `json:"name"`
	// Count is 1: one OSD, on one capacity device.
	Count int64 `json:"count"`
	// Portable is false: the OSD stays on the node of its local volumes.
	Portable             bool                `json:"portable"`
	VolumeClaimTemplates []RookClaimTemplate `json:"volumeClaimTemplates"`
}

// RookClaimTemplate is Rook's VolumeClaimTemplate: a claim's metadata and spec.
type RookClaimTemplate struct {
	Metadata RookClaimMetadata                `json:"metadata"`
	Spec     corev1.PersistentVolumeClaimSpec `json:"spec"`
}

// RookClaimMetadata names the template (data or metadata) and carries Rook's annotations.
type RookClaimMetadata struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// DeviceSet is the storageClassDeviceSet of one OSD. Placement is left to the
// volumes: with WaitForFirstConsumer the scheduler puts the prepare pod where the selected
// volumes are, and Rook pins a non-portable OSD to the prepare pod's node.
func DeviceSet(o ClaimOSD, deviceClass string) RookDeviceSet {
	set := DeviceSetName(o.Node, o.DataDevice)
	data := claimTemplate(set, RoleData, o.DataSizeBytes)
	if deviceClass != "" {
		// Rook reads the CRUSH device class from the data template (deviceSet.go, crushDeviceClass).
		data.Metadata.Annotations = map[string]string{"crushDeviceClass": deviceClass}
	}
	return RookDeviceSet{Name: set, Count: 1, VolumeClaimTemplates: []RookClaimTemplate{data, claimTemplate(set, RoleMetadata, o.SlotSizeBytes)}}
}

func claimTemplate(set, role string, size int64) RookClaimTemplate {
	block := corev1.PersistentVolumeBlock
	class := LocalStorageClass
	return RookClaimTemplate{
		Metadata: RookClaimMetadata{Name: role},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(size, resource.BinarySI)}},
			Selector:         &metav1.LabelSelector{MatchLabels: map[string]string{LabelVolume: VolumeName(set, role)}},
			StorageClassName: &class,
			VolumeMode:       &block,
		},
	}
}

// Unstructured is the set as the CephCluster holds it (integers as int64, as the API server
// returns them, so that an unchanged set compares equal).
func (s RookDeviceSet) Unstructured() (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&s)
}

// MergeRookDeviceSets replaces, in a CephCluster's spec.storage.storageClassDeviceSets, the
// sets named in replace and those Prism now wants with Prism's, and keeps every other set
// exactly as it was, in its place. Like storage.nodes, Rook declares the list atomic, so
// Prism re-applies foreign sets verbatim (docs/decisions/0006-rook-storage-nodes-are-atomic.md).
func MergeRookDeviceSets(existing []any, replace []string, prism []RookDeviceSet) ([]any, error) {
	names := append([]string(nil), replace...)
	for _, s := range prism {
		names = append(names, s.Name)
	}
	merged, err := KeepOthers(existing, "spec.storage.storageClassDeviceSets", names)
	if err != nil {
		return nil, err
	}
	sorted := append([]RookDeviceSet(nil), prism...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, s := range sorted {
		u, err := s.Unstructured()
		if err != nil {
			return nil, fmt.Errorf("device set %s: %w", s.Name, err)
		}
		merged = append(merged, u)
	}
	return merged, nil
}

// VolumeDrift compares a local volume in the cluster with the one Prism wants. immutable
// lists fields the API server will not change (the path, the node, the mode, the class): the
// volume must be re-created, which is safe only while no claim holds it. mutable lists fields
// an apply fixes (labels, annotations, capacity).
func VolumeDrift(have, want *corev1.PersistentVolume) (immutable, mutable []string) {
	if localPath(have) != localPath(want) {
		immutable = append(immutable, fmt.Sprintf("spec.local.path %q (want %q)", localPath(have), localPath(want)))
	}
	if pinnedHost(have) != pinnedHost(want) {
		immutable = append(immutable, fmt.Sprintf("spec.nodeAffinity %q (want %q)", pinnedHost(have), pinnedHost(want)))
	}
	if volumeMode(have) != volumeMode(want) {
		immutable = append(immutable, "spec.volumeMode "+volumeMode(have))
	}
	if have.Spec.StorageClassName != want.Spec.StorageClassName {
		immutable = append(immutable, "spec.storageClassName "+have.Spec.StorageClassName)
	}
	for k, v := range want.Labels {
		if have.Labels[k] != v {
			mutable = append(mutable, "metadata.labels["+k+"]")
		}
	}
	for k, v := range want.Annotations {
		if have.Annotations[k] != v {
			mutable = append(mutable, "metadata.annotations["+k+"]")
		}
	}
	hc, wc := have.Spec.Capacity[corev1.ResourceStorage], want.Spec.Capacity[corev1.ResourceStorage]
	if hc.Cmp(wc) != 0 {
		mutable = append(mutable, "spec.capacity")
	}
	if have.Spec.PersistentVolumeReclaimPolicy != want.Spec.PersistentVolumeReclaimPolicy {
		mutable = append(mutable, "spec.persistentVolumeReclaimPolicy")
	}
	sort.Strings(mutable)
	return immutable, mutable
}

func localPath(v *corev1.PersistentVolume) string {
	if v.Spec.Local == nil {
		return ""
	}
	return v.Spec.Local.Path
}

func pinnedHost(v *corev1.PersistentVolume) string {
	if v.Spec.NodeAffinity == nil || v.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, t := range v.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if e.Key == hostnameLabel && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

func volumeMode(v *corev1.PersistentVolume) string {
	if v.Spec.VolumeMode == nil {
		return string(corev1.PersistentVolumeFilesystem)
	}
	return string(*v.Spec.VolumeMode)
}
