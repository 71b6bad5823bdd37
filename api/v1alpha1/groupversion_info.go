// Package v1alpha1 contains the Prism API: HybridStoragePolicy (cluster intent),
// ClassificationPolicy (Open CAS IO classes) and StorageNode (one per node).
// +kubebuilder:object:generate=true
// +groupName=prism.storage.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every Prism kind.
	GroupVersion = schema.GroupVersion{Group: "prism.storage.io", Version: "v1alpha1"}

	// SchemeBuilder registers the Prism kinds with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the Prism kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
