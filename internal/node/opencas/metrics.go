package opencas

import (
	"context"
	"fmt"
	"strings"

	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/host/hostexec"
)

// Stats reads the statistics the cache metrics come from: for every running cache, its
// cache-level record (`casadm -P -i N -o csv`) followed by one record per configured IO
// class (`casadm -P -i N -d -o csv`), cache after cache in casadm's list order.
func Stats(ctx context.Context, exec hostexec.Executor) ([]casadm.Stats, error) {
	r := Runner{Exec: exec}
	out, err := r.casadm(ctx, casadm.ListArgv())
	if err != nil {
		return nil, err
	}
	list, err := casadm.ParseList(strings.NewReader(string(out)))
	if err != nil {
		return nil, fmt.Errorf("casadm -L: %w", err)
	}
	var all []casadm.Stats
	for _, c := range list.Caches {
		for _, argv := range [][]string{casadm.StatsArgv(c.ID), casadm.IOClassStatsArgv(c.ID)} {
			out, err := r.casadm(ctx, argv)
			if err != nil {
				return nil, err
			}
			s, err := casadm.ParseStats(strings.NewReader(string(out)))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
			}
			all = append(all, s...)
		}
	}
	return all, nil
}

// value reads a counter, 0 when absent.
func value(c *casadm.Counter) uint64 {
	if c == nil {
		return 0
	}
	return c.Value
}

// Absorption is the write absorption of the caches (4 KiB blocks).
type Absorption struct {
	// ExportedWrites are the writes to the exported objects (what the OSDs wrote).
	ExportedWrites uint64
	// QLCWrites are the writes that reached the core devices: written through or passed
	// through, plus written back by the cleaner or a flush.
	QLCWrites uint64
}

// Absorbed sums the cache-level records of stats.
func Absorbed(stats []casadm.Stats) Absorption {
	var a Absorption
	for _, s := range stats {
		if s.Cache == nil || s.Blocks == nil {
			continue
		}
		a.ExportedWrites += value(s.Blocks.ExportedWrites)
		a.QLCWrites += value(s.Blocks.CoreWrites) + value(s.Blocks.CleanerCoreWrites)
	}
	return a
}

// Alpha is 1 − QLC writes ÷ exported-object writes over the cache-level records of stats:
// the share of the OSDs' writes the cache kept off the QLC devices (overwrites absorbed,
// dirty data not yet written back). ok is false when nothing was written. It can be negative
// when a flush writes back data written before the counters were reset.
func Alpha(stats []casadm.Stats) (alpha float64, ok bool) {
	a := Absorbed(stats)
	if a.ExportedWrites == 0 {
		return 0, false
	}
	return 1 - float64(a.QLCWrites)/float64(a.ExportedWrites), true
}

// ClassBeta is one IO class's write intensity.
type ClassBeta struct {
	CacheID, ClassID int
	Name             string
	// Writes are the class's writes to the exported objects, Occupancy its cache lines,
	// both in 4 KiB blocks.
	Writes, Occupancy uint64
	// Beta is Writes ÷ Occupancy: how many times over the class rewrote the cache space it
	// holds. Defined is false when it holds none.
	Beta    float64
	Defined bool
}

// Beta computes β for every IO class record of stats (a class record belongs to the cache
// record before it, as Stats returns them).
func Beta(stats []casadm.Stats) []ClassBeta {
	var out []ClassBeta
	cache := 0
	for _, s := range stats {
		if s.Cache != nil {
			cache = s.Cache.ID
			continue
		}
		if s.Class == nil {
			continue
		}
		b := ClassBeta{CacheID: cache, ClassID: s.Class.ID, Name: s.Class.Name}
		if s.Blocks != nil {
			b.Writes = value(s.Blocks.ExportedWrites)
		}
		if s.Usage != nil {
			b.Occupancy = value(s.Usage.Occupancy)
		}
		if b.Occupancy > 0 {
			b.Beta, b.Defined = float64(b.Writes)/float64(b.Occupancy), true
		}
		out = append(out, b)
	}
	return out
}
