package ioclass

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Class is one line of the Open CAS IO class configuration.
type Class struct {
	// ID is the class id; rules are evaluated in ascending id.
	ID int
	// Rule is the "IO class name" field: the classification rule in the
	// kernel's syntax ("unclassified" for class 0).
	Rule string
	// Priority is the eviction priority, 0 (evicted last) to 255; nil means
	// pinned (empty field in the CSV).
	Priority *int
	// Allocation is the class's cap as a fraction of the cache, as written
	// in the CSV ("1", "0.25"); "0" sends the class to pass-through.
	Allocation string
}

// Pinned reports whether the class's lines are never evicted for other classes.
func (c Class) Pinned() bool { return c.Priority == nil }

// MaxSizePercent is the max_size casadm sends to the kernel for the
// allocation (round(x*100) in float precision), or -1 if it does not parse.
func (c Class) MaxSizePercent() int {
	v, ok := parseAllocation(c.Allocation)
	if !ok {
		return -1
	}
	return maxSizePercent(v)
}

// maxSizePercent reproduces casadm's (uint32_t)round(alloc * 100) where alloc
// is a float: the product is rounded to float precision first.
func maxSizePercent(v float32) int {
	return int(math.Round(float64(v * 100)))
}

// Config is a whole IO class configuration, classes in ascending id.
type Config struct {
	Classes []Class
}

// csvHeader is the header casadm writes and expects (any column order).
const csvHeader = colID + "," + colName + "," + colPriority + "," + colAllocation

// Column titles of the IO class CSV.
const (
	colID         = "IO class id"
	colName       = "IO class name"
	colPriority   = "Eviction priority"
	colAllocation = "Allocation"
)

// CSV renders the configuration exactly as casadm's --load-config reads it
// (and as `casadm -C -L -o csv` lists it): header, one line per class in
// ascending id, empty priority for pinned classes, "\n" line endings.
func (c Config) CSV() string {
	var b strings.Builder
	b.WriteString(csvHeader)
	b.WriteByte('\n')
	for _, cl := range c.sorted() {
		b.WriteString(strconv.Itoa(cl.ID))
		b.WriteByte(',')
		if cl.Rule != strings.TrimSpace(cl.Rule) {
			// casadm strips spaces around unquoted fields; quotes keep them
			// (a valid rule holds no quote to escape).
			b.WriteString(`"` + cl.Rule + `"`)
		} else {
			b.WriteString(cl.Rule)
		}
		b.WriteByte(',')
		if cl.Priority != nil {
			b.WriteString(strconv.Itoa(*cl.Priority))
		}
		b.WriteByte(',')
		b.WriteString(cl.Allocation)
		b.WriteByte('\n')
	}
	return b.String()
}

// Class returns the class with the given id.
func (c Config) Class(id int) (Class, bool) {
	for _, cl := range c.Classes {
		if cl.ID == id {
			return cl, true
		}
	}
	return Class{}, false
}

// sorted returns the classes in ascending id without touching c.
func (c Config) sorted() []Class {
	out := append([]Class(nil), c.Classes...)
	sortClasses(out)
	return out
}

func sortClasses(cs []Class) {
	slices.SortStableFunc(cs, func(a, b Class) int { return cmp.Compare(a.ID, b.ID) })
}

func intPtr(v int) *int { return &v }
