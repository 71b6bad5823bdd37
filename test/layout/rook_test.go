package layout

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// rookPackage makes everything Prism gives Rook (docs/decisions/0038-rook-in-one-package.md).
const rookPackage = mod + "internal/plan/rook"

// rookImporters are the only packages that may import it: the one decision that calls it, the
// operator that applies what it decides, and the plugin that prints it.
var rookImporters = []string{mod + "internal/plan/decide", mod + "controllers/hybridstoragepolicy", mod + "cmd/kubectl-prism"}

// rookKeys are keys of the CephCluster entries Prism writes: code outside the rook package that
// spells one builds entries of its own.
var rookKeys = []string{`"metadataDevice"`, `"databaseSizeMB"`, `"storageClassDeviceSets"`}

// TestOnlyTheRookPackageMakesRookEntries: no package but the rook package and its callers
// imports Rook's types, and no code outside the rook package spells an entry's keys, so Rook
// entries keep one builder. Test files are free to.
func TestOnlyTheRookPackageMakesRookEntries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-f", `{{.ImportPath}}|{{.Dir}}|{{join .Imports " "}}|{{join .GoFiles " "}} {{join .CgoFiles " "}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		pkg, dir, imports, files := f[0], f[1], strings.Fields(f[2]), strings.Fields(f[3])
		if pkg == rookPackage {
			continue
		}
		if slices.Contains(imports, rookPackage) && !slices.Contains(rookImporters, pkg) {
			t.Errorf("%s imports %s: only %v may", pkg, rookPackage, rookImporters)
		}
		for _, name := range files {
			src, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range rookKeys {
				if strings.Contains(string(src), key) {
					t.Errorf("%s spells Rook's entry key %s: entries are %s's to build", filepath.Join(dir, name), key, rookPackage)
				}
			}
		}
	}
}
