package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/casadm"
)

// vocabulary is a host tool's words (its name, casadm's parameter row titles) and the
// package that spells them: its adapter. The casadm emulator takes them from the adapter too.
type vocabulary struct {
	words []string
	homes []string
}

func vocabularies() []vocabulary {
	titles := []string{casadm.Command}
	for _, p := range []casadm.ParamSpec{casadm.CleaningPolicy, casadm.AlruWakeUp, casadm.AlruStaleBuffer,
		casadm.AlruFlushMaxBuffers, casadm.AlruActivityThreshold, casadm.AcpWakeUp, casadm.AcpFlushMaxBuffers,
		casadm.PromotionPolicy, casadm.NhitThreshold, casadm.NhitTrigger, casadm.SeqCutoffThreshold, casadm.SeqCutoffPolicy} {
		titles = append(titles, p.Title)
	}
	return []vocabulary{
		{[]string{"smartctl"}, []string{"internal/host/smart/"}},
		{titles, []string{"internal/host/casadm/"}},
	}
}

// TestHostToolWordsStayInTheirAdapters: a host tool's argv and output titles are spelled once,
// in its adapter (docs/architecture.md: "one adapter per host tool"); the node logic asks the
// adapter for them.
func TestHostToolWordsStayInTheirAdapters(t *testing.T) {
	vocab := vocabularies()
	for _, dir := range []string{"api", "controllers", "internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join("../..", dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, "../../"))
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, v := range vocab {
					if !slices.ContainsFunc(v.homes, func(home string) bool { return strings.HasPrefix(rel, home) }) && slices.Contains(v.words, s) {
						t.Errorf("%s spells %q: ask its adapter (%s) for it", rel, s, v.homes[0])
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
