package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkedDocs are the documents whose shell commands a user copies.
var checkedDocs = []string{"README.md", "docs/user-guide.md"}

// runDirs hold what is run for real: the e2e suite and hack/'s scripts.
var runDirs = []string{"test/e2e", "hack"}

// TestDocumentedCommandsAreRun fails on a command of README or the user guide that neither
// the e2e suite nor a hack/ script runs, unless its block is marked not run; and on a marker
// that excuses nothing (every command of its block is run) or gives no reason.
func TestDocumentedCommandsAreRun(t *testing.T) {
	ran := runCommands(t, "../..")
	for _, doc := range checkedDocs {
		text, err := os.ReadFile(filepath.Join("../..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, why := range problems(doc, shellBlocks(string(text)), ran) {
			t.Error(why)
		}
	}
}

// problems lists, per block, the unmarked commands nothing runs and the markers that excuse nothing.
func problems(doc string, blocks []block, ran []command) []string {
	var out []string
	for _, b := range blocks {
		var notRun []string
		for _, c := range b.commands {
			if !anyCovers(ran, c) {
				notRun = append(notRun, c.String())
			}
		}
		switch {
		case b.marked && b.notRun == "":
			out = append(out, fmt.Sprintf("%s:%d: the not-run marker gives no reason", doc, b.line))
		case b.marked && len(notRun) == 0:
			out = append(out, fmt.Sprintf("%s:%d: marked not run, but test/e2e or hack/ runs every checked command of the block: drop the marker", doc, b.line))
		case !b.marked && len(notRun) > 0:
			out = append(out, fmt.Sprintf("%s:%d: %s: neither test/e2e nor a hack/ script runs it with these flags; run it there, or put <!-- not run: REASON --> before the block", doc, b.line, strings.Join(notRun, "; ")))
		}
	}
	return out
}

func anyCovers(ran []command, doc command) bool {
	for _, r := range ran {
		if r.covers(doc) {
			return true
		}
	}
	return false
}

// runCommands collects the checked commands of the shell scripts and Go files under runDirs.
func runCommands(t *testing.T, root string) []command {
	var out []command
	for _, dir := range runDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.HasSuffix(path, "_test.go") && strings.Contains(path, "doccheck") {
				return nil // this package's own tables
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			switch {
			case strings.HasSuffix(path, ".go"):
				cmds, err := goCommands(path, src)
				if err != nil {
					return err
				}
				out = append(out, cmds...)
			case strings.HasSuffix(path, ".sh") || strings.HasPrefix(string(src), "#!/"):
				for _, l := range shellLines(string(src)) {
					out = append(out, commands(l)...)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatal("no helm, make or kubectl prism command found under test/e2e and hack/: the scan is broken")
	}
	return out
}
