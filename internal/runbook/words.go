package runbook

import (
	"fmt"
	"strings"
)

// parseBlock reads the commands of a shell block whose first content line is line+1.
func parseBlock(line int, body []string) (Block, error) {
	b := Block{Line: line}
	var cur strings.Builder
	start := 0
	for i, l := range body {
		n := line + 1 + i
		if cur.Len() == 0 {
			start = n
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(l, " \t"), `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(l)
		text := cur.String()
		cur.Reset()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		words, comment, err := splitWords(text)
		if err != nil {
			return b, fmt.Errorf("line %d: %w", start, err)
		}
		b.Commands = append(b.Commands, Command{Line: start, Words: words, Comment: comment})
	}
	if cur.Len() > 0 {
		return b, fmt.Errorf("line %d: the block ends in a continued line", start)
	}
	return b, nil
}

// splitWords splits one command line into words (a quoted string is one word without its
// quotes) and its trailing comment. It refuses what only a shell would do: pipes, lists,
// redirections, substitutions, globs and variables other than placeholders.
func splitWords(line string) ([]string, string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for i, r := range line {
		switch {
		case quote == '\'':
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"' && r == '"':
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, inWord = r, true
		case quote == 0 && (r == ' ' || r == '\t'):
			if inWord {
				out = append(out, cur.String())
			}
			cur.Reset()
			inWord = false
		case quote == 0 && r == '#' && !inWord:
			if len(out) == 0 {
				return nil, "", fmt.Errorf("a comment where a command should be")
			}
			return out, strings.TrimSpace(line[i+1:]), nil
		case strings.ContainsRune(shellSyntax, r) && !placeholderBrace(line, i):
			if quote == 0 || r == '`' || r == '\\' {
				return nil, "", fmt.Errorf("%q: %q is shell syntax; a runbook command is one program and its arguments", line, r)
			}
			cur.WriteRune(r)
		case r == '$':
			if !placeholderUse.MatchString(line[i:]) || placeholderUse.FindStringIndex(line[i:])[0] != 0 {
				return nil, "", fmt.Errorf("%q: a $ that is not a placeholder ($NAME or ${NAME}, upper case)", line)
			}
			cur.WriteRune(r)
			inWord = true
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, "", fmt.Errorf("%q: an unterminated %c quote", line, quote)
	}
	if inWord {
		out = append(out, cur.String())
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("an empty command")
	}
	return out, "", nil
}

// shellSyntax are the characters a shell would act on (outside single quotes; in double quotes
// only ` and \ still act, but a runbook needs neither).
const shellSyntax = ";|&<>()`*?[]{}\\!~"

// placeholderBrace says whether the brace at i belongs to a ${NAME} placeholder.
func placeholderBrace(line string, i int) bool {
	for _, loc := range placeholderUse.FindAllStringIndex(line, -1) {
		if line[loc[0]+1] == '{' && i >= loc[0] && i < loc[1] {
			return true
		}
	}
	return false
}
