// Package layout guards the tree's shape (docs/decisions/0021-tree-layout.md): which side a
// package lives on decides what it may link. Each rule lists packages and the imports that
// must never appear among their dependencies, direct or not.
package layout

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const mod = "github.com/prism-storage/prism/"

type rule struct {
	why      string
	packages string   // a go list pattern, relative to the module
	never    []string // import path prefixes
}

var rules = []rule{
	{"the API types are read by everyone and import nothing of Prism's", "./api/...", []string{mod + "internal/", mod + "controllers", mod + "cmd/"}},
	{"planning and domain packages are pure: no Kubernetes client, no host tool, no node side",
		"./internal/plan/... ./internal/ioclass/... ./internal/endurance/... ./internal/drivedb/... ./internal/dbsizing/... ./internal/blktrace/... ./internal/bytesize/...",
		[]string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "os/exec", mod + "internal/host/", mod + "internal/node/"}},
	{"the operator runs no host tool and has no node logic", "./controllers/... ./cmd/manager/...",
		[]string{mod + "internal/host/", mod + "internal/node/"}},
	{"the agent follows the plan it is given: it never plans", "./internal/node/...",
		[]string{mod + "internal/plan", mod + "controllers", mod + "internal/advisor"}},
	{"host adapters are the bottom floor", "./internal/host/...",
		[]string{mod + "internal/node/", mod + "internal/plan", mod + "controllers", mod + "internal/advisor", mod + "internal/webui", mod + "internal/dashboards", mod + "internal/ioclass"}},
	{"the offline plugin reads documents, never a host", "./cmd/kubectl-prism/...",
		[]string{mod + "internal/host/", mod + "internal/node/"}},
}

func TestNoForbiddenImports(t *testing.T) {
	for _, r := range rules {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, strings.Fields(r.packages)...)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("go list %s: %v", r.packages, err)
		}
		// Who imports what, to name the edge that breaks a rule.
		importers := map[string][]string{}
		deps := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			deps[f[0]] = true
			for _, imp := range f[1:] {
				importers[imp] = append(importers[imp], f[0])
			}
		}
		for dep := range deps {
			for _, bad := range r.never {
				if strings.HasPrefix(dep, bad) {
					t.Errorf("%s (%s) link %s, imported by %v", r.packages, r.why, dep, importers[dep])
				}
			}
		}
	}
}
