package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/runbook"
)

// runbookDir holds the runbooks whose commands an admin copies; drills name them by path.
const runbookDir = "docs/runbooks"

// TestRunbooksParse fails on a runbook internal/runbook refuses (an undeclared or unused
// placeholder, shell syntax in a command, a step out of order) and on one whose blocks meant to be
// run (no not-run marker) no drill under test/ reads: a drill names the runbook's path.
func TestRunbooksParse(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("../..", runbookDir, "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no runbook under %s: %v", runbookDir, err)
	}
	drills, err := drillSources("../../test")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range docs {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := runbookDir + "/" + filepath.Base(path)
		rb, err := runbook.Parse(string(text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if blocks := rb.Blocks(); len(rb.Steps) == 0 || len(blocks) == 0 {
			t.Errorf("%s: %d numbered steps, %d shell blocks: a runbook's commands are in ```sh blocks inside its steps", name, len(rb.Steps), len(blocks))
		}
		if why := undrilled(name, rb, drills); why != "" {
			t.Error(why)
		}
	}
}

// undrilled says which blocks of rb are meant to be run while no drill names the runbook.
func undrilled(name string, rb runbook.Runbook, drills map[string]string) string {
	var run []string
	for _, s := range rb.Steps {
		for _, b := range s.Blocks {
			if b.NotRun == "" {
				run = append(run, fmt.Sprintf("line %d", b.Line))
			}
		}
	}
	if len(run) == 0 {
		return ""
	}
	for _, src := range drills {
		if strings.Contains(src, name) {
			return ""
		}
	}
	return fmt.Sprintf("%s: blocks at %s carry no not-run marker, but no test under test/ names %s: run them in a drill, or mark them <!-- not run: REASON -->", name, strings.Join(run, ", "), name)
}

// drillSources are the Go test files under dir, by path.
func drillSources(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		out[path] = string(src)
		return err
	})
	return out, err
}

func TestUndrilled(t *testing.T) {
	rb := runbook.Runbook{Steps: []runbook.Step{{Blocks: []runbook.Block{{Line: 7, NotRun: "no node"}, {Line: 12}}}}}
	drills := map[string]string{"test/ceph/a_test.go": `runbook.Parse("docs/runbooks/other.md")`}
	if got, want := undrilled("docs/runbooks/x.md", rb, drills), "docs/runbooks/x.md: blocks at line 12 carry no not-run marker"; !strings.HasPrefix(got, want) {
		t.Errorf("undrilled = %q, want it to start %q", got, want)
	}
	drills["test/ceph/b_test.go"] = `const page = "docs/runbooks/x.md"`
	if got := undrilled("docs/runbooks/x.md", rb, drills); got != "" {
		t.Errorf("undrilled with a drill naming it = %q", got)
	}
	rb.Steps[0].Blocks[1].NotRun = "later"
	if got := undrilled("docs/runbooks/y.md", rb, nil); got != "" {
		t.Errorf("undrilled with every block marked = %q", got)
	}
}
