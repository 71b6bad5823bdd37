package casadm

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ParseError is output a parser cannot use; it names where.
type ParseError struct {
	// Line is the 1-based line of the output (0: the output as a whole).
	Line int
	// Column is the 1-based field and Title its column title (0, "" when
	// the error is about the whole line).
	Column int
	Title  string
	Msg    string
}

func (e *ParseError) Error() string {
	switch {
	case e.Line == 0:
		return e.Msg
	case e.Column == 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	default:
		return fmt.Sprintf("line %d, column %d (%s): %s", e.Line, e.Column, e.Title, e.Msg)
	}
}

// table is a CSV output: a header and rows of the same width.
type table struct {
	header []string
	index  map[string]int // title -> position
	rows   []row
}

type row struct {
	line   int
	fields []string
}

// maxOutput bounds what a parser reads; casadm's biggest output (stats of
// 34 IO classes) is about 20 KiB.
const maxOutput = 16 << 20

// readTable reads casadm's raw CSV: the first non-blank line is the header,
// every other non-blank line a row with as many fields. CRLF is accepted.
func readTable(r io.Reader) (*table, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxOutput))
	sc.Buffer(make([]byte, 64<<10), maxOutput)
	t := &table{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields, col, err := splitCSV(line)
		if err != nil {
			return nil, &ParseError{Line: n, Column: col, Title: t.title(col), Msg: err.Error()}
		}
		if t.header == nil {
			if err := t.setHeader(n, fields); err != nil {
				return nil, err
			}
			continue
		}
		if len(fields) != len(t.header) {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("%d fields, the header has %d", len(fields), len(t.header))}
		}
		t.rows = append(t.rows, row{n, fields})
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{Msg: err.Error()}
	}
	if t.header == nil {
		return nil, &ParseError{Msg: "empty output: no header"}
	}
	return t, nil
}

func (t *table) setHeader(line int, fields []string) error {
	t.header, t.index = fields, make(map[string]int, len(fields))
	for i, title := range fields {
		if title == "" {
			return &ParseError{Line: line, Column: i + 1, Msg: "empty column title"}
		}
		if _, dup := t.index[title]; dup {
			return &ParseError{Line: line, Column: i + 1, Title: title, Msg: "column appears twice"}
		}
		t.index[title] = i
	}
	return nil
}

func (t *table) title(col int) string {
	if col < 1 || col > len(t.header) {
		return ""
	}
	return t.header[col-1]
}

// require checks the header has every title.
func (t *table) require(titles ...string) error {
	for _, title := range titles {
		if _, ok := t.index[title]; !ok {
			return &ParseError{Line: 1, Msg: fmt.Sprintf("missing column %q", title)}
		}
	}
	return nil
}

// get returns a row's field by title.
func (t *table) get(r row, title string) string { return r.fields[t.index[title]] }

// fieldErr names a row's field by title.
func (t *table) fieldErr(r row, title, format string, args ...any) error {
	return &ParseError{Line: r.line, Column: t.index[title] + 1, Title: title, Msg: fmt.Sprintf(format, args...)}
}

// splitCSV splits one line of casadm's CSV. casadm quotes a value only when
// it holds a comma; "" inside quotes is a quote. On error col is the 1-based
// field at fault.
func splitCSV(line string) (fields []string, col int, err error) {
	for {
		col++
		if !strings.HasPrefix(line, `"`) {
			f, rest, more := strings.Cut(line, ",")
			if strings.Contains(f, `"`) {
				return nil, col, fmt.Errorf("quote inside an unquoted value %q", f)
			}
			fields = append(fields, f)
			if !more {
				return fields, 0, nil
			}
			line = rest
			continue
		}
		var b strings.Builder
		i := 1
		for {
			j := strings.IndexByte(line[i:], '"')
			if j < 0 {
				return nil, col, fmt.Errorf("unterminated quote")
			}
			b.WriteString(line[i : i+j])
			i += j + 1
			if i < len(line) && line[i] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			break
		}
		fields = append(fields, b.String())
		switch {
		case i == len(line):
			return fields, 0, nil
		case line[i] != ',':
			return nil, col, fmt.Errorf("text after a closing quote")
		}
		line = line[i+1:]
	}
}

// joinCSV writes fields the way casadm does: quoted only when needed.
func joinCSV(fields ...string) string {
	out := make([]string, len(fields))
	for i, f := range fields {
		if strings.ContainsAny(f, ",\"\r\n") || strings.TrimSpace(f) != f {
			f = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
		}
		out[i] = f
	}
	return strings.Join(out, ",")
}

// splitTitle splits "Occupancy [4KiB Blocks]" into name and unit.
func splitTitle(title string) (name, unit string) {
	if strings.HasSuffix(title, "]") {
		if i := strings.LastIndex(title, " ["); i >= 0 {
			return title[:i], title[i+2 : len(title)-1]
		}
	}
	return title, ""
}
