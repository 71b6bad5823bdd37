package apivalidation

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"sigs.k8s.io/yaml"

	"github.com/prism-storage/prism/config/crd"
)

// TestCRDsPassTheAPIServersCRDValidation runs the API server's own CRD validation, which
// compiles every CEL rule and refuses a CRD whose rules' estimated cost is over budget.
func TestCRDsPassTheAPIServersCRDValidation(t *testing.T) {
	for name, v1 := range baseCRDs(t) {
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
		internal := &apiextensions.CustomResourceDefinition{}
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, internal, nil); err != nil {
			t.Fatal(err)
		}
		for _, fe := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal) {
			t.Errorf("%s: %s", name, fe)
		}
	}
}

// baseCRDs reads config/crd/bases (embedded), strictly, by file name.
func baseCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	entries, err := fs.ReadDir(crd.Bases, "bases")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, e := range entries {
		data, err := fs.ReadFile(crd.Bases, "bases/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		v1 := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, v1); err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = v1
	}
	return out
}

func TestKnowsEveryKind(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(v.Kinds(), ","); got != "ClassificationPolicy,HybridStoragePolicy,StorageNode" {
		t.Fatal(got)
	}
}
