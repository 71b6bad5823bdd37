package release

import (
	"fmt"
	"slices"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Breaks lists what in next would break objects stored under prev when `helm upgrade`
// applies next in place (and, read the other way, what a rollback would break): a version no
// longer served or whose storage flag moved, a property removed (the API server prunes it)
// or retyped, a property newly required where objects already exist, an enum value dropped,
// a smaller maxItems or maxLength. Each entry names the version and the field's path.
func Breaks(prev, next *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, pv := range prev.Spec.Versions {
		i := slices.IndexFunc(next.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == pv.Name })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s: version removed", pv.Name))
			continue
		}
		nv := next.Spec.Versions[i]
		if pv.Served && !nv.Served {
			out = append(out, fmt.Sprintf("%s: no longer served", pv.Name))
		}
		if pv.Storage != nv.Storage {
			out = append(out, fmt.Sprintf("%s: storage %t became %t", pv.Name, pv.Storage, nv.Storage))
		}
		if pv.Schema != nil && nv.Schema != nil {
			out = append(out, schemaBreaks(pv.Name, pv.Schema.OpenAPIV3Schema, nv.Schema.OpenAPIV3Schema)...)
		}
	}
	return out
}

func schemaBreaks(path string, prev, next *apiextensionsv1.JSONSchemaProps) []string {
	if prev == nil {
		return nil
	}
	if next == nil {
		return []string{fmt.Sprintf("%s: removed", path)}
	}
	var out []string
	if prev.Type != next.Type {
		out = append(out, fmt.Sprintf("%s: type %q became %q", path, prev.Type, next.Type))
	}
	for _, r := range next.Required {
		if !slices.Contains(prev.Required, r) && next.Properties[r].Default == nil {
			out = append(out, fmt.Sprintf("%s.%s: newly required, with no default", path, r))
		}
	}
	if len(next.Enum) > 0 {
		for _, e := range prev.Enum {
			if !slices.ContainsFunc(next.Enum, func(n apiextensionsv1.JSON) bool { return string(n.Raw) == string(e.Raw) }) {
				out = append(out, fmt.Sprintf("%s: enum value %s dropped", path, e.Raw))
			}
		}
	}
	if smaller(prev.MaxItems, next.MaxItems) {
		out = append(out, fmt.Sprintf("%s: maxItems %s became %d", path, limit(prev.MaxItems), *next.MaxItems))
	}
	if smaller(prev.MaxLength, next.MaxLength) {
		out = append(out, fmt.Sprintf("%s: maxLength %s became %d", path, limit(prev.MaxLength), *next.MaxLength))
	}
	names := make([]string, 0, len(prev.Properties))
	for name := range prev.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := prev.Properties[name]
		n, ok := next.Properties[name]
		if !ok {
			if !(next.XPreserveUnknownFields != nil && *next.XPreserveUnknownFields) {
				out = append(out, fmt.Sprintf("%s.%s: removed (the API server prunes it from stored objects)", path, name))
			}
			continue
		}
		out = append(out, schemaBreaks(path+"."+name, &p, &n)...)
	}
	if prev.Items != nil && next.Items != nil {
		out = append(out, schemaBreaks(path+"[]", prev.Items.Schema, next.Items.Schema)...)
	}
	if prev.AdditionalProperties != nil && next.AdditionalProperties != nil {
		out = append(out, schemaBreaks(path+"{}", prev.AdditionalProperties.Schema, next.AdditionalProperties.Schema)...)
	}
	return out
}

// smaller: next sets a limit below prev's (or sets one where prev had none).
func smaller(prev, next *int64) bool {
	return next != nil && (prev == nil || *next < *prev)
}

func limit(v *int64) string {
	if v == nil {
		return "unset"
	}
	return fmt.Sprint(*v)
}
