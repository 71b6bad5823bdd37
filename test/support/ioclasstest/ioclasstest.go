// Package ioclasstest holds a ClassificationPolicy with a fixed class layout for tests.
package ioclasstest

import (
	_ "embed"

	"sigs.k8s.io/yaml"

	"github.com/prism-storage/prism/api/v1alpha1"
)

//go:embed five-classes.yaml
var fiveClasses []byte

// FiveClasses returns a fresh copy of the five-class test policy (classes 0, 1, 2, 10, 11).
func FiveClasses() *v1alpha1.ClassificationPolicy {
	p := &v1alpha1.ClassificationPolicy{}
	if err := yaml.UnmarshalStrict(fiveClasses, p); err != nil {
		panic("ioclasstest: five-classes.yaml: " + err.Error())
	}
	return p
}
