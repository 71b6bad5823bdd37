package apivalidation

import (
	"os"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// mergeTypes lists every list, map and atomic struct under spec and status of every CRD, as
// "Kind field type"; a list or map without a declared type is "undeclared".
func mergeTypes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, c := range baseCRDs(t) {
		root := c.Spec.Versions[0].Schema.OpenAPIV3Schema
		var walk func(path string, s apiextensionsv1.JSONSchemaProps)
		walk = func(path string, s apiextensionsv1.JSONSchemaProps) {
			add := func(typ string) { out = append(out, c.Spec.Names.Kind+" "+path+" "+typ) }
			switch {
			case s.Type == "array" && s.XListType == nil:
				add("undeclared")
			case s.Type == "array" && *s.XListType == "map":
				add("map list keyed by " + strings.Join(s.XListMapKeys, ", "))
			case s.Type == "array":
				add(*s.XListType + " list")
			case s.AdditionalProperties != nil && s.XMapType == nil:
				add("undeclared")
			case s.XMapType != nil:
				add(*s.XMapType)
			}
			if s.Items != nil && s.Items.Schema != nil {
				walk(path+"[]", *s.Items.Schema)
			}
			for name, p := range s.Properties {
				walk(path+"."+name, p)
			}
		}
		for _, top := range []string{"spec", "status"} {
			if s, ok := root.Properties[top]; ok {
				for name, p := range s.Properties {
					walk(top+"."+name, p)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// documented reads docs/api-lists.md's table as "Kind field type".
func documented(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../docs/api-lists.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`") {
			continue
		}
		out = append(out, strings.TrimSpace(cells[1])+" "+strings.Trim(strings.TrimSpace(cells[2]), "`")+" "+strings.TrimSpace(cells[3]))
	}
	sort.Strings(out)
	return out
}

// TestListTypesAreDeclaredAndDocumented: every list and map of the three CRDs declares how
// server-side apply merges it, and docs/api-lists.md gives each (and each atomic struct) with
// the type the CRD has.
func TestListTypesAreDeclaredAndDocumented(t *testing.T) {
	crds, doc := mergeTypes(t), documented(t)
	inDoc := map[string]bool{}
	for _, d := range doc {
		inDoc[d] = true
	}
	inCRD := map[string]bool{}
	for _, c := range crds {
		inCRD[c] = true
		if strings.HasSuffix(c, " undeclared") {
			t.Errorf("%s: declare +listType (lists) or +mapType (maps) and document why in docs/api-lists.md", c)
		} else if !inDoc[c] {
			t.Errorf("%s: not in docs/api-lists.md (or with another type there)", c)
		}
	}
	for _, d := range doc {
		if !inCRD[d] {
			t.Errorf("docs/api-lists.md: %s is not what the CRDs say", d)
		}
	}
	if len(crds) < 40 {
		t.Fatalf("only %d lists, maps and atomic structs found: the walk is broken", len(crds))
	}
}
