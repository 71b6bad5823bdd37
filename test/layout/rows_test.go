package layout

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// row is one row of docs/architecture.md's picture of the tree: its packages (import path
// prefixes, relative to the module) and the lower rows it may use, its arrows and theirs.
type row struct {
	name     string
	packages []string
	uses     []string
}

// rows, top to bottom, as docs/architecture.md draws them. "Higher rows use lower ones, never
// the other way round": a package may link its own row and the rows its row's arrows reach,
// nothing else of Prism's. The bottom row is what every side shares: the API types and the
// CRDs generated from them, and formats and leaf helpers that import nothing above it.
var rows = []row{
	{"cmd", []string{"cmd/"}, []string{"controllers", "presentation", "planner", "advisor", "pure", "node", "host", "shared"}},
	{"controllers", []string{"controllers/"}, []string{"planner", "advisor", "pure", "shared"}},
	{"presentation", []string{"internal/report", "internal/webui", "internal/dashboards", "internal/apivalidation"}, []string{"planner", "advisor", "pure", "shared"}},
	{"planner", []string{"internal/plan"}, []string{"advisor", "pure", "shared"}},
	{"advisor", []string{"internal/advisor"}, []string{"pure", "shared"}},
	{"pure", []string{"internal/ioclass", "internal/endurance", "internal/drivedb", "internal/cachesim", "internal/dbsizing"}, []string{"shared"}},
	{"node", []string{"internal/node/"}, []string{"pure", "host", "shared"}},
	{"host", []string{"internal/host/"}, []string{"shared"}},
	{"shared", []string{"api/", "config/crd", "internal/inventorydoc", "internal/blktrace", "internal/bytesize", "internal/fsutil", "internal/kube", "internal/runbook", "internal/workpool"}, nil},
}

// rowOf names the row of a package of the module ("" when none holds it).
func rowOf(pkg string) string {
	rel, ok := strings.CutPrefix(pkg, mod)
	if !ok {
		return ""
	}
	for _, r := range rows {
		for _, p := range r.packages {
			if rel == strings.TrimSuffix(p, "/") || strings.HasPrefix(rel, strings.TrimSuffix(p, "/")+"/") {
				return r.name
			}
		}
	}
	return ""
}

// mayUse says whether a package of row from may link one of row to.
func mayUse(from, to string) bool {
	if from == to {
		return true
	}
	for _, r := range rows {
		if r.name == from {
			return slices.Contains(r.uses, to)
		}
	}
	return false
}

func TestRowOf(t *testing.T) {
	for pkg, want := range map[string]string{
		mod + "cmd/agent":                           "cmd",
		mod + "internal/plan":                       "planner",
		mod + "internal/plan/rook":                  "planner",
		mod + "internal/planner":                    "",
		mod + "internal/ioclass/defaults":           "pure",
		mod + "internal/host/nvme/internal/loggen":  "host",
		mod + "internal/blktrace":                   "shared",
		mod + "api/v1alpha1":                        "shared",
		"k8s.io/client-go/kubernetes":               "",
		mod + "internal/dashboards/gen":             "presentation",
		mod + "internal/node/agent":                 "node",
		mod + "internal/nodes":                      "",
		mod + "test/support/fixturehost":            "",
		mod + "internal/inventorydoc":               "shared",
		mod + "internal/bytesizeextra":              "",
		mod + "controllers/hybridstoragepolicy":     "controllers",
		mod + "internal/apivalidation":              "presentation",
		mod + "internal/drivedb/internal/pciidsgen": "pure",
	} {
		if got := rowOf(pkg); got != want {
			t.Errorf("rowOf(%s) = %q, want %q", pkg, got, want)
		}
	}
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"host", "pure", false}, {"host", "shared", true}, {"node", "host", true}, {"node", "planner", false},
		{"pure", "advisor", false}, {"planner", "advisor", true}, {"shared", "host", false}, {"controllers", "node", false},
	} {
		if got := mayUse(tc.from, tc.to); got != tc.want {
			t.Errorf("mayUse(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

// TestRowsNeverUseHigherRows checks every package of the module against the rows: each
// belongs to one, and links nothing of Prism's above what its row may use.
func TestRowsNeverUseHigherRows(t *testing.T) {
	graph := importGraph(t, "./api/...", "./config/...", "./controllers/...", "./internal/...", "./cmd/...")
	var problems []string
	for pkg := range graph {
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		from := rowOf(pkg)
		if from == "" {
			problems = append(problems, fmt.Sprintf("%s belongs to no row of docs/architecture.md's picture: add it there and to test/layout's rows", pkg))
			continue
		}
		for dep, via := range reachable(graph, pkg) {
			if to := rowOf(dep); to != "" && !mayUse(from, to) {
				problems = append(problems, fmt.Sprintf("%s (row %s) links %s (row %s), imported by %s", pkg, from, dep, to, via))
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// importGraph maps each package the patterns reach, dependencies included, to its imports.
func importGraph(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", patterns, err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		graph[f[0]] = f[1:]
	}
	return graph
}

// reachable maps every module package pkg links, directly or not, to the package that
// imports it on the first path found.
func reachable(graph map[string][]string, pkg string) map[string]string {
	via := map[string]string{}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range graph[p] {
			if _, seen := via[imp]; seen || imp == pkg || !strings.HasPrefix(imp, mod) {
				continue
			}
			via[imp] = p
			queue = append(queue, imp)
		}
	}
	return via
}
