package depscan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

func TestGoCommands(t *testing.T) {
	src := `package p

import "os/exec"

const tool = "a"

var loopTools = []string{"b", "c"}
var debianPackage = map[string]string{"d": "pkg-d"}
var pkgs = []string{"not-a-command"}

func CreateArgv(dev string) ([]string, error) { return []string{"e", "--x", dev}, nil }
func WipeArgvs(dev string) [][]string { return [][]string{{"f", dev}, {"g", dev}} }
func labels() []string { return []string{"label", "value"} }

func run(r runner) {
	exec.Command(tool, "x")
	exec.CommandContext(nil, "h")
	exec.LookPath("i")
	python := "/usr/bin/j"
	exec.Command(python, "-c", "k")
	twice := "l"
	twice = "m"
	exec.Command(twice)
	argv := []string{"n", "--flag"}
	argv = append([]string{"o", "--"}, argv...)
	r.Run(nil, []string{"q", "x"}, nil)
	s := Step{Argv: []string{other.Const, "-y"}}
	ensureTools(nil, t, "r", "s")
	want := []struct{ bin, pkg string }{{"u", "pkg-u"}}
	_ = []string{"v", "w"} // a []string that is not an argv
	exec.Command("x", "-G")
	_ = []string{"-G", "-n"}
	argv = []string{"-G", "-n"} // arguments, not a command
	_, _, _ = s, want, argv
	e.must(timeout, "y", "--flag")
	runTool(ctx, "z", "-d")
	casadm("-L") // a helper whose parameter is args: its words are arguments
}

func (e *env) must(timeout time.Duration, argv ...string) string { return "" }
func runTool(ctx context.Context, name string, args ...string) {}
func casadm(args ...string)                                     {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := commands(GoCommands(fset, []*ast.File{f}, map[string]string{"Const": "t"}))
	want := []string{"/usr/bin/j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "n", "o", "q", "r", "s", "t", "u", "x", "y", "z"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
