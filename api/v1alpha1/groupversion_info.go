// Package v1alpha1 contains the Prism API: HybridStoragePolicy (cluster intent),
// ClassificationPolicy (Open CAS IO classes) and StorageNode (one per node).
// It imports only apimachinery, so that any client can use the types.
// +kubebuilder:object:generate=true
// +groupName=prism.storage.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every Prism kind.
	GroupVersion = schema.GroupVersion{Group: "prism.storage.io", Version: "v1alpha1"}

	// SchemeBuilder registers the Prism kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the Prism kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme

	knownTypes []runtime.Object
)

// register is called by each kind's init.
func register(objs ...runtime.Object) { knownTypes = append(knownTypes, objs...) }

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, knownTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
