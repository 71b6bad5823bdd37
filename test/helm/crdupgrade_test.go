package helm

import (
	"os/exec"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	previous "github.com/prism-storage/prism/test/support/release"
	"github.com/prism-storage/prism/test/support/testenv"
)

// gitShow returns git's output for args in the repository, failing the test with why.
func gitShow(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", testenv.RepoRoot()}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %s: %v (a shallow clone lacks the previous release %s: git fetch --unshallow)", strings.Join(args, " "), err, previous.Previous[:7])
	}
	return string(out)
}

// TestCRDsUpgradeInPlaceFromThePreviousRelease (decision 0052): the previous release's chart
// and this one both ship the CRDs as templates, so the previous release's Helm release owns
// them and `helm upgrade` applies this chart's CRDs over them in place (Helm never upgrades a
// chart's crds/ directory). What they change breaks no object the previous release stored:
// no version, property, enum value or limit is taken away and nothing becomes required. The
// other way, a rollback, drops only the properties this release added (logged), which the
// API server then prunes from what it returns (docs/upgrade.md).
func TestCRDsUpgradeInPlaceFromThePreviousRelease(t *testing.T) {
	for _, rev := range []string{previous.Previous, "HEAD"} {
		tree := gitShow(t, "ls-tree", "-r", "--name-only", rev, "charts/prism/")
		if strings.Contains(tree, "charts/prism/crds/") || !strings.Contains(tree, "charts/prism/templates/crds/") {
			t.Errorf("the chart at %s does not ship its CRDs as templates/crds/ only:\n%s", rev, tree)
		}
	}
	rendered := renderValues(t, "", plainCaps, nil).ofKind("CustomResourceDefinition")
	next := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, u := range rendered {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c); err != nil {
			t.Fatal(err)
		}
		next[c.Name] = c
	}
	files := strings.Fields(gitShow(t, "ls-tree", "--name-only", previous.Previous, "config/crd/bases/"))
	if len(files) == 0 {
		t.Fatalf("no CRDs in config/crd/bases at %s", previous.Previous)
	}
	var dropped []string
	for _, f := range files {
		objs, err := parseManifests(gitShow(t, "show", previous.Previous+":"+f))
		if err != nil || len(objs) != 1 {
			t.Fatalf("%s at %s: %d objects, %v", f, previous.Previous[:7], len(objs), err)
		}
		prev := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, prev); err != nil {
			t.Fatal(err)
		}
		cur, ok := next[prev.Name]
		if !ok {
			t.Errorf("CRD %s of the previous release is not in the chart: helm upgrade would leave it (kept) unserved by the operator", prev.Name)
			continue
		}
		for _, b := range previous.Breaks(prev, cur) {
			t.Errorf("upgrading %s from %s breaks stored objects: %s", prev.Name, previous.Previous[:7], b)
		}
		for _, b := range previous.Breaks(cur, prev) {
			if !strings.HasSuffix(b, "removed (the API server prunes it from stored objects)") {
				t.Errorf("rolling %s back to %s breaks stored objects: %s", prev.Name, previous.Previous[:7], b)
			}
			dropped = append(dropped, prev.Spec.Names.Kind+" "+strings.TrimSuffix(b, ": removed (the API server prunes it from stored objects)"))
		}
	}
	t.Logf("a rollback to %s drops: %s", previous.Previous[:7], strings.Join(dropped, ", "))
}
