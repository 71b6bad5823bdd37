// Package kube holds small Kubernetes helpers shared by Prism's binaries.
package kube

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Scheme returns a scheme with the core Kubernetes kinds and Prism's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err) // only fails on programming errors in registered types
	}
	if err := prismv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}
