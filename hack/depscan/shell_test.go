package depscan

import (
	"slices"
	"sort"
	"testing"
)

func commands(uses []Use) []string {
	var out []string
	for _, u := range uses {
		if !slices.Contains(out, u.Command) {
			out = append(out, u.Command)
		}
	}
	sort.Strings(out)
	return out
}

func TestShellCommands(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"pipeline and lists", "a x | b -y && c || d; e &\n", []string{"a", "b", "c", "d", "e"}},
		{"wrappers", "sudo -u root f\nenv -u X A=1 g\ntimeout -s KILL 10 h\nexec i\nxargs -n 1 j\n", []string{"f", "g", "h", "i", "j"}},
		{"assignments", "X=1 Y=$(k) l\npkgs=(m n o)\nlocal a=(p q)\n", []string{"k", "l"}},
		{"substitutions", "echo \"$(r \"$(s)\")\" `t` <(u) $((1 + 2))\n", []string{"r", "s", "t", "u"}},
		{"quoted words are arguments", "awk '{ print $1 | \"sort\" }' f | v 'w x'\n", []string{"awk", "v"}},
		{"variables are unknown", "$tool a\n\"${argv[@]}\"\n", nil},
		{"functions and builtins", "f() { g; }\nf\ncd /; echo; read -r x; printf x\n", []string{"g"}},
		{"command -v only looks up", "command -v y >/dev/null || command z\n", []string{"z"}},
		{"redirections", "a 2>&1 >/dev/null </x 9>\"$f\" <<<\"$v\"\n", []string{"a"}},
		{"heredoc bodies are data", "cat <<EOF >f\nnot a command\nEOF\nb\n", []string{"b", "cat"}},
		{"if, while, for, [[ ]]", "if ! a; then b; elif [[ -n $(c) && x == y ]]; then :; fi\nwhile read -r l; do d \"$l\"; done\nfor x in e f; do g; done\n", []string{"a", "b", "c", "d", "g"}},
		{"case patterns", "case $1 in\n  --x) h ;;\n  *) i; j ;;\nesac\nk\n", []string{"h", "i", "j", "k"}},
		{"arithmetic", "(( n > 1 )) && l\n", []string{"l"}},
		{"comments and continuations", "# m\nn \\\n  --flag # o\n", []string{"n"}},
		{"chroot runs another root's command", "chroot \"$root\" apt-get update\n", []string{"chroot"}},
		{"trap and bash -c strings", "trap 'rm -rf \"$w\"' EXIT\nbash -c 'p q'\n", []string{"bash", "p", "rm"}},
		{"subshells", "(cd d && q r)\n", []string{"q"}},
		{"arrays run as commands", "a=(env X=1 s --flag)\nlocal b=(t u)\npkgs=(v w)\n\"${a[@]}\" x\n${b[@]}\necho \"${pkgs[@]}\"\n", []string{"s", "t"}},
		{"arrays over lines, appended, behind a wrapper", "c=(y\n  --opt)\nd=(-oL \"${c[@]}\")\nd+=(--more)\nstdbuf \"${d[@]}\" --x\n", []string{"y"}},
	} {
		if got := commands(ShellCommands(c.src)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q: got %q, want %q", c.name, c.src, got, c.want)
		}
	}
}

func TestShellCommandsLines(t *testing.T) {
	uses := ShellCommands("a\n\nb \\\n  x\nc <<E\nbody\nE\nd\n")
	want := []Use{{Command: "a", Line: 1}, {Command: "b", Line: 3}, {Command: "c", Line: 5}, {Command: "d", Line: 8}}
	if !slices.Equal(uses, want) {
		t.Errorf("got %v, want %v", uses, want)
	}
}

func TestMakefileCommands(t *testing.T) {
	src := "GO ?= go\nBIN := $(CURDIR)/bin\nTOOL := $(BIN)/tool\nV ?= $(shell git describe 2>/dev/null || echo dev)\n\n" +
		"x: ## help\n\t@$(GO) build ./...\n\t$(TOOL) gen\n\t@test -z \"$$(gofmt -l .)\" || { echo; exit 1; }\n\tawk '{print}' $(MAKEFILE_LIST)\n\tfoo \\\n\t  --bar\n\t$(MAKE) --no-print-directory build\n"
	got := commands(MakefileCommands(src))
	want := []string{"./bin/tool", "awk", "foo", "git", "go", "gofmt", "make"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestShellLibraries: a script's calls of its library's functions, and the library's calls of
// a hook its scripts define, are not commands.
func TestShellLibraries(t *testing.T) {
	lib := "step() { date; }\nfailed() { on_failure; exit 1; }\n"
	script := "source /prism/lib.sh\non_failure() { lsblk; }\nstep one\npvs\n"
	if got, want := commands(ShellCommandsWith(script, ShellFunctions(lib))), []string{"lsblk", "pvs"}; !slices.Equal(got, want) {
		t.Errorf("the script runs %q, want %q", got, want)
	}
	if got, want := commands(ShellCommandsWith(lib, ShellFunctions(script))), []string{"date"}; !slices.Equal(got, want) {
		t.Errorf("the library runs %q, want %q", got, want)
	}
	if got, want := commands(ShellCommands(script)), []string{"lsblk", "pvs", "step"}; !slices.Equal(got, want) {
		t.Errorf("alone, the script runs %q, want %q", got, want)
	}
}
