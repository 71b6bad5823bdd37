// Package apivalidation validates Prism objects offline exactly as the API server does: it
// loads the generated CRDs (config/crd, embedded) and runs apiextensions-apiserver's own
// pruning, defaulting, OpenAPI schema validation, list-type checks and CEL validators on an
// object, in the order the API server runs them on a create. Semantic (in semantic.go) then
// applies the checks the operator makes on objects the API server accepted.
//
// The kubectl plugin validates every file it reads here, so `kubectl prism plan` and
// `kubectl prism ioclass` accept exactly what `kubectl apply` accepts, with the same field
// paths; test/envtest's parity test holds both to the same verdicts.
package apivalidation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/prism-storage/prism/config/crd"
)

// NotCheckedDetail is the API server's note that CEL rules were skipped because the schema
// already refused the object. It names no field; callers showing errors may leave it out.
const NotCheckedDetail = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// Validator validates the kinds of the embedded CRDs.
type Validator struct {
	kinds map[string]*kind // by kind
}

type kind struct {
	group, version string
	namespaced     bool
	structural     *structuralschema.Structural
	schema         apiservervalidation.SchemaValidator
	cel            *cel.Validator
}

// New loads the CRDs the API server is given (config/crd/bases).
func New() (*Validator, error) { return FromFS(crd.Bases, "bases") }

// FromFS loads every CRD in dir of fsys.
func FromFS(fsys fs.FS, dir string) (*Validator, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	v := &Validator{kinds: map[string]*kind{}}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		k, err := newKind(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		v.kinds[c.Spec.Names.Kind] = k
	}
	return v, nil
}

// newKind builds the validators the API server builds for a CRD's served version
// (apiextensions-apiserver's customresource_handler).
func newKind(c *apiextensionsv1.CustomResourceDefinition) (*kind, error) {
	if len(c.Spec.Versions) != 1 || c.Spec.Versions[0].Schema == nil {
		return nil, fmt.Errorf("want exactly one version with a schema")
	}
	ver := c.Spec.Versions[0]
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(ver.Schema, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	return &kind{
		group: c.Spec.Group, version: ver.Name,
		namespaced: c.Spec.Scope == apiextensionsv1.NamespaceScoped,
		structural: s, schema: sv,
		cel: cel.NewValidator(s, true, celconfig.PerCallLimit),
	}, nil
}

// Kinds lists the kinds the validator knows.
func (v *Validator) Kinds() []string {
	var out []string
	for k := range v.kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Validate validates obj as the API server validates a create sent with strict field
// validation (what kubectl apply sends): unknown fields, then defaults, then metadata, the
// OpenAPI schema, list types and, when none of these blocked, the CEL rules. Status, when
// present, is validated with the rest, as if written by the agent through the status
// subresource. obj is defaulted in place.
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	if err := normalize(obj); err != nil {
		return field.ErrorList{field.Invalid(nil, nil, err.Error())}
	}
	u := &unstructured.Unstructured{Object: obj}
	k, ok := v.kinds[u.GetKind()]
	if !ok {
		return field.ErrorList{field.NotSupported(field.NewPath("kind"), u.GetKind(), v.Kinds())}
	}
	if want := k.group + "/" + k.version; u.GetAPIVersion() != want {
		return field.ErrorList{field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+want)}
	}
	// Strict field validation: the API server refuses the request naming each unknown field.
	if unknown := structuralpruning.PruneWithOptions(obj, k.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(unknown) > 0 {
		var errs field.ErrorList
		for _, p := range unknown {
			errs = append(errs, &field.Error{Type: field.ErrorTypeForbidden, Field: p, Detail: fmt.Sprintf("unknown field %q", p)})
		}
		return errs
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, k.structural)
	structuraldefaulting.Default(obj, k.structural)

	var errs field.ErrorList
	errs = append(errs, metavalidation.ValidateObjectMetaAccessor(u, k.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, k.schema)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj, k.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, k.structural, obj)...)
	if blocking(errs) {
		return append(errs, field.Invalid(nil, nil, NotCheckedDetail))
	}
	celErrs, _ := k.cel.Validate(context.Background(), nil, k.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// ValidateUpdate validates an update of old to obj (both as the API server holds them, with
// status): the transition rules (self == oldSelf) run, as they do on a real update.
func (v *Validator) ValidateUpdate(obj, old map[string]any) field.ErrorList {
	if err := errors.Join(normalize(obj), normalize(old)); err != nil {
		return field.ErrorList{field.Invalid(nil, nil, err.Error())}
	}
	u := &unstructured.Unstructured{Object: obj}
	k, ok := v.kinds[u.GetKind()]
	if !ok {
		return field.ErrorList{field.NotSupported(field.NewPath("kind"), u.GetKind(), v.Kinds())}
	}
	structuraldefaulting.Default(obj, k.structural)
	errs := apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, k.schema)
	if blocking(errs) {
		return append(errs, field.Invalid(nil, nil, NotCheckedDetail))
	}
	celErrs, _ := k.cel.Validate(context.Background(), nil, k.structural, obj, old, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// normalize gives obj the types the API server's JSON decoder gives a request body: whole
// numbers are int64 (YAML and encoding/json decode them as float64), so that the schema and
// the CEL rules see what they see on the server.
func normalize(obj map[string]any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return err
	}
	clear(obj)
	maps.Copy(obj, m)
	return nil
}

// Decode reads one YAML or JSON document as the API server would receive it.
func Decode(data []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// blocking reports whether the API server would skip the CEL rules (customresource's
// hasBlockingErr): the schema found a missing, unsupported, too long or mistyped value.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}
