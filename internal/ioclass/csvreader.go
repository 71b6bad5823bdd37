package ioclass

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxCSVColumns and maxCSVLine are casadm's CSV reader limits; beyond them
// its read fails.
const (
	maxCSVColumns = 101
	maxCSVLine    = 8192
)

// splitCasadmCSV splits one line (without its '\n') into fields the way
// casadm's CSV reader does, so odd input gets the same fields casadm sees:
//   - commas outside double quotes separate fields;
//   - whitespace around a field is dropped (so a trailing '\r' vanishes);
//   - inside quotes, commas and spaces are kept and "" is one quote; the
//     field's text ends at the closing quote (text after it is dropped);
//   - an opening quote in the middle of unquoted text stays in the field,
//     unless whitespace precedes it, in which case the quoted part replaces
//     the text before it.
//
// It works like the C reader: on a byte buffer where separators and closing
// quotes become NULs and each field is a start offset read up to the next
// NUL. ok is false when the line has more than 101 fields (casadm's read fails).
func splitCasadmCSV(line string) (fields []string, ok bool) {
	buf := make([]byte, len(line)+1) // NUL-terminated copy
	copy(buf, line)
	starts := []int{-1}
	quoted, inToken := false, false
	spaces := 0 // whitespace run just before i, outside quotes
	i := 0
	for ; buf[i] != 0; i++ {
		n := len(starts) - 1
		ch := buf[i]
		if quoted {
			switch {
			case ch == '"' && buf[i+1] == '"':
				// Escaped quote: shift the field right over the first quote.
				if !inToken {
					starts[n], inToken = i, true
				}
				i++
				copy(buf[starts[n]+1:i+1], buf[starts[n]:i])
				starts[n]++
			case ch == '"':
				quoted, inToken = false, false
				buf[i] = 0
			case !inToken:
				starts[n], inToken = i, true
			}
			continue
		}
		switch {
		case ch == ',':
			if len(starts) == maxCSVColumns {
				return nil, false
			}
			starts = append(starts, -1)
			inToken = false
			buf[i] = 0
			clear(buf[i-spaces : i])
		case ch == '"':
			quoted, spaces = true, 0
		case !isCSpace(ch):
			if !inToken && starts[n] < 0 {
				starts[n] = i
			}
			inToken, spaces = true, 0
		default:
			inToken = false
			spaces++
		}
	}
	clear(buf[i-spaces : i])
	fields = make([]string, len(starts))
	for k, s := range starts {
		if s < 0 {
			continue // empty field
		}
		e := s
		for buf[e] != 0 {
			e++
		}
		fields[k] = string(buf[s:e])
	}
	return fields, true
}

// isCSpace is C's isspace in the "C" locale.
func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// csvLine is one line as casadm's reader returns it.
type csvLine struct {
	ok     bool   // a line was read (false at end of input)
	feof   bool   // C's feof after the read: nothing is left to read
	failed string // why casadm's read of this line fails ("" when it does not)
	fields []string
}

// fgetsLimit is where casadm's growing fgets buffer (20 bytes, doubled) holds
// 10239 characters; a line that long fails before end of file is seen.
const fgetsLimit = 10239

type lineReader struct {
	r    *bufio.Reader
	done bool
}

// next reads one line like casadm's fgets loop. A NUL byte ends the line's
// text and, because that loop then reads on to the end of the file, the
// input too.
func (lr *lineReader) next() (csvLine, error) {
	if lr.done {
		return csvLine{}, nil
	}
	raw, err := lr.r.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return csvLine{}, err
	}
	if len(raw) == 0 {
		lr.done = true
		return csvLine{}, nil
	}
	l := csvLine{ok: true}
	text, hadNL := bytes.CutSuffix(raw, []byte("\n"))
	l.feof = !hadNL
	if i := bytes.IndexByte(text, 0); i >= 0 {
		text, l.feof = text[:i], true
	}
	lr.done = l.feof
	if len(text) > maxCSVLine {
		l.failed = fmt.Sprintf("line longer than %d characters", maxCSVLine)
		l.feof = l.feof && len(text) < fgetsLimit
		return l, nil
	}
	var split bool
	if l.fields, split = splitCasadmCSV(string(text)); !split {
		l.failed = fmt.Sprintf("more than %d fields", maxCSVColumns)
	}
	return l, nil
}
