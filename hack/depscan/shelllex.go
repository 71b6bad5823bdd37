package depscan

import "strings"

// lex splits shell source into words and operators. Quotes are removed from literal words;
// a word with an expansion ($x, ${x}, $(...)) is not literal. Command substitutions, process
// substitutions and backquotes are scanned as scripts of their own as they are met.
// Redirections (with their targets), comments and here-document bodies are dropped.
func (s *shellScan) lex(src string, line int) []shToken {
	var toks []shToken
	var heredocs []heredoc
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		switch {
		case c == '\\' && i+1 < n && src[i+1] == '\n':
			i += 2
			line++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\n':
			toks = append(toks, shToken{text: "\n", op: true, line: line})
			i++
			line++
			if len(heredocs) > 0 {
				i, line = skipHeredocs(src, i, line, heredocs)
				heredocs = nil
			}
		case c == '#':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '(' && i+1 < n && src[i+1] == '(':
			// (( arithmetic )): no commands.
			i = matchParen(src, i+1) + 1
			i = skipPast(src, i, ')')
		case c == '<' || c == '>' || (c == '&' && i+1 < n && src[i+1] == '>'):
			if i+1 < n && src[i+1] == '(' && c != '&' {
				// <(cmd) and >(cmd): process substitution.
				end := matchParen(src, i+1)
				s.scan(src[i+2:end], line)
				toks = append(toks, shToken{text: "/dev/fd/N", line: line})
				i = end + 1
				continue
			}
			var hd *heredoc
			i, line, hd = s.redirection(src, i, line)
			if hd != nil {
				heredocs = append(heredocs, *hd)
			}
		case strings.IndexByte(";&|()", c) >= 0:
			op := string(c)
			for _, long := range []string{";;&", ";;", ";&", "&&", "||", "|&"} {
				if strings.HasPrefix(src[i:], long) {
					op = long
					break
				}
			}
			toks = append(toks, shToken{text: op, op: true, line: line})
			i += len(op)
		default:
			var t shToken
			t, i, line = s.word(src, i, line)
			if t.literal && i < n && (src[i] == '<' || src[i] == '>') && isDigits(t.text) {
				continue // 2>&1: the fd number belongs to the redirection that follows
			}
			toks = append(toks, t)
		}
	}
	return toks
}

type heredoc struct {
	delim     string
	stripTabs bool
}

// redirection consumes an operator at src[i] and its target word.
func (s *shellScan) redirection(src string, i, line int) (int, int, *heredoc) {
	j := i
	for j < len(src) && strings.IndexByte("<>&|-", src[j]) >= 0 {
		if src[j] == '-' && !strings.HasPrefix(src[i:], "<<-") {
			break
		}
		j++
	}
	op := src[i:j]
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if strings.HasSuffix(op, "&") && j < len(src) && (src[j] == '-' || isDigits(src[j:j+1])) {
		return j + 1, line, nil // >&2, <&-
	}
	t, j, line := s.word(src, j, line)
	if strings.HasPrefix(op, "<<") && !strings.HasPrefix(op, "<<<") {
		return j, line, &heredoc{delim: t.text, stripTabs: strings.HasPrefix(op, "<<-")}
	}
	return j, line, nil
}

// skipHeredocs skips the bodies of the here-documents opened on the line that just ended.
func skipHeredocs(src string, i, line int, docs []heredoc) (int, int) {
	for _, d := range docs {
		for i < len(src) {
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			l := src[i : i+end]
			i += end + 1
			line++
			if d.stripTabs {
				l = strings.TrimLeft(l, "\t")
			}
			if l == d.delim {
				break
			}
		}
	}
	return i, line
}

// word reads one word at src[i]: its text without quotes, and whether it is literal.
func (s *shellScan) word(src string, i, line int) (shToken, int, int) {
	var b strings.Builder
	t := shToken{literal: true, line: line}
	n := len(src)
	start := i
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || strings.IndexByte(";&|<>", c) >= 0:
			t.text = b.String()
			t.raw = src[start:i]
			return t, i, line
		case c == '(' || c == ')':
			// NAME=( ... ): an array assignment is one word.
			if c == '(' && assignment.MatchString(b.String()) && strings.HasSuffix(b.String(), "=") {
				end := matchParen(src, i)
				t.literal = false
				t.array = src[i+1 : end]
				line += strings.Count(src[i:end], "\n")
				i = end + 1
				continue
			}
			t.text = b.String()
			t.raw = src[start:i]
			return t, i, line
		case c == '\\' && i+1 < n:
			if src[i+1] == '\n' {
				line++
			} else {
				b.WriteByte(src[i+1])
			}
			i += 2
		case c == '\'':
			end := strings.IndexByte(src[i+1:], '\'')
			if end < 0 {
				end = n - i - 1
			}
			b.WriteString(src[i+1 : i+1+end])
			line += strings.Count(src[i+1:i+1+end], "\n")
			i += end + 2
		case c == '"':
			i++
			for i < n && src[i] != '"' {
				switch {
				case src[i] == '\\' && i+1 < n:
					b.WriteByte(src[i+1])
					i += 2
				case src[i] == '$' || src[i] == '`':
					t.literal = false
					i, line = s.expansion(src, i, line)
				default:
					if src[i] == '\n' {
						line++
					}
					b.WriteByte(src[i])
					i++
				}
			}
			i++
		case c == '$' || c == '`':
			t.literal = false
			i, line = s.expansion(src, i, line)
		default:
			b.WriteByte(c)
			i++
		}
	}
	t.text = b.String()
	t.raw = src[start:i]
	return t, i, line
}

// expansion skips $name, ${...}, $((...)), $(...) or `...` at src[i], scanning the commands of
// the last two.
func (s *shellScan) expansion(src string, i, line int) (int, int) {
	n := len(src)
	if src[i] == '`' {
		end := strings.IndexByte(src[i+1:], '`')
		if end < 0 {
			end = n - i - 1
		}
		s.scan(src[i+1:i+1+end], line)
		return i + end + 2, line + strings.Count(src[i:i+1+end], "\n")
	}
	if i+1 >= n {
		return n, line
	}
	switch src[i+1] {
	case '(':
		end := matchParen(src, i+1)
		if strings.HasPrefix(src[i+1:], "((") {
			return end + 1, line
		}
		s.scan(src[i+2:end], line)
		return end + 1, line + strings.Count(src[i:end], "\n")
	case '{':
		end := i + 2
		for depth := 1; end < n && depth > 0; end++ {
			switch src[end] {
			case '{':
				depth++
			case '}':
				depth--
			}
		}
		return end, line
	}
	if strings.IndexByte("@*#?$!-0123456789", src[i+1]) >= 0 {
		return i + 2, line // $@, $1, $?
	}
	j := i + 1
	for j < n && isNameByte(src[j]) {
		j++
	}
	return j, line
}

// matchParen returns the index of the ')' that closes the '(' at src[open], skipping quotes.
func matchParen(src string, open int) int {
	depth := 0
	for i := open; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '\'':
			if end := strings.IndexByte(src[i+1:], '\''); end >= 0 {
				i += end + 1
			}
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(src) - 1
}

func skipPast(src string, i int, c byte) int {
	if i < len(src) && src[i] == c {
		return i + 1
	}
	return i
}

func isNameByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
