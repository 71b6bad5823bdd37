package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/prism-storage/prism/internal/ioclass"
)

func asRuleError(err error, re **ioclass.RuleError) bool { return errors.As(err, re) }

func statsOpt(c *cli, _, long string, a []string) bool {
	switch long {
	case "cache-id", "core-id", "output-format", "by-id-path":
		return commonOpt(c, long, a)
	case "io-class-id":
		if len(a) > 0 {
			v, ok := c.validateNum(a[0], "IO class id", 0, uint64(c.rel.maxClassID()))
			if !ok {
				return false
			}
			c.a.classID = int(v)
		}
		c.a.classStats = true
	case "filter":
		f, ok := parseFilters(first(a))
		if !ok {
			return false
		}
		c.a.filters = f
	default:
		return false
	}
	return true
}

// parseFilters is casadm's validate_str_val_mapping_multi over the filter
// names: comma-separated, no empty or trailing item.
func parseFilters(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	names := map[string]int{"conf": filterConf, "usage": filterUsage, "req": filterReq, "blk": filterBlk, "err": filterErr, "all": filterAll}
	v := 0
	for _, t := range strings.Split(s, ",") {
		f, ok := names[t]
		if !ok {
			return 0, false
		}
		v |= f
	}
	return v, true
}

func (c *cli) stats() int {
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Cache Id %d not running\n", c.a.cacheID)
		return 1
	}
	var core *Core
	if c.a.coreID != coreIDInvalid {
		if core = ca.core(c.a.coreID); core == nil {
			c.errf("No such core device in cache.\n")
			return 1
		}
	}
	filters := c.a.filters
	if filters == 0 {
		filters = filterAll
	}
	var recs []record
	switch {
	case c.a.classStats:
		ids := []int{}
		if c.a.classID >= 0 {
			if ca.class(c.a.classID) == nil {
				c.errf("IO class %d is not configured.\n", c.a.classID)
				return 1
			}
			ids = append(ids, c.a.classID)
		} else {
			for _, cl := range ca.Classes {
				ids = append(ids, cl.ID)
			}
		}
		for _, id := range ids {
			recs = append(recs, c.classRecord(ca, core, id, filters))
		}
	case core == nil:
		recs = append(recs, c.cacheRecord(ca, filters))
	default:
		recs = append(recs, c.coreRecord(ca, core, filters))
	}
	if c.a.csv {
		c.outf("%s", renderCSV(recs))
	} else {
		c.outf("%s", renderText(recs))
	}
	return 0
}

// sizes of a cache in 4 KiB blocks.
func blocksPerLine(ca *Cache) uint64 { return uint64(ca.LineKiB / 4) }

// occupancy counts lines (all cores when core < 0, all classes when
// class < 0) and the dirty ones.
func occupancy(ca *Cache, core, class int) (occ, dirty uint64) {
	for _, l := range ca.Blocks {
		if (core < 0 || l.Core == core) && (class < 0 || l.Class == class) {
			occ++
			if l.Dirty {
				dirty++
			}
		}
	}
	return
}

// dirtySince is how long the oldest dirty line of core (all when < 0) waited.
func (c *cli) dirtySince(ca *Cache, core int) uint64 {
	oldest := int64(0)
	for _, l := range ca.Blocks {
		if l.Dirty && (core < 0 || l.Core == core) && (oldest == 0 || l.DirtyAt < oldest) {
			oldest = l.DirtyAt
		}
	}
	if oldest == 0 || c.now <= oldest {
		return 0
	}
	return uint64(c.now - oldest)
}

// sum adds the counters of the active cores (core < 0: all of them) for a
// class (class < 0: all classes), as OCF accumulates over opened cores.
func sum(ca *Cache, core, class int) *Counters {
	total := &Counters{}
	for _, k := range ca.Cores {
		if k.Inactive || (core >= 0 && k.ID != core) {
			continue
		}
		for id, cnt := range k.Stats {
			if class < 0 || id == class {
				total.add(cnt)
			}
		}
	}
	return total
}

func (c *cli) cacheRecord(ca *Cache, filters int) record {
	var rec record
	bpl := blocksPerLine(ca)
	size := ca.Lines * bpl
	occ, dirty := occupancy(ca, -1, -1)
	occ, dirty = occ*bpl, dirty*bpl
	if filters&filterConf != 0 {
		// get_inactive_core_count reads every core without -b: casadm
		// warns for each core path it cannot resolve, whatever -b says.
		for _, k := range ca.Cores {
			if _, ok := c.shown(k.Device, false); !ok {
				c.errf("WARNING: Can not resolve path to core %d from cache %d. By-id path will be shown for that core.\n", k.ID, ca.ID)
			}
		}
		dev, _ := c.shown(ca.Device, c.a.byID)
		inactive := 0
		for _, k := range ca.Cores {
			if k.Inactive {
				inactive++
			}
		}
		fp, unit := footprint(footprintBytes(ca.Lines))
		secs, text := dirtyFor(c.dirtySince(ca, -1))
		status := "Running"
		switch {
		case ca.Failed:
			// The device is gone: casadm cannot resolve the kernel name and prints the path.
			status, dev = "Not running", ca.Device
		case ca.incomplete():
			status = "Incomplete"
		}
		conf := []row{
			kv("Cache Id", strconv.Itoa(ca.ID), ""),
			kv("Cache Size", strconv.FormatUint(size, 10), unitBlocks, gibOf(size), "GiB"),
			kv("Cache Device", dev, ""),
			kv("Exported Object", "-", ""),
			kv("Core Devices", strconv.Itoa(len(ca.Cores)), ""),
			kv("Inactive Core Devices", strconv.Itoa(inactive), ""),
			kv("Write Policy", ca.Mode, ""),
			kv("Cleaning Policy", ca.Params.Cleaning, ""),
			kv("Promotion Policy", ca.Params.Promotion, ""),
		}
		if c.rel.masterStats {
			conf = append(conf, kv("Prefetch Policy", ca.Params.Prefetch, ""))
		}
		rec = append(rec, table{rows: append(conf,
			kv("Cache line size", strconv.Itoa(ca.LineKiB), "KiB"),
			kv("Metadata Memory Footprint", fp, unit),
			kv("Dirty for", secs, "s", text, ""),
			kv("Status", status, ""))})
	}
	if filters&filterUsage != 0 {
		rec = append(rec, usageTable(usage{occupancy: occ, occDen: size, free: size - occ, freeDen: size,
			clean: occ - dirty, cleanDen: size, dirty: dirty, dirtyDen: size}))
		if ca.incomplete() {
			var iocc, idirty uint64
			for _, k := range ca.Cores {
				if k.Inactive {
					o, d := occupancy(ca, k.ID, -1)
					iocc, idirty = iocc+o*bpl, idirty+d*bpl
				}
			}
			rec = append(rec, table{title: "Inactive usage statistics", rows: []row{
				counter("Inactive Occupancy", unitBlocks, iocc, size, false),
				counter("Inactive Clean", unitBlocks, iocc-idirty, occ, false),
				counter("Inactive Dirty", unitBlocks, idirty, occ, false),
			}})
		}
	}
	return append(rec, c.counterTables(sum(ca, -1, -1), filters, true)...)
}

func (c *cli) counterTables(cnt *Counters, filters int, cacheLevel bool) []table {
	var out []table
	if filters&filterReq != 0 {
		out = append(out, reqTable(cnt, c.rel))
	}
	if filters&filterBlk != 0 {
		out = append(out, blkTable(cnt, cacheLevel, c.rel))
	}
	if filters&filterErr != 0 {
		out = append(out, errTable(cnt))
	}
	return out
}

func (c *cli) coreRecord(ca *Cache, k *Core, filters int) record {
	var rec record
	bpl := blocksPerLine(ca)
	size := ca.Lines * bpl
	if filters&filterConf != 0 {
		dev, ok := c.shown(k.Device, c.a.byID)
		if !ok {
			c.errf("WARNING: Can not resolve path to core %d from cache %d. By-id path will be shown for that core.\n", k.ID, ca.ID)
		}
		var coreBlocks uint64
		if d := c.st.Devices[k.Device]; d != nil {
			coreBlocks = uint64(d.SizeBytes) / kib / 4
		}
		exp, status := exportedObject(ca.ID, k.ID), "Active"
		if k.Inactive {
			exp, status = "-", "Inactive"
		}
		secs, text := dirtyFor(c.dirtySince(ca, k.ID))
		rec = append(rec, table{rows: []row{
			kv("Core Id", strconv.Itoa(k.ID), ""),
			kv("Core Device", dev, ""),
			kv("Exported Object", exp, ""),
			kv("Core Size", strconv.FormatUint(coreBlocks, 10), unitBlocks, gibOf(coreBlocks), "GiB"),
			kv("Dirty for", secs, "s", text, ""),
			kv("Status", status, ""),
			kv("Seq cutoff threshold", strconv.FormatUint(k.SeqCutoffBytes/kib, 10), "KiB"),
			kv("Seq cutoff policy", k.SeqCutoffPolicy, ""),
		}})
	}
	if filters&filterUsage != 0 {
		occ, dirty := occupancy(ca, k.ID, -1)
		all, _ := occupancy(ca, -1, -1)
		occ, dirty, all = occ*bpl, dirty*bpl, all*bpl
		rec = append(rec, usageTable(usage{occupancy: occ, occDen: size, free: size - all, freeDen: size,
			clean: occ - dirty, cleanDen: occ, dirty: dirty, dirtyDen: occ}))
	}
	return append(rec, c.counterTables(sum(ca, k.ID, -1), filters, false)...)
}

func (c *cli) classRecord(ca *Cache, k *Core, id, filters int) record {
	var rec record
	cl := ca.class(id)
	bpl := blocksPerLine(ca)
	size := ca.Lines * bpl
	if filters&filterConf != 0 {
		prio := "Pinned"
		if cl.Priority >= 0 {
			prio = strconv.Itoa(cl.Priority)
		}
		rec = append(rec, table{rows: []row{
			kv("IO class ID", strconv.Itoa(cl.ID), ""),
			kv("IO class name", cl.Name, ""),
			kv("Eviction priority", prio, ""),
			kv("Max size", strconv.Itoa(cl.MaxSize)+"%", ""),
		}})
	}
	core := -1
	if k != nil {
		core = k.ID
	}
	if filters&filterUsage != 0 {
		occ, dirty := occupancy(ca, core, id)
		occ, dirty = occ*bpl, dirty*bpl
		rec = append(rec, usageTable(usage{occupancy: occ, occDen: size, clean: occ - dirty, cleanDen: occ,
			dirty: dirty, dirtyDen: occ, noFree: true}))
	}
	return append(rec, c.counterTables(sum(ca, core, id), filters&^filterErr, k == nil)...)
}
