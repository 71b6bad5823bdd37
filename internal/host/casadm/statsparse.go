package casadm

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Units of counter columns.
const (
	unitBlocks   = "4KiB Blocks"
	unitRequests = "Requests"
	unitPercent  = "%"
)

// ParseStats reads `casadm -P -i <cache> [-j <core>] [-d [<class>]]
// [-f <filters>] -o csv [-b]`: one header and one record per data line
// (several with -d and no class id). Columns are found by title; unknown
// ones go to Stats.Other. An empty output (casadm's answer to an
// unconfigured class, rc 1) is an error.
func ParseStats(r io.Reader) ([]Stats, error) {
	t, err := readTable(r)
	if err != nil {
		return nil, err
	}
	level, err := statsLevel(t)
	if err != nil {
		return nil, err
	}
	if len(t.rows) == 0 {
		return nil, &ParseError{Line: 1, Msg: "header without data"}
	}
	out := make([]Stats, 0, len(t.rows))
	for _, r := range t.rows {
		s, err := parseStatsRow(t, r, level)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// statsLevel says which conf section the header carries, from its id column.
func statsLevel(t *table) (map[string]confSetter, error) {
	var level map[string]confSetter
	found := ""
	for _, l := range []struct {
		id   string
		conf map[string]confSetter
	}{{"Cache Id", cacheConf}, {"Core Id", coreConf}, {"IO class ID", classConf}} {
		if _, ok := t.index[l.id]; !ok {
			continue
		}
		if found != "" {
			return nil, &ParseError{Line: 1, Msg: fmt.Sprintf("both %q and %q columns: not one casadm record", found, l.id)}
		}
		level, found = l.conf, l.id
	}
	return level, nil
}

func parseStatsRow(t *table, r row, level map[string]confSetter) (Stats, error) {
	var s Stats
	switch {
	case level == nil:
	case level["Cache Id"] != nil:
		s.Cache = &CacheInfo{}
	case level["Core Id"] != nil:
		s.Core = &CoreInfo{}
	default:
		s.Class = &ClassInfo{}
	}
	for i, title := range t.header {
		v := r.fields[i]
		name, unit := splitTitle(title)
		if set := level[title]; set != nil {
			if err := set(&s, v); err != nil {
				return s, t.fieldErr(r, title, "%v", err)
			}
			continue
		}
		if name == "Metadata Memory Footprint" && s.Cache != nil {
			b, err := parseBytes(v, unit)
			if err != nil {
				return s, t.fieldErr(r, title, "%v", err)
			}
			s.Cache.MetadataFootprintBytes = b
			continue
		}
		spec, ok := counterColumns[strings.ReplaceAll(name, "(s)", "")]
		if !ok {
			if s.Other == nil {
				s.Other = map[string]string{}
			}
			s.Other[title] = v
			continue
		}
		slot := spec.slot(&s)
		if *slot == nil {
			*slot = &Counter{}
		}
		switch unit {
		case unitPercent:
			p, err := parseFloat(v)
			if err != nil {
				return s, t.fieldErr(r, title, "%v", err)
			}
			(*slot).Percent = p
		case spec.unit:
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return s, t.fieldErr(r, title, "invalid count %q", v)
			}
			(*slot).Value = n
		default:
			return s, t.fieldErr(r, title, "unexpected unit [%s]: want [%s] or [%%]", unit, spec.unit)
		}
	}
	return s, nil
}

type counterSpec struct {
	unit string
	slot func(*Stats) **Counter
}

func (s *Stats) usage() *Usage {
	if s.Usage == nil {
		s.Usage = &Usage{}
	}
	return s.Usage
}

func (s *Stats) requests() *Requests {
	if s.Requests == nil {
		s.Requests = &Requests{}
	}
	return s.Requests
}

func (s *Stats) blocks() *Blocks {
	if s.Blocks == nil {
		s.Blocks = &Blocks{}
	}
	return s.Blocks
}

func (s *Stats) errors() *Errors {
	if s.Errors == nil {
		s.Errors = &Errors{}
	}
	return s.Errors
}

// counterColumns maps a row title, without its unit and "(s)", to its counter.
var counterColumns = map[string]counterSpec{
	"Occupancy":          {unitBlocks, func(s *Stats) **Counter { return &s.usage().Occupancy }},
	"Free":               {unitBlocks, func(s *Stats) **Counter { return &s.usage().Free }},
	"Clean":              {unitBlocks, func(s *Stats) **Counter { return &s.usage().Clean }},
	"Dirty":              {unitBlocks, func(s *Stats) **Counter { return &s.usage().Dirty }},
	"Inactive Occupancy": {unitBlocks, func(s *Stats) **Counter { return &s.usage().InactiveOccupancy }},
	"Inactive Clean":     {unitBlocks, func(s *Stats) **Counter { return &s.usage().InactiveClean }},
	"Inactive Dirty":     {unitBlocks, func(s *Stats) **Counter { return &s.usage().InactiveDirty }},

	"Read hits":            {unitRequests, func(s *Stats) **Counter { return &s.requests().ReadHits }},
	"Read deferred":        {unitRequests, func(s *Stats) **Counter { return &s.requests().ReadDeferred }},
	"Read partial misses":  {unitRequests, func(s *Stats) **Counter { return &s.requests().ReadPartialMisses }},
	"Read full misses":     {unitRequests, func(s *Stats) **Counter { return &s.requests().ReadFullMisses }},
	"Read total":           {unitRequests, func(s *Stats) **Counter { return &s.requests().ReadTotal }},
	"Write hits":           {unitRequests, func(s *Stats) **Counter { return &s.requests().WriteHits }},
	"Write deferred":       {unitRequests, func(s *Stats) **Counter { return &s.requests().WriteDeferred }},
	"Write partial misses": {unitRequests, func(s *Stats) **Counter { return &s.requests().WritePartialMisses }},
	"Write full misses":    {unitRequests, func(s *Stats) **Counter { return &s.requests().WriteFullMisses }},
	"Write total":          {unitRequests, func(s *Stats) **Counter { return &s.requests().WriteTotal }},
	"Pass-Through reads":   {unitRequests, func(s *Stats) **Counter { return &s.requests().PassThroughReads }},
	"Pass-Through writes":  {unitRequests, func(s *Stats) **Counter { return &s.requests().PassThroughWrites }},
	"Serviced requests":    {unitRequests, func(s *Stats) **Counter { return &s.requests().Serviced }},
	"Prefetch: readahead":  {unitRequests, func(s *Stats) **Counter { return &s.requests().PrefetchReadahead }},
	"Cleaner":              {unitRequests, func(s *Stats) **Counter { return &s.requests().Cleaner }},
	"User requests":        {unitRequests, func(s *Stats) **Counter { return &s.requests().User }},
	"Total requests":       {unitRequests, func(s *Stats) **Counter { return &s.requests().Total }},

	"Reads from core":                  {unitBlocks, func(s *Stats) **Counter { return &s.blocks().CoreReads }},
	"Writes to core":                   {unitBlocks, func(s *Stats) **Counter { return &s.blocks().CoreWrites }},
	"Total to/from core":               {unitBlocks, func(s *Stats) **Counter { return &s.blocks().CoreTotal }},
	"Reads from cache":                 {unitBlocks, func(s *Stats) **Counter { return &s.blocks().CacheReads }},
	"Writes to cache":                  {unitBlocks, func(s *Stats) **Counter { return &s.blocks().CacheWrites }},
	"Total to/from cache":              {unitBlocks, func(s *Stats) **Counter { return &s.blocks().CacheTotal }},
	"Reads from exported object":       {unitBlocks, func(s *Stats) **Counter { return &s.blocks().ExportedReads }},
	"Writes to exported object":        {unitBlocks, func(s *Stats) **Counter { return &s.blocks().ExportedWrites }},
	"Total to/from exported object":    {unitBlocks, func(s *Stats) **Counter { return &s.blocks().ExportedTotal }},
	"Prefetch core reads: readahead":   {unitBlocks, func(s *Stats) **Counter { return &s.blocks().PrefetchCoreReadsReadahead }},
	"Prefetch cache writes: readahead": {unitBlocks, func(s *Stats) **Counter { return &s.blocks().PrefetchCacheWritesReadahead }},
	"Cleaner cache reads":              {unitBlocks, func(s *Stats) **Counter { return &s.blocks().CleanerCacheReads }},
	"Cleaner core writes":              {unitBlocks, func(s *Stats) **Counter { return &s.blocks().CleanerCoreWrites }},

	"Cache read errors":  {unitRequests, func(s *Stats) **Counter { return &s.errors().CacheRead }},
	"Cache write errors": {unitRequests, func(s *Stats) **Counter { return &s.errors().CacheWrite }},
	"Cache total errors": {unitRequests, func(s *Stats) **Counter { return &s.errors().CacheTotal }},
	"Core read errors":   {unitRequests, func(s *Stats) **Counter { return &s.errors().CoreRead }},
	"Core write errors":  {unitRequests, func(s *Stats) **Counter { return &s.errors().CoreWrite }},
	"Core total errors":  {unitRequests, func(s *Stats) **Counter { return &s.errors().CoreTotal }},
	"Total errors":       {unitRequests, func(s *Stats) **Counter { return &s.errors().Total }},
}

// confSetter stores one conf column.
type confSetter func(s *Stats, v string) error

var cacheConf = map[string]confSetter{
	"Cache Id":                 func(s *Stats, v string) (err error) { s.Cache.ID, err = parseID(v, 1, MaxCacheID); return },
	"Cache Size [4KiB Blocks]": func(s *Stats, v string) (err error) { s.Cache.SizeBlocks, err = parseCount(v); return },
	"Cache Size [GiB]":         func(s *Stats, v string) (err error) { s.Cache.SizeGiB, err = parseFloat(v); return },
	"Cache Device":             func(s *Stats, v string) error { s.Cache.Device = dash(v); return nil },
	"Exported Object":          func(s *Stats, v string) error { s.Cache.ExportedObject = dash(v); return nil },
	"Core Devices":             func(s *Stats, v string) (err error) { s.Cache.CoreDevices, err = parseSmall(v); return },
	"Inactive Core Devices":    func(s *Stats, v string) (err error) { s.Cache.InactiveCoreDevices, err = parseSmall(v); return },
	"Write Policy":             func(s *Stats, v string) (err error) { s.Cache.WritePolicy, err = parseWritePolicy(v); return },
	"Cleaning Policy":          func(s *Stats, v string) error { s.Cache.CleaningPolicy = v; return nil },
	"Promotion Policy":         func(s *Stats, v string) error { s.Cache.PromotionPolicy = v; return nil },
	"Prefetch Policy":          func(s *Stats, v string) error { s.Cache.PrefetchPolicy = v; return nil },
	"Cache line size [KiB]":    func(s *Stats, v string) (err error) { s.Cache.LineSizeKiB, err = parseSmall(v); return },
	"Dirty for [s]":            func(s *Stats, v string) (err error) { s.Cache.DirtyForSeconds, err = parseCount(v); return },
	"Dirty for":                func(s *Stats, v string) error { s.Cache.DirtyFor = v; return nil },
	"Status":                   func(s *Stats, v string) (err error) { s.Cache.Status, err = ParseStatus(v); return },
}

var coreConf = map[string]confSetter{
	"Core Id":                    func(s *Stats, v string) (err error) { s.Core.ID, err = parseID(v, 0, MaxCoreID); return },
	"Core Device":                func(s *Stats, v string) error { s.Core.Device = dash(v); return nil },
	"Exported Object":            func(s *Stats, v string) error { s.Core.ExportedObject = dash(v); return nil },
	"Core Size [4KiB Blocks]":    func(s *Stats, v string) (err error) { s.Core.SizeBlocks, err = parseCount(v); return },
	"Core Size [GiB]":            func(s *Stats, v string) (err error) { s.Core.SizeGiB, err = parseFloat(v); return },
	"Dirty for [s]":              func(s *Stats, v string) (err error) { s.Core.DirtyForSeconds, err = parseCount(v); return },
	"Dirty for":                  func(s *Stats, v string) error { s.Core.DirtyFor = v; return nil },
	"Status":                     func(s *Stats, v string) (err error) { s.Core.Status, err = ParseStatus(v); return },
	"Seq cutoff threshold [KiB]": func(s *Stats, v string) (err error) { s.Core.SeqCutoffThresholdKiB, err = parseCount(v); return },
	"Seq cutoff policy":          func(s *Stats, v string) error { s.Core.SeqCutoffPolicy = v; return nil },
}

// MaxClassID is the highest IO class id any casadm prints (33 on master).
const MaxClassID = 33

var classConf = map[string]confSetter{
	"IO class ID": func(s *Stats, v string) (err error) { s.Class.ID, err = parseID(v, 0, MaxClassID); return },
	"IO class name": func(s *Stats, v string) error {
		if v == "" {
			return fmt.Errorf("empty IO class name")
		}
		s.Class.Name = v
		return nil
	},
	"Eviction priority": func(s *Stats, v string) (err error) {
		if v == "Pinned" {
			s.Class.Pinned = true
			return nil
		}
		if s.Class.Priority, err = parseID(v, 0, 255); err != nil {
			return fmt.Errorf("invalid eviction priority %q: want 0-255 or Pinned", v)
		}
		return nil
	},
	"Max size": func(s *Stats, v string) (err error) {
		p, ok := strings.CutSuffix(v, "%")
		if s.Class.MaxSizePercent, err = parseID(p, 0, 100); !ok || err != nil {
			return fmt.Errorf("invalid max size %q: want 0%%-100%%", v)
		}
		return nil
	},
}

func parseCount(v string) (uint64, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid number %q", v)
	}
	return n, nil
}

func parseSmall(v string) (int, error) {
	n, err := strconv.ParseUint(v, 10, 31)
	if err != nil {
		return 0, fmt.Errorf("invalid number %q", v)
	}
	return int(n), nil
}

func parseFloat(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || strings.ContainsAny(v, "xXpP_") {
		return 0, fmt.Errorf("invalid number %q", v)
	}
	return f, nil
}

var byteUnits = map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}

// parseBytes converts "18.3" in [MiB] to bytes.
func parseBytes(v, unit string) (uint64, error) {
	mult, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit [%s]", unit)
	}
	f, err := parseFloat(v)
	if err != nil || f < 0 || f*mult >= 1<<63 {
		return 0, fmt.Errorf("invalid size %q", v)
	}
	return uint64(math.Round(f * mult)), nil
}
