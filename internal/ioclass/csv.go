package ioclass

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Dialect says which casadm's rules ParseCSVDialect applies.
type Dialect int

const (
	// Released is Open CAS up to v26.03.2: ids 0-32.
	Released Dialect = iota
	// Master is unreleased open-cas-linux master (the casadm that produced
	// outputs/load_config_results.txt): ids 0-33, 33 reserved for "prefetch".
	Master
)

// master's prefetch class.
const (
	masterPrefetchID   = 33
	masterPrefetchName = "prefetch"
)

func (d Dialect) maxID() int {
	if d == Master {
		return masterPrefetchID
	}
	return MaxClassID
}

// casadm's messages for a header it cannot use.
const (
	headerHelp1 = "Failed to parse I/O classes configuration file header. It is either malformed or missing."
	headerHelp2 = "Please consult Admin Guide to check how columns in configuration file should be named."
)

// CSVError is a configuration file casadm refuses, with what casadm prints.
type CSVError struct {
	// Line is the 1-based line (the header is line 1); 0 when the error is
	// about the whole file.
	Line int
	// Column is the 1-based position in the file of the column at fault and
	// Title its title; 0 and "" when casadm names no column.
	Column int
	Title  string
	// Detail is the message casadm prints before Summary ("" when none).
	Detail string
	// Summary is casadm's "Cannot parse configuration file - ..." line (or
	// its whole-file message).
	Summary string
	// Reason explains errors for which casadm prints no detail.
	Reason string
	// headerHelp adds casadm's two lines about a malformed header.
	headerHelp bool
}

func (e *CSVError) Error() string {
	why := e.Detail
	if why == "" {
		why = e.Reason
	}
	if why == "" {
		return e.Summary
	}
	return strings.TrimSuffix(e.Summary, ".") + ": " + why
}

// Output is exactly what casadm prints for this error, one message a line.
func (e *CSVError) Output() string {
	var lines []string
	if e.Detail != "" {
		lines = append(lines, e.Detail)
	}
	lines = append(lines, e.Summary)
	if e.headerHelp {
		lines = append(lines, headerHelp1, headerHelp2)
	}
	return strings.Join(lines, "\n") + "\n"
}

// ParseCSV reads an IO class configuration with released casadm's rules.
func ParseCSV(r io.Reader) (Config, error) { return ParseCSVDialect(r, Released) }

// ParseCSVDialect reads an IO class configuration exactly as casadm's
// --load-config does (casadm/cas_lib.c partition_get_config and its CSV
// reader): columns matched by title in any order, fields trimmed, empty lines
// skipped, exactly 4 fields a line, fields checked in the order id, name,
// priority, allocation, casadm's messages. Rules are not checked here: like
// casadm, it leaves that to the kernel (see NewEvaluator / ParseRule).
//
// One deliberate difference: casadm accepts allocation "nan" (and then sends
// an undefined max_size); this parser refuses it.
func ParseCSVDialect(r io.Reader, d Dialect) (Config, error) {
	lr := lineReader{r: bufio.NewReader(r)}
	header, err := lr.next()
	if err != nil {
		return Config{}, err
	}
	switch {
	case !header.ok || (header.failed != "" && header.feof):
		return Config{}, &CSVError{Summary: "Empty IO Classes configuration file supplied."}
	case header.failed != "":
		return Config{}, &CSVError{Line: 1, Reason: header.failed,
			Summary: "I/O error occured while reading IO Classes configuration file supplied."}
	}
	pos, herr := parseHeader(header.fields)
	if herr != nil {
		return Config{}, herr
	}
	var cfg Config
	seen := map[int]bool{}
	for line, feof := 2, header.feof; !feof; line++ {
		l, err := lr.next()
		if err != nil {
			return Config{}, err
		}
		if !l.ok {
			break
		}
		feof = l.feof
		reason := l.failed
		if reason == "" && len(l.fields) != 4 && !(len(l.fields) == 1 && l.fields[0] == "") {
			reason = fmt.Sprintf("%d fields, want 4", len(l.fields))
		}
		if l.failed != "" && l.feof {
			break // casadm's read failed at end of file: it takes that as the end
		}
		if reason != "" {
			return Config{}, &CSVError{Line: line, Reason: reason,
				Summary: fmt.Sprintf("Cannot parse configuration file - error in line %d.", line)}
		}
		if len(l.fields) == 1 {
			continue // empty line
		}
		cl, col, detail, reason := parseClassLine(l.fields, pos, seen, d)
		if col >= 0 {
			return Config{}, &CSVError{Line: line, Column: pos[col] + 1, Title: columnTitles[col], Detail: detail, Reason: reason,
				Summary: fmt.Sprintf("Cannot parse configuration file - error in line %d in column %d (%s).", line, pos[col]+1, columnTitles[col])}
		}
		seen[cl.ID] = true
		cfg.Classes = append(cfg.Classes, cl)
	}
	if len(cfg.Classes) == 0 {
		return Config{}, &CSVError{Summary: "Empty configuration file"}
	}
	sortClasses(cfg.Classes)
	return cfg, nil
}

// The four columns, in the order casadm checks a line's fields.
const (
	fieldID = iota
	fieldName
	fieldPriority
	fieldAllocation
)

var columnTitles = [4]string{colID, colName, colPriority, colAllocation}

// parseHeader maps each column to its position. A repeated title takes the
// last position, as in casadm.
func parseHeader(fields []string) ([4]int, error) {
	pos := [4]int{-1, -1, -1, -1}
	for i, f := range fields {
		found := false
		for k, title := range columnTitles {
			if f == title {
				pos[k], found = i, true
			}
		}
		if !found {
			return pos, &CSVError{Line: 1, Column: i + 1, Title: f, headerHelp: true,
				Summary: fmt.Sprintf("Cannot parse configuration file - unknown column %q.", f)}
		}
	}
	for k, p := range pos {
		if p < 0 {
			return pos, &CSVError{Line: 1, headerHelp: true,
				Summary: fmt.Sprintf("Cannot parse configuration file - missing column %q.", columnTitles[k])}
		}
	}
	return pos, nil
}

// parseClassLine checks one data line. On error col is the failing field
// (fieldID...), detail what casadm prints, reason our explanation when
// casadm prints nothing; col is -1 on success.
func parseClassLine(fields []string, pos [4]int, seen map[int]bool, d Dialect) (cl Class, col int, detail, reason string) {
	// A repeated header title can put a column past a line's 4 fields;
	// casadm then reads past the line (undefined), this parser refuses.
	const pastLine = "the header puts this column past the line's 4 fields"
	get := func(k int) (string, bool) {
		if pos[k] >= len(fields) {
			return "", false
		}
		return fields[pos[k]], true
	}
	id, ok := get(fieldID)
	if !ok {
		return cl, fieldID, "", pastLine
	}
	if id == "" {
		return cl, fieldID, "", "empty id"
	}
	v, msg := validateNum(id, "id", uint64(d.maxID()))
	if msg != "" {
		return cl, fieldID, msg, ""
	}
	cl.ID = int(v)
	if seen[cl.ID] {
		return cl, fieldID, fmt.Sprintf("Double configuration for IO class id %d", cl.ID), ""
	}

	name, ok := get(fieldName)
	if !ok {
		return cl, fieldName, "", pastLine
	}
	if msg := checkName(name, cl.ID, d); msg != "" {
		return cl, fieldName, msg, ""
	}
	cl.Rule = name

	prio, ok := get(fieldPriority)
	if !ok {
		return cl, fieldPriority, "", pastLine
	}
	if prio != "" {
		v, msg := validateNum(prio, "prio", MaxPriority)
		if msg != "" {
			return cl, fieldPriority, msg, ""
		}
		cl.Priority = intPtr(int(v))
	}

	alloc, ok := get(fieldAllocation)
	if !ok {
		return cl, fieldAllocation, "", pastLine
	}
	if alloc == "" {
		return cl, fieldAllocation, "", "empty allocation"
	}
	if _, ok := parseAllocation(alloc); !ok {
		return cl, fieldAllocation, "", fmt.Sprintf("%q is not a number from 0 to 1 in at most %d characters", alloc, MaxAllocationLen)
	}
	// strtof skips leading spaces (they survive only inside quotes); drop
	// them so CSV() writes the same value back.
	cl.Allocation = strings.TrimLeft(alloc, " \t\n\v\f\r")
	return cl, -1, "", ""
}

// checkName applies casadm's IO class name rules; it returns casadm's message.
func checkName(name string, id int, d Dialect) string {
	if len(name) == 0 || len(name) > MaxRuleLen {
		return "Empty or too long IO class name"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == ',' || c == '"' || c < 32 || c > 126 {
			return "Only characters allowed in IO class name are low ascii characters, excluding control characters, comma and quotation mark."
		}
	}
	if id == 0 && name != UnclassifiedName {
		return "IO class 0 must have the default name 'unclassified'"
	}
	// Master reserves id 33 for prefetch; casadm's wording for these two
	// is not in the reference, so these messages are ours.
	if d == Master && id == masterPrefetchID && name != masterPrefetchName {
		return fmt.Sprintf("IO class %d must have the default name '%s'", masterPrefetchID, masterPrefetchName)
	}
	if d == Master && id != masterPrefetchID && name == masterPrefetchName {
		return fmt.Sprintf("IO class name '%s' is reserved for IO class %d", masterPrefetchName, masterPrefetchID)
	}
	return ""
}
