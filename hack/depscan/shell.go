package depscan

import (
	"regexp"
	"strings"
)

// ShellCommands returns the commands a shell script runs: the first word of each simple
// command, after assignments and wrappers (sudo, env, exec, timeout, xargs...), including
// those inside $(...), `...`, <(...), trap strings and `bash -c` strings. Words that are not
// literal ("$tool", "${a[@]}") are skipped: what they run is not known without running the
// script. Functions the script defines and shell builtins are not reported.
func ShellCommands(src string) []Use { return ShellCommandsWith(src, nil) }

// ShellCommandsWith is ShellCommands for a script that also has the functions named in
// defined: those of a library it sources, or the hooks its scripts define for a library.
func ShellCommandsWith(src string, defined map[string]bool) []Use {
	s := &shellScan{}
	s.scan(src, 1)
	var out []Use
	for _, u := range s.uses {
		if !s.funcs[u.Command] && !defined[u.Command] && !shellBuiltins[u.Command] {
			out = append(out, u)
		}
	}
	return out
}

// ShellFunctions are the functions a script defines.
func ShellFunctions(src string) map[string]bool {
	s := &shellScan{}
	s.scan(src, 1)
	return s.funcs
}

// Use is one command found at a line of a file.
type Use struct {
	Command string
	File    string // set for Go files; a script's uses are of that script
	Line    int
}

var shellBuiltins = set(":", ".", "[", "[[", "alias", "break", "builtin", "cd", "command", "compgen", "continue",
	"declare", "disown", "echo", "eval", "exit", "export", "false", "getopts", "hash", "jobs", "kill",
	"let", "local", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly",
	"return", "set", "shift", "shopt", "source", "test", "trap", "true", "type", "ulimit", "umask",
	"unset", "wait")

var shellKeywords = set("if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!",
	"{", "}", "time", "esac")

// wrappers run their arguments as a command; the value is how many words of their own
// (after options) they take first.
var wrappers = map[string]int{"sudo": 0, "exec": 0, "nohup": 0, "nice": 0, "env": 0, "timeout": 1,
	"xargs": 0, "setsid": 0, "stdbuf": 0, "ionice": 0}

// wrapperValueOptions are the wrappers' one-letter options that take the next word as value.
var wrapperValueOptions = map[string]string{"sudo": "ugCDhprT", "env": "uCS", "timeout": "sk",
	"xargs": "IndPLsaE", "nice": "n", "ionice": "cnp", "exec": "a"}

func set(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

type shellScan struct {
	uses   []Use
	funcs  map[string]bool
	arrays map[string]string // NAME=( ... ) assignments, for "${NAME[@]}" run as a command
}

// shToken is a word (literal says whether its text is known) or an operator.
type shToken struct {
	text    string
	literal bool
	op      bool
	line    int
	raw     string // the word as written
	array   string // NAME=( ... ): what the parentheses hold
}

func (s *shellScan) scan(src string, line int) {
	if s.funcs == nil {
		s.funcs, s.arrays = map[string]bool{}, map[string]string{}
	}
	toks := s.lex(src, line)
	s.parse(toks)
}

var (
	assignment     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=`)
	arrayExpansion = regexp.MustCompile(`^"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}"?$`)
)

// parse walks the tokens and records the command word of each simple command.
func (s *shellScan) parse(toks []shToken) {
	atStart := true
	casePattern := false
	skipTo := "" // skip words until this one: "in" (case), "do" (for), "]]"
	wrapper := ""
	wrapperArgs := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if skipTo != "" {
			if !t.op && t.text == skipTo {
				if skipTo == "in" {
					casePattern = true
				}
				skipTo = ""
				atStart = true
			}
			continue
		}
		if t.op {
			switch t.text {
			case ";;", ";&", ";;&":
				casePattern = true
			case ")":
				if casePattern {
					casePattern = false
				}
			}
			atStart, wrapper = true, ""
			continue
		}
		if t.array != "" {
			// Newlines inside ( ) only separate elements; NAME+=( ) appends.
			name, elems := strings.TrimSuffix(strings.SplitN(t.text, "=", 2)[0], "+"), strings.ReplaceAll(t.array, "\n", " ")
			if strings.Contains(t.text, "+=") {
				elems = s.arrays[name] + " " + elems
			}
			s.arrays[name] = elems
		}
		if casePattern {
			if t.text == "esac" {
				casePattern = false
			}
			continue
		}
		if !atStart {
			continue
		}
		if wrapper != "" {
			if strings.HasPrefix(t.text, "-") || (wrapper == "env" && assignment.MatchString(t.text)) {
				if len(t.text) == 2 && strings.Contains(wrapperValueOptions[wrapper], t.text[1:]) {
					i++ // the option's value
				}
				continue
			}
			if wrapperArgs > 0 {
				wrapperArgs--
				continue
			}
			wrapper = ""
		}
		switch {
		case shellKeywords[t.text]:
			continue
		case t.text == "case":
			skipTo = "in"
			continue
		case t.text == "for" || t.text == "select":
			skipTo = "do"
			continue
		case t.text == "[[":
			skipTo = "]]"
			continue
		case t.text == "function" && i+1 < len(toks):
			s.funcs[toks[i+1].text] = true
			i++
			continue
		case i+2 < len(toks) && toks[i+1].op && toks[i+1].text == "(" && toks[i+2].op && toks[i+2].text == ")":
			s.funcs[t.text] = true
			i += 2
			continue
		case assignment.MatchString(t.text):
			continue
		case t.literal && strings.HasPrefix(t.text, "-"):
			continue // a wrapper's option that came out of an array: stdbuf "${args[@]}" with args=(-oL ...)
		}
		if n, ok := wrappers[t.text]; ok && t.literal {
			wrapper, wrapperArgs = t.text, n
			continue
		}
		atStart = false
		if !t.literal {
			// "${cmd[@]}" runs what the array NAME=(...) holds: its first word is the command.
			if m := arrayExpansion.FindStringSubmatch(t.raw); m != nil && s.arrays[m[1]] != "" {
				s.scan(s.arrays[m[1]], t.line)
			}
			continue
		}
		switch t.text {
		case "command":
			// command -v X only looks X up; command X runs it.
			if i+1 < len(toks) && !toks[i+1].op && strings.HasPrefix(toks[i+1].text, "-") {
				continue
			}
			atStart = true
			continue
		case "chroot":
			// chroot DIR CMD runs CMD from another root's packages: not this machine's.
			s.uses = append(s.uses, Use{Command: t.text, Line: t.line})
			for i+1 < len(toks) && !toks[i+1].op {
				i++
			}
			continue
		case "trap":
			if i+1 < len(toks) && toks[i+1].literal {
				s.scan(toks[i+1].text, toks[i+1].line)
			}
		case "bash", "sh":
			if i+2 < len(toks) && toks[i+1].text == "-c" && toks[i+2].literal {
				s.scan(toks[i+2].text, toks[i+2].line)
			}
		}
		s.uses = append(s.uses, Use{Command: t.text, Line: t.line})
	}
}
