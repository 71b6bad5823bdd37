package depscan

import (
	"regexp"
	"strings"
)

// MakefileCommands returns the commands a Makefile's recipes and $(shell ...) calls run.
// Make variables defined in the file are expanded ($(GO) is go, $(CONTROLLER_GEN) a path in
// bin/), and make's own $(CURDIR) and $(MAKE); other variable references become a placeholder
// word, so they are never taken for commands.
func MakefileCommands(src string) []Use {
	src = strings.ReplaceAll(src, "\\\n", " \x00") // \x00 keeps the line count of continuations
	vars := map[string]string{"CURDIR": ".", "MAKE": "make"}
	lines := strings.Split(src, "\n")
	for _, l := range lines {
		if m := makeAssignment.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "\t") {
			vars[m[1]] = strings.TrimSpace(m[2])
		}
	}
	s := &shellScan{}
	line := 1
	for _, l := range lines {
		isRecipe := strings.HasPrefix(l, "\t")
		if isRecipe || strings.Contains(l, "$(shell ") {
			body := expandMake(l, vars, s, line, 0)
			if isRecipe {
				body = strings.TrimLeft(strings.TrimSpace(body), "@-+")
				s.scan(strings.ReplaceAll(body, "\x00", "\\\n"), line)
			}
		}
		line += 1 + strings.Count(l, "\x00")
	}
	var out []Use
	for _, u := range s.uses {
		if !s.funcs[u.Command] && !shellBuiltins[u.Command] {
			out = append(out, u)
		}
	}
	return out
}

var (
	makeAssignment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*[:?+]?=\s*(.*)$`)
	makeReference  = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\$|\$\(shell `)
)

// expandMake expands make's references in a line: $$ is the shell's $, $(NAME) the variable's
// value, $(shell CMD) is scanned as a shell command and replaced by a placeholder.
func expandMake(l string, vars map[string]string, s *shellScan, line, depth int) string {
	var b strings.Builder
	for {
		loc := makeReference.FindStringSubmatchIndex(l)
		if loc == nil {
			b.WriteString(l)
			return b.String()
		}
		b.WriteString(l[:loc[0]])
		ref := l[loc[0]:loc[1]]
		rest := l[loc[1]:]
		switch {
		case ref == "$$":
			b.WriteString("$")
		case ref == "$(shell ":
			end := matchParen(l, loc[0]+1)
			s.scan(expandMake(l[loc[1]:end], vars, s, line, depth+1), line)
			b.WriteString("MAKE_SHELL_OUTPUT")
			rest = l[end+1:]
		default:
			name := l[loc[2]:loc[3]]
			if v, ok := vars[name]; ok && depth < 10 {
				b.WriteString(expandMake(v, vars, s, line, depth+1))
			} else {
				b.WriteString("MAKE_" + name)
			}
		}
		l = rest
	}
}
