package drivedb

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fileName prefixes every parse error so it points at the file to fix.
const fileName = "drives.csv"

// Column names. All but colNotes are required.
const (
	colPattern  = "model_pattern"
	colVendor   = "vendor"
	colFamily   = "family"
	colMedia    = "media"
	colTier     = "tier"
	colCapacity = "capacity_bytes"
	colDWPD     = "rated_dwpd"
	colTBW      = "rated_tbw_tb"
	colWarranty = "warranty_years"
	colIU       = "indirection_unit_bytes"
	colSource   = "source"
	colNotes    = "notes"
)

// Sanity limits for field values.
const (
	minLiterals  = 4   // a pattern with fewer fixed characters would match far too much
	maxPattern   = 128 // patterns are part numbers, not prose
	maxWarranty  = 100
	minIUBytes   = 512
	maxDecimalSz = 32
)

var requiredColumns = []string{
	colPattern, colVendor, colFamily, colMedia, colTier, colCapacity,
	colDWPD, colTBW, colWarranty, colIU, colSource,
}

// ParseError locates a problem in the database file.
type ParseError struct {
	Line   int
	Column string // empty when the problem is the whole line
	Msg    string
}

func (e *ParseError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("%s: %s", fileName, e.Msg)
	}
	if e.Column == "" {
		return fmt.Sprintf("%s line %d: %s", fileName, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s line %d, column %q: %s", fileName, e.Line, e.Column, e.Msg)
}

// Parse reads a drive database in the drives.csv format: a header row naming
// the columns (any order), then one row per drive family or capacity SKU.
// Lines starting with '#' are comments. Every row is validated; the first
// problem is returned as a *ParseError naming the line and column.
func Parse(r io.Reader) (*DB, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &ParseError{Line: 1, Msg: "no header row"}
	}
	if err != nil {
		return nil, csvError(err)
	}
	headerLine, _ := cr.FieldPos(0)
	index, err := columnIndex(header, headerLine)
	if err != nil {
		return nil, err
	}

	db := &DB{}
	type key struct {
		pattern  string
		capacity uint64
	}
	seen := map[key]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return db, nil
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		f := fields{rec: rec, index: index, line: line}
		e, err := f.entry()
		if err != nil {
			return nil, err
		}
		glob := []rune(normalize(e.ModelPattern))
		k := key{string(glob), e.CapacityBytes}
		if prev, dup := seen[k]; dup {
			return nil, f.errorf(colPattern, "%q with capacity_bytes %d is already defined on line %d",
				e.ModelPattern, e.CapacityBytes, prev)
		}
		seen[k] = line
		lit, wild := globStats(glob)
		db.rows = append(db.rows, row{Entry: e, glob: glob, literals: lit, wildcards: wild})
	}
}

// csvError turns an encoding/csv error into a ParseError with its line.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{Line: pe.Line, Msg: pe.Err.Error()}
	}
	return &ParseError{Line: 0, Msg: err.Error()}
}

// columnIndex maps column names to positions; unknown or duplicate names and
// missing required ones are errors so a typo cannot silently drop data.
func columnIndex(header []string, line int) (map[string]int, error) {
	known := map[string]bool{colNotes: true}
	for _, c := range requiredColumns {
		known[c] = true
	}
	index := map[string]int{}
	for i, name := range header {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\uFEFF")) // tolerate a spreadsheet BOM
		if !known[name] {
			return nil, &ParseError{Line: line, Column: name, Msg: "unknown column"}
		}
		if _, dup := index[name]; dup {
			return nil, &ParseError{Line: line, Column: name, Msg: "column appears twice"}
		}
		index[name] = i
	}
	for _, c := range requiredColumns {
		if _, ok := index[c]; !ok {
			return nil, &ParseError{Line: line, Column: c, Msg: "required column is missing from the header"}
		}
	}
	return index, nil
}

// fields reads one record by column name.
type fields struct {
	rec   []string
	index map[string]int
	line  int
}

func (f fields) get(col string) string {
	i, ok := f.index[col]
	if !ok || i >= len(f.rec) {
		return ""
	}
	return strings.TrimSpace(f.rec[i])
}

func (f fields) errorf(col, format string, args ...any) error {
	return &ParseError{Line: f.line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

func (f fields) entry() (Entry, error) {
	e := Entry{
		ModelPattern: f.get(colPattern),
		Vendor:       f.get(colVendor),
		Family:       f.get(colFamily),
		Media:        Media(f.get(colMedia)),
		Tier:         Tier(f.get(colTier)),
		Source:       f.get(colSource),
		Notes:        f.get(colNotes),
		Line:         f.line,
	}
	if err := f.checkPattern(e.ModelPattern); err != nil {
		return e, err
	}
	for _, c := range []string{colVendor, colFamily} {
		if err := f.checkText(c, f.get(c)); err != nil {
			return e, err
		}
	}
	want, ok := tierOf[e.Media]
	if !ok {
		return e, f.errorf(colMedia, "%q is not one of 3DXPoint, SLC, QLC, TLC", string(e.Media))
	}
	switch e.Tier {
	case TierFast, TierCapacity, TierOther:
	default:
		return e, f.errorf(colTier, "%q is not one of Fast, Capacity, Other", string(e.Tier))
	}
	if e.Tier != want {
		return e, f.errorf(colTier, "%q does not fit media %q (want %q)", string(e.Tier), string(e.Media), string(want))
	}
	var err error
	if e.CapacityBytes, err = f.uint(colCapacity, 64); err != nil {
		return e, err
	}
	if e.RatedDWPD, err = f.decimal(colDWPD); err != nil {
		return e, err
	}
	if e.RatedTBW, err = f.decimal(colTBW); err != nil {
		return e, err
	}
	w, err := f.uint(colWarranty, 64)
	if err != nil {
		return e, err
	}
	if w > maxWarranty {
		return e, f.errorf(colWarranty, "%d years is not a plausible warranty", w)
	}
	e.WarrantyYears = int(w)
	iu, err := f.uint(colIU, 32)
	if err != nil {
		return e, err
	}
	if iu != 0 && (iu < minIUBytes || iu&(iu-1) != 0) {
		return e, f.errorf(colIU, "%d is not a power of two of at least %d bytes", iu, minIUBytes)
	}
	e.IndirectionUnitBytes = uint32(iu)
	if err := f.checkSource(e.Source); err != nil {
		return e, err
	}
	return e, f.checkText(colNotes, e.Notes)
}

func (f fields) checkPattern(p string) error {
	if err := f.checkText(colPattern, p); err != nil {
		return err
	}
	if len(p) > maxPattern {
		return f.errorf(colPattern, "pattern is longer than %d bytes", maxPattern)
	}
	if lit, _ := globStats([]rune(normalize(p))); lit < minLiterals {
		return f.errorf(colPattern, "%q matches too broadly: it needs at least %d non-wildcard characters", p, minLiterals)
	}
	return nil
}

// checkText requires non-empty printable UTF-8 (notes may be empty).
func (f fields) checkText(col, s string) error {
	if s == "" && col != colNotes {
		return f.errorf(col, "must not be empty")
	}
	if !utf8.ValidString(s) {
		return f.errorf(col, "is not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return f.errorf(col, "contains a control character")
		}
	}
	return nil
}

// uint parses an optional non-negative integer; empty means 0.
func (f fields) uint(col string, bits int) (uint64, error) {
	s := f.get(col)
	if s == "" {
		return 0, nil
	}
	if strings.HasPrefix(s, "-") {
		return 0, f.errorf(col, "%q must not be negative", s)
	}
	if strings.TrimLeft(s, "0123456789") != "" {
		return 0, f.errorf(col, "%q is not a whole number", s)
	}
	v, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, f.errorf(col, "%q is out of range", s)
	}
	return v, nil
}

// decimal parses an optional non-negative plain decimal ("0.58"); empty
// means 0. Exponents, hex and Inf/NaN are refused to keep the file readable.
func (f fields) decimal(col string) (float64, error) {
	s := f.get(col)
	if s == "" {
		return 0, nil
	}
	if strings.HasPrefix(s, "-") {
		return 0, f.errorf(col, "%q must not be negative", s)
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if len(s) > maxDecimalSz || whole == "" || (hasDot && frac == "") ||
		strings.TrimLeft(whole, "0123456789") != "" || strings.TrimLeft(frac, "0123456789") != "" {
		return 0, f.errorf(col, "%q is not a decimal", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, f.errorf(col, "%q is not a decimal", s)
	}
	return v, nil
}

// checkSource requires at least one absolute http(s) URL; several may be
// given separated by spaces when figures come from different pages.
func (f fields) checkSource(s string) error {
	urls := strings.Fields(s)
	if len(urls) == 0 {
		return f.errorf(colSource, "must name the public URL the figures come from")
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return f.errorf(colSource, "%q is not an http(s) URL", raw)
		}
	}
	return nil
}
