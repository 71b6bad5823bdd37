package doccheck

import (
	"slices"
	"strings"
)

// command is what the check compares: the tool, its subcommand (the first plain word after
// it: `install`, `devices`, a make target) and the flags given, without their values.
type command struct {
	tool, sub string
	flags     []string
}

func (c command) String() string {
	return strings.TrimSpace(strings.Join(append([]string{c.tool, c.sub}, c.flags...), " "))
}

// covers says whether running ran also runs what doc shows: same tool and subcommand, and
// every flag doc gives among ran's.
func (ran command) covers(doc command) bool {
	if ran.tool != doc.tool || ran.sub != doc.sub {
		return false
	}
	for _, f := range doc.flags {
		if !slices.Contains(ran.flags, f) {
			return false
		}
	}
	return true
}

// words splits one shell line (continuations already joined) into words, a quoted string
// being one word without its quotes, and stops at a comment.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flush := func() {
		if inWord {
			out = append(out, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !inWord:
			flush()
			return out
		case strings.ContainsRune(";|&()`", r):
			flush()
			out = append(out, string(r)) // a separator: a new command may start after it
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return out
}

// prefixes are words that may stand before a command without being it.
var prefixes = map[string]bool{"sudo": true, "exec": true, "env": true, "then": true, "do": true, "else": true, "time": true, "!": true, "{": true, "$": true}

// commands finds the checked commands in one shell line: those at a command's position.
func commands(line string) []command {
	var out []command
	w := words(line)
	start := true
	for i := 0; i < len(w); i++ {
		if len(w[i]) == 1 && strings.ContainsAny(w[i], ";|&()`") {
			start = true
			continue
		}
		if !start {
			continue
		}
		if prefixes[w[i]] || isAssignment(w[i]) {
			continue
		}
		start = false
		var tool string
		rest := w[i+1:]
		switch base := w[i][strings.LastIndex(w[i], "/")+1:]; {
		case base == "helm":
			tool = "helm"
		case base == "make":
			tool = "make"
		case base == "kubectl-prism":
			tool = "kubectl prism"
		case base == "kubectl" && len(rest) > 0 && rest[0] == "prism":
			tool, rest = "kubectl prism", rest[1:]
		default:
			continue
		}
		out = append(out, parse(tool, untilSeparator(rest)))
	}
	return out
}

func untilSeparator(w []string) []string {
	for i, s := range w {
		if len(s) == 1 && strings.ContainsAny(s, ";|&()`") {
			return w[:i]
		}
	}
	return w
}

// parse reads a tool's arguments: flags by name (before any =), the subcommand as the first
// word made only of lower-case letters, digits and dashes (a flag's value before it must not
// be such a word: `--kubeconfig /etc/k.conf upgrade`, not `--namespace ns upgrade`).
func parse(tool string, args []string) command {
	c := command{tool: tool}
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "-"):
			name, _, _ := strings.Cut(a, "=")
			if !slices.Contains(c.flags, name) {
				c.flags = append(c.flags, name)
			}
		case c.sub == "" && plainWord(a):
			c.sub = a
		}
	}
	slices.Sort(c.flags)
	return c
}

func plainWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return s != ""
}

func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// shellLines joins a script's continued lines ("\" at the end).
func shellLines(text string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if cont, ok := strings.CutSuffix(strings.TrimRight(l, " \t"), `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}
