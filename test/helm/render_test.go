package helm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/prism-storage/prism/test/support/testenv"
)

const (
	releaseName = "prism"
	namespace   = "prism-system"
)

func chartDir() string { return filepath.Join(testenv.RepoRoot(), "charts", "prism") }

// loadChart loads charts/prism as `helm install` does (Chart.yaml, values, schema, templates,
// files; .helmignore applied) and checks its metadata.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir())
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("chart metadata: %v", err)
	}
	return c
}

// release is a rendered chart: the objects in template order, and NOTES.txt.
type release struct {
	objects []*unstructured.Unstructured
	notes   string
}

// get returns the object of kind and name, or nil.
func (r release) get(kind, name string) *unstructured.Unstructured {
	for _, o := range r.objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// must is get that fails the test when the object is missing.
func (r release) must(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	o := r.get(kind, name)
	if o == nil {
		t.Fatalf("no %s %s rendered; got %v", kind, name, r.names())
	}
	return o
}

// mustIn is must for a namespaced object outside the release namespace.
func (r release) mustIn(t *testing.T, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range r.objects {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s/%s rendered; got %v", kind, ns, name, r.names())
	return nil
}

func (r release) ofKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range r.objects {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func (r release) names() []string {
	var out []string
	for _, o := range r.objects {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

// renderValues renders the chart with user values (YAML) as `helm install --dry-run` would,
// with the given capabilities; mutate may change the loaded chart (add files) first.
func renderValues(t *testing.T, valuesYAML string, caps *chartutil.Capabilities, mutate func(*chart.Chart)) release {
	t.Helper()
	r, err := tryRender(t, valuesYAML, caps, mutate)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func tryRender(t *testing.T, valuesYAML string, caps *chartutil.Capabilities, mutate func(*chart.Chart)) (release, error) {
	t.Helper()
	c := loadChart(t)
	if mutate != nil {
		mutate(c)
	}
	vals, err := chartutil.ReadValues([]byte(valuesYAML))
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	if !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, caps.KubeVersion.String()) {
		t.Fatalf("chart kubeVersion %q does not accept the cluster's %s", c.Metadata.KubeVersion, caps.KubeVersion.String())
	}
	// ToRenderValues coalesces values.yaml with vals and validates them against values.schema.json.
	top, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{
		Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return release{}, err
	}
	files, err := engine.Render(c, top)
	if err != nil {
		return release{}, err
	}
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rel release
	for _, k := range keys {
		switch {
		case strings.HasSuffix(k, "NOTES.txt"):
			rel.notes = files[k]
			continue
		case strings.HasPrefix(filepath.Base(k), "_"):
			continue
		}
		objs, err := parseManifests(files[k])
		if err != nil {
			t.Fatalf("%s: %v\n%s", k, err, files[k])
		}
		rel.objects = append(rel.objects, objs...)
	}
	return rel, nil
}

// parseManifests splits a rendered template into objects; duplicate keys are errors.
func parseManifests(s string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	rd := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(s)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue // only comments or whitespace
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
}

// withDashboards adds dashboard JSON files to the loaded chart, as if files/dashboards/ held them.
func withDashboards(files map[string]string) func(*chart.Chart) {
	return func(c *chart.Chart) {
		for name, data := range files {
			c.Files = append(c.Files, &chart.File{Name: "files/dashboards/" + name, Data: []byte(data)})
		}
	}
}
