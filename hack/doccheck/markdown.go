package doccheck

import (
	"regexp"
	"strings"
)

// block is one ```sh block of a Markdown file.
type block struct {
	line     int    // the opening fence's line, from 1
	notRun   string // the marker's reason; "" when unmarked
	marked   bool
	commands []command
}

var (
	fence  = regexp.MustCompile("^\\s*```")
	shell  = regexp.MustCompile("^\\s*```(sh|bash|shell|console)\\s*$")
	marker = regexp.MustCompile(`^\s*<!--\s*not run:(.*?)-->\s*$`)
)

// shellBlocks reads the shell blocks of a Markdown text and the marker before each: the last
// non-blank line before the fence.
func shellBlocks(text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !fence.MatchString(lines[i]) {
			continue
		}
		isShell := shell.MatchString(lines[i])
		b := block{line: i + 1}
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if m := marker.FindStringSubmatch(lines[j]); m != nil {
				b.marked, b.notRun = true, strings.TrimSpace(m[1])
			}
			break
		}
		end := i + 1
		for end < len(lines) && !fence.MatchString(lines[end]) {
			end++
		}
		if isShell {
			for _, l := range shellLines(strings.Join(lines[i+1:min(end, len(lines))], "\n")) {
				b.commands = append(b.commands, commands(l)...)
			}
			out = append(out, b)
		}
		i = end
	}
	return out
}
