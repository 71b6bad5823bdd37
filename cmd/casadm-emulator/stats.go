package main

import (
	"fmt"
	"strconv"
	"strings"
)

// Statistics as casadm prints them (casadm/statistics_model.c over OCF's
// ocf_stats_builder.c): values, the percentages OCF computes as integer
// hundredths of a percent, and casadm's rounding of those to one decimal.

// Stats filters (casadm -f).
const (
	filterConf = 1 << iota
	filterUsage
	filterReq
	filterBlk
	filterErr
	filterAll      = filterConf | filterUsage | filterReq | filterBlk | filterErr
	filterCounters = filterReq | filterBlk | filterErr
)

// pct renders OCF's fraction (10000*v/den, integer) the way casadm does:
// round half up on the last digit, then %.1f of a float.
func pct(v, den uint64) string {
	var p uint64
	if den != 0 {
		p = 10000 * v / den
	}
	if p%10 >= 5 {
		p += 5
	}
	return fmt.Sprintf("%.1f", float64(float32(p)/100))
}

// b4k is OCF's _bytes4k: bytes to 4 KiB blocks, rounded up.
func b4k(b uint64) uint64 { return (b + 4095) >> 12 }

// row is one statistic: a value with its unit and percentage, or a
// key/value pair of the conf section.
type row struct {
	title string
	// section starts a group of rows (a rule above it in tables).
	section bool
	// For counters: value, percentage, unit.
	value, percent, unit string
	// For conf pairs: the values and their units ("" for none).
	kv    []string
	units []string
}

// table is one section of a record.
type table struct {
	title string // "Usage statistics", "" for the conf key/value block
	rows  []row
}

// record is one casadm statistics record.
type record []table

func counter(title, unit string, v, den uint64, section bool) row {
	return row{title: title, section: section, value: strconv.FormatUint(v, 10), percent: pct(v, den), unit: unit}
}

func kv(title string, values ...string) row {
	r := row{title: title}
	for i := 0; i < len(values); i += 2 {
		r.kv = append(r.kv, values[i])
		r.units = append(r.units, values[i+1])
	}
	return r
}

const (
	unitBlocks   = "4KiB Blocks"
	unitRequests = "Requests"
)

// usage is the usage section of a cache, a core or a class.
type usage struct {
	occupancy, occDen uint64
	free, freeDen     uint64
	clean, cleanDen   uint64
	dirty, dirtyDen   uint64
	noFree            bool
}

func usageTable(u usage) table {
	t := table{title: "Usage statistics"}
	t.rows = append(t.rows, counter("Occupancy", unitBlocks, u.occupancy, u.occDen, false))
	if !u.noFree {
		t.rows = append(t.rows, counter("Free", unitBlocks, u.free, u.freeDen, false))
	}
	t.rows = append(t.rows,
		counter("Clean", unitBlocks, u.clean, u.cleanDen, false),
		counter("Dirty", unitBlocks, u.dirty, u.dirtyDen, false))
	return t
}

func reqTable(c *Counters, rel release) table {
	serviced := c.RdTotal + c.WrTotal
	total := serviced + c.RdPT + c.WrPT
	rdHits := c.RdTotal - (c.RdFullMiss + c.RdPartialMiss)
	wrHits := c.WrTotal - (c.WrFullMiss + c.WrPartialMiss)
	rows := []row{
		counter("Read hits", unitRequests, rdHits, total, true),
		counter("Read deferred", unitRequests, 0, total, false),
		counter("Read partial misses", unitRequests, c.RdPartialMiss, total, false),
		counter("Read full misses", unitRequests, c.RdFullMiss, total, false),
		counter("Read total", unitRequests, c.RdTotal, total, false),
		counter("Write hits", unitRequests, wrHits, total, true),
		counter("Write deferred", unitRequests, 0, total, false),
		counter("Write partial misses", unitRequests, c.WrPartialMiss, total, false),
		counter("Write full misses", unitRequests, c.WrFullMiss, total, false),
		counter("Write total", unitRequests, c.WrTotal, total, false),
		counter("Pass-Through reads", unitRequests, c.RdPT, total, true),
		counter("Pass-Through writes", unitRequests, c.WrPT, total, false),
		counter("Serviced requests", unitRequests, serviced, total, false),
	}
	if !rel.masterStats {
		// Without the cleaner row, the total is the user requests' (3-cache-off.jsonl #1:
		// alru had cleaned, the total did not move).
		return table{title: "Request statistics", rows: append(rows,
			counter("Total requests", unitRequests, total, total, true))}
	}
	return table{title: "Request statistics", rows: append(rows,
		counter("Prefetch: readahead", unitRequests, 0, 0, true),
		counter("Cleaner", unitRequests, c.CleanerReqs, c.CleanerReqs, false),
		counter("User requests", unitRequests, total, total, true),
		counter("Total requests", unitRequests, total+c.CleanerReqs, total+c.CleanerReqs, false))}
}

func blkTable(c *Counters, cacheLevel bool, rel release) table {
	s := ""
	if cacheLevel {
		s = "(s)"
	}
	coreRd, coreWr, clWr := b4k(c.CoreRd), b4k(c.CoreWr), b4k(c.CleanerCoreWr)
	coreTotal := coreRd + coreWr + clWr
	cacheRd, cacheWr, clRd := b4k(c.CacheRd), b4k(c.CacheWr), b4k(c.CleanerCacheRd)
	cacheTotal := cacheRd + cacheWr + clRd
	if !rel.masterStats {
		// No cleaner rows: the cleaner's blocks are in the reads from the cache and the
		// writes to the cores (3-cache-off.jsonl #1: 4096 cleaned blocks in both).
		coreWr, cacheRd = coreWr+clWr, cacheRd+clRd
	}
	expRd, expWr := b4k(c.ExpRd), b4k(c.ExpWr)
	expTotal := expRd + expWr
	ptTotal := b4k(c.PTRd) + b4k(c.PTWr)
	rows := []row{
		counter("Reads from core"+s, unitBlocks, coreRd, coreTotal, true),
		counter("Writes to core"+s, unitBlocks, coreWr, coreTotal, false),
		counter("Total to/from core"+s, unitBlocks, coreTotal, coreTotal, false),
		counter("Reads from cache", unitBlocks, cacheRd, cacheTotal, true),
		counter("Writes to cache", unitBlocks, cacheWr, cacheTotal, false),
		counter("Total to/from cache", unitBlocks, cacheTotal, cacheTotal, false),
		counter("Reads from exported object"+s, unitBlocks, expRd, expTotal, true),
		counter("Writes to exported object"+s, unitBlocks, expWr, expTotal, false),
		counter("Total to/from exported object"+s, unitBlocks, expTotal, expTotal, false),
	}
	if !rel.masterStats {
		return table{title: "Block statistics", rows: rows}
	}
	return table{title: "Block statistics", rows: append(rows,
		// OCF divides the prefetch and cleaner rows by the pass-through
		// total (the last total it computed), hence values over 100 %.
		counter("Prefetch core reads: readahead", unitBlocks, 0, ptTotal, true),
		counter("Prefetch cache writes: readahead", unitBlocks, 0, ptTotal, false),
		counter("Cleaner cache reads", unitBlocks, clRd, ptTotal, false),
		counter("Cleaner core writes", unitBlocks, clWr, ptTotal, false))}
}

func errTable(c *Counters) table {
	cache := c.CacheErrRd + c.CacheErrWr
	core := c.CoreErrRd + c.CoreErrWr
	all := cache + core
	return table{title: "Error statistics", rows: []row{
		counter("Cache read errors", unitRequests, c.CacheErrRd, cache, true),
		counter("Cache write errors", unitRequests, c.CacheErrWr, cache, false),
		counter("Cache total errors", unitRequests, cache, cache, false),
		counter("Core read errors", unitRequests, c.CoreErrRd, core, true),
		counter("Core write errors", unitRequests, c.CoreErrWr, core, false),
		counter("Core total errors", unitRequests, core, core, false),
		counter("Total errors", unitRequests, all, all, true),
	}}
}

// dirtyFor renders casadm's "Dirty for" pair: seconds, then the text. casadm prints each
// unit with a trailing space, but its output parser trims the field: the real v26.03.2 prints
// "15 [s]" (testdata/guest-v26.03.2).
func dirtyFor(t uint64) (string, string) {
	if t == 0 {
		return "0", "Cache clean"
	}
	d, h, m, s := t/(24*3600), (t%(24*3600))/3600, (t%3600)/60, t%60
	var b strings.Builder
	for _, p := range []struct {
		v    uint64
		unit string
	}{{d, "d"}, {h, "h"}, {m, "m"}, {s, "s"}} {
		if p.v != 0 {
			fmt.Fprintf(&b, "%d [%s] ", p.v, p.unit)
		}
	}
	return strconv.FormatUint(t, 10), strings.TrimSpace(b.String())
}

// footprint is casadm's metadata_memory_footprint: the largest unit that
// keeps the value under 1024.
func footprint(size uint64) (string, string) {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	factor := float32(1)
	var v float32
	unit := ""
	for _, u := range units {
		v, unit = float32(size)/factor, u
		if v < 1024 {
			break
		}
		factor *= 1024
	}
	return fmt.Sprintf("%.1f", float64(v)), unit
}

// gibOf is casadm's GiB figure of a 4 KiB block count (float arithmetic).
func gibOf(blocks uint64) string {
	f := float32(blocks) * 4 * kib / gib
	return fmt.Sprintf("%.2f", float64(f))
}

// CSV renders records as casadm -o csv does: one header line (the first
// record's columns) and one line per record. Values with a comma are quoted.
func renderCSV(recs []record) string {
	var b strings.Builder
	for i, rec := range recs {
		var titles, values []string
		for _, t := range rec {
			for _, r := range t.rows {
				if r.kv != nil {
					for j, v := range r.kv {
						title := r.title
						if r.units[j] != "" {
							title += " [" + r.units[j] + "]"
						}
						titles, values = append(titles, title), append(values, v)
					}
					continue
				}
				titles = append(titles, r.title+" ["+r.unit+"]", r.title+" [%]")
				values = append(values, r.value, r.percent)
			}
		}
		if i == 0 {
			b.WriteString(csvLine(titles) + "\n")
		}
		b.WriteString(csvLine(values) + "\n")
	}
	return b.String()
}

// csvLine is casadm's csv_output_column: quotes only around a comma.
func csvLine(fields []string) string {
	out := make([]string, len(fields))
	for i, f := range fields {
		if strings.Contains(f, ",") {
			f = `"` + f + `"`
		}
		out[i] = f
	}
	return strings.Join(out, ",")
}

// renderText renders records as casadm's text view: the conf block as
// aligned key/value lines, every other section as a framed table.
func renderText(recs []record) string {
	var parts []string
	for _, rec := range recs {
		for _, t := range rec {
			if t.title == "" {
				parts = append(parts, kvBlock(t.rows))
				continue
			}
			g := grid{header: []string{t.title, "Count", "%", "[Units]"}}
			for _, r := range t.rows {
				g.rows = append(g.rows, []string{r.title, r.value, r.percent, "[" + r.unit + "]"})
				g.sections = append(g.sections, r.section)
			}
			parts = append(parts, g.render())
		}
	}
	return strings.Join(parts, "\n")
}

func kvBlock(rows []row) string {
	w := 0
	for _, r := range rows {
		w = max(w, len(r.title))
	}
	var b strings.Builder
	for _, r := range rows {
		var vals []string
		for j, v := range r.kv {
			if r.units[j] != "" {
				v += " [" + r.units[j] + "]"
			}
			vals = append(vals, v)
		}
		fmt.Fprintf(&b, "%-*s %s\n", w, r.title, strings.Join(vals, " / "))
	}
	return b.String()
}

// grid is a framed table as casadm's text view draws it (UTF-8 frames):
// header cells centred, numbers right-aligned, other cells left-aligned,
// units shown without their brackets, a thin rule above each section.
type grid struct {
	header   []string
	rows     [][]string
	sections []bool
}

func unbracket(s string) string {
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1]
	}
	return s
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	dots := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.':
			if dots > 0 || i == 0 {
				return false
			}
			dots++
		case c == '%':
			if i != len(s)-1 || i == 0 || s[i-1] == '.' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func (g grid) render() string {
	n := len(g.header)
	w := make([]int, n)
	for j, h := range g.header {
		w[j] = len([]rune(unbracket(h)))
		if j == 0 {
			w[j] = len([]rune(h))
		}
	}
	for _, r := range g.rows {
		for j, c := range r {
			w[j] = max(w[j], len([]rune(unbracket(c))))
		}
	}
	var b strings.Builder
	rule := func(left, fill, mid, right string) {
		b.WriteString(left)
		for j := 0; j < n; j++ {
			if j > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat(fill, w[j]+2))
		}
		b.WriteString(right + "\n")
	}
	line := func(cells []string) {
		b.WriteString("║")
		for j, c := range cells {
			if j > 0 {
				b.WriteString("│")
			}
			b.WriteString(" " + c + " ")
		}
		b.WriteString("║\n")
	}
	pad := func(s string, width int, right bool) string {
		k := width - len([]rune(s))
		if k <= 0 {
			return s
		}
		if right {
			return strings.Repeat(" ", k) + s
		}
		return s + strings.Repeat(" ", k)
	}
	rule("╔", "═", "╤", "╗")
	hdr := make([]string, n)
	for j, h := range g.header {
		if j == 0 {
			hdr[j] = pad(h, w[j], false)
			continue
		}
		left := (w[j] - len([]rune(h))) / 2
		hdr[j] = pad(strings.Repeat(" ", max(left, 0))+unbracket(h), w[j], false)
	}
	line(hdr)
	rule("╠", "═", "╪", "╣")
	for i, r := range g.rows {
		if i > 0 && i < len(g.sections) && g.sections[i] {
			rule("╟", "─", "┼", "╢")
		}
		cells := make([]string, n)
		for j, c := range r {
			cells[j] = pad(unbracket(c), w[j], isNumber(c))
		}
		line(cells)
	}
	rule("╚", "═", "╧", "╝")
	return b.String()
}
