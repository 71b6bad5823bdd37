package runbook

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Runbook is one parsed runbook.
type Runbook struct {
	Title        string
	Placeholders []Placeholder
	Steps        []Step
}

// Placeholder is one declared name and what it stands for.
type Placeholder struct {
	Name    string // without the $
	Meaning string
	Line    int
}

// Step is one numbered item of the runbook.
type Step struct {
	Number int
	Line   int
	// Title is the step's first line, without its number.
	Title  string
	Blocks []Block
}

// Block is one fenced shell block of a step.
type Block struct {
	Line int // the opening fence's line, from 1
	// NotRun is the reason of a `<!-- not run: REASON -->` marker before the block; "" when
	// the block is meant to be run by a drill.
	NotRun string
	// NotRunBy are the reasons of `<!-- not run by DRILL: REASON -->` markers before the block,
	// by drill (a test package's path, such as test/ceph): that drill does not run the block,
	// the others do.
	NotRunBy map[string]string
	Commands []Command
}

// SkippedBy is why the drill does not run the block: the reason of a marker for every drill or
// for that one; "" when the drill runs it.
func (b Block) SkippedBy(drill string) string {
	return cmpOr(b.NotRun, b.NotRunBy[drill])
}

// Command is one command of a block.
type Command struct {
	Line int
	// Words are the command's words, quotes removed, placeholders not yet substituted.
	Words   []string
	Comment string
}

// Commands are all commands of the step's blocks, in order.
func (s Step) Commands() []Command {
	var out []Command
	for _, b := range s.Blocks {
		out = append(out, b.Commands...)
	}
	return out
}

// Blocks are the shell blocks of every step, in order.
func (rb Runbook) Blocks() []Block {
	var out []Block
	for _, s := range rb.Steps {
		out = append(out, s.Blocks...)
	}
	return out
}

// String is the command as the runbook shows it (quoting aside).
func (c Command) String() string { return strings.Join(c.Words, " ") }

var (
	titleLine     = regexp.MustCompile(`^#\s+(.+?)\s*$`)
	heading       = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*$`)
	stepLine      = regexp.MustCompile(`^(\d+)\.\s+(.*)$`)
	fenceLine     = regexp.MustCompile("^\\s*```")
	shellFence    = regexp.MustCompile("^\\s*```(sh|bash|shell)\\s*$")
	notRunMarker  = regexp.MustCompile(`^\s*<!--\s*not run(?: by ([A-Za-z0-9_./-]+))?:(.*?)-->\s*$`)
	placeholderIt = regexp.MustCompile("^\\s*[-*]\\s+`\\$([A-Z][A-Z0-9_]*)`\\s*:\\s*(.*)$")
	// placeholderUse finds $NAME and ${NAME}; any other $ is refused in a command.
	placeholderUse = regexp.MustCompile(`\$(?:\{([A-Z][A-Z0-9_]*)\}|([A-Z][A-Z0-9_]*))`)
)

// placeholdersHeading is the section that declares the placeholders.
const placeholdersHeading = "Placeholders"

// Parse reads a runbook's Markdown.
func Parse(text string) (Runbook, error) {
	var rb Runbook
	lines := strings.Split(text, "\n")
	declared := map[string]int{}
	section := ""
	var markers []marker
	for i := 0; i < len(lines); i++ {
		line, n := lines[i], i+1
		if fenceLine.MatchString(line) {
			end := i + 1
			for end < len(lines) && !fenceLine.MatchString(lines[end]) {
				end++
			}
			if end == len(lines) {
				return rb, fmt.Errorf("line %d: the fenced block is never closed", n)
			}
			if shellFence.MatchString(line) {
				if len(rb.Steps) == 0 {
					return rb, fmt.Errorf("line %d: a shell block outside a numbered step", n)
				}
				b, err := parseBlock(n, lines[i+1:end])
				if err != nil {
					return rb, err
				}
				if err := b.mark(markers); err != nil {
					return rb, err
				}
				s := &rb.Steps[len(rb.Steps)-1]
				s.Blocks = append(s.Blocks, b)
			}
			markers, i = nil, end
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if m := notRunMarker.FindStringSubmatch(line); m != nil {
			markers = append(markers, marker{line: n, drill: m[1], reason: strings.TrimSpace(m[2])})
			continue
		}
		if len(markers) > 0 {
			return rb, fmt.Errorf("line %d: a not-run marker must stand right before a shell block", markers[len(markers)-1].line)
		}
		if m := titleLine.FindStringSubmatch(line); m != nil && rb.Title == "" {
			rb.Title = m[1]
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			section = m[1]
			continue
		}
		if section == placeholdersHeading {
			if m := placeholderIt.FindStringSubmatch(line); m != nil {
				if at, dup := declared[m[1]]; dup {
					return rb, fmt.Errorf("line %d: $%s is declared twice (first on line %d)", n, m[1], at)
				}
				if strings.TrimSpace(m[2]) == "" {
					return rb, fmt.Errorf("line %d: $%s is declared without a meaning", n, m[1])
				}
				declared[m[1]] = n
				rb.Placeholders = append(rb.Placeholders, Placeholder{Name: m[1], Meaning: strings.TrimSpace(m[2]), Line: n})
			}
			continue
		}
		if m := stepLine.FindStringSubmatch(line); m != nil {
			num, err := strconv.Atoi(m[1])
			if err != nil || num != len(rb.Steps)+1 {
				return rb, fmt.Errorf("line %d: step %s follows step %d; steps are numbered 1, 2, ... in order", n, m[1], len(rb.Steps))
			}
			rb.Steps = append(rb.Steps, Step{Number: num, Line: n, Title: strings.TrimSpace(m[2])})
		}
	}
	if len(markers) > 0 {
		return rb, fmt.Errorf("line %d: a not-run marker at the end stands before no shell block", markers[0].line)
	}
	return rb, checkPlaceholders(rb, declared)
}

// marker is one `<!-- not run[ by DRILL]: REASON -->` line.
type marker struct {
	line          int
	drill, reason string
}

// mark applies the markers that stand before the block.
func (b *Block) mark(markers []marker) error {
	for _, m := range markers {
		switch {
		case m.reason == "":
			return fmt.Errorf("line %d: the not-run marker gives no reason", m.line)
		case m.drill == "" && b.NotRun != "":
			return fmt.Errorf("line %d: a second not-run marker for every drill", m.line)
		case m.drill == "":
			b.NotRun = m.reason
		case b.NotRunBy[m.drill] != "":
			return fmt.Errorf("line %d: a second not-run marker for %s", m.line, m.drill)
		default:
			if b.NotRunBy == nil {
				b.NotRunBy = map[string]string{}
			}
			b.NotRunBy[m.drill] = m.reason
		}
	}
	return nil
}

// checkPlaceholders refuses a placeholder used but not declared, and one declared but not used.
func checkPlaceholders(rb Runbook, declared map[string]int) error {
	used := map[string]bool{}
	for _, s := range rb.Steps {
		for _, c := range s.Commands() {
			for _, name := range c.Placeholders() {
				if _, ok := declared[name]; !ok {
					return fmt.Errorf("line %d: $%s is not declared under %q", c.Line, name, "## "+placeholdersHeading)
				}
				used[name] = true
			}
		}
	}
	for _, p := range rb.Placeholders {
		if !used[p.Name] {
			return fmt.Errorf("line %d: $%s is declared but no command uses it", p.Line, p.Name)
		}
	}
	return nil
}

// Placeholders are the names the command uses, in order of first use.
func (c Command) Placeholders() []string {
	var out []string
	for _, w := range c.Words {
		for _, m := range placeholderUse.FindAllStringSubmatch(w, -1) {
			name := m[1] + m[2]
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// Argv substitutes values into the command's words. It refuses a placeholder without a value.
func (c Command) Argv(values map[string]string) ([]string, error) {
	out := make([]string, 0, len(c.Words))
	for _, w := range c.Words {
		var missing string
		s := placeholderUse.ReplaceAllStringFunc(w, func(m string) string {
			name := strings.Trim(m, "${}")
			v, ok := values[name]
			if !ok || v == "" {
				missing = cmpOr(missing, name)
			}
			return v
		})
		if missing != "" {
			return nil, fmt.Errorf("line %d: %s: no value for $%s", c.Line, c.String(), missing)
		}
		out = append(out, s)
	}
	return out, nil
}

// CheckValues refuses a value for a name the runbook does not declare.
func (rb Runbook) CheckValues(values map[string]string) error {
	for name := range values {
		if !slices.ContainsFunc(rb.Placeholders, func(p Placeholder) bool { return p.Name == name }) {
			return fmt.Errorf("a value for $%s, which the runbook does not declare", name)
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
