package release

import (
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const base = `
spec:
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [mode]
            properties:
              mode: {type: string, enum: [DryRun, Apply]}
              names: {type: array, maxItems: 8, items: {type: string, maxLength: 16}}
`

func crd(t *testing.T, s string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(s), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBreaks(t *testing.T) {
	cases := []struct {
		name string
		next string
		want []string
	}{
		{"unchanged", base, nil},
		{"an optional field added", `
spec:
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [mode]
            properties:
              mode: {type: string, enum: [DryRun, Apply, Audit]}
              names: {type: array, maxItems: 16, items: {type: string, maxLength: 16}}
              size: {type: integer}
`, nil},
		{"removed, retyped, required, narrowed, shrunk", `
spec:
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [mode, size]
            properties:
              mode: {type: string, enum: [Apply]}
              names: {type: array, maxItems: 4, items: {type: integer}}
              size: {type: integer}
`, []string{
			"v1alpha1.spec.size: newly required, with no default",
			"v1alpha1.spec.mode: enum value \"DryRun\" dropped",
			"v1alpha1.spec.names: maxItems 8 became 4",
			"v1alpha1.spec.names[]: type \"string\" became \"integer\"",
		}},
		{"a property removed", `
spec:
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [mode]
            properties:
              mode: {type: string, enum: [DryRun, Apply]}
`, []string{"v1alpha1.spec.names: removed (the API server prunes it from stored objects)"}},
		{"the version no longer served or stored", `
spec:
  versions:
  - name: v1alpha1
    served: false
    storage: false
  - name: v1beta1
    served: true
    storage: true
`, []string{"v1alpha1: no longer served", "v1alpha1: storage true became false"}},
		{"the version gone", `
spec:
  versions:
  - name: v1
    served: true
    storage: true
`, []string{"v1alpha1: version removed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Breaks(crd(t, base), crd(t, tc.next)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Breaks =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
