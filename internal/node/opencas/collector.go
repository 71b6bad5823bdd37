package opencas

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/host/hostexec"
)

// Collector exports the node's Open CAS caches as prism_cache_* metrics (docs/metrics.md).
// Poll reads casadm on the agent's health period; Collect serves the last reading, so a
// scrape never runs casadm.
type Collector struct {
	Node string
	// Exec runs casadm.
	Exec hostexec.Executor

	mu       sync.Mutex
	snapshot Snapshot
}

// Snapshot is one reading of every cache: the list, each cache's record and IO class records
// (Stats' order) and each core's record.
type Snapshot struct {
	List  casadm.List
	Stats []casadm.Stats
	Cores map[int][]casadm.Stats
}

// ReadSnapshot reads the list, then per cache its statistics, then per core its record:
// 3 + cores casadm runs per cache.
func ReadSnapshot(ctx context.Context, exec hostexec.Executor) (Snapshot, error) {
	r := Runner{Exec: exec}
	out, err := r.casadm(ctx, casadm.ListArgv())
	if err != nil {
		return Snapshot{}, err
	}
	list, err := casadm.ParseList(strings.NewReader(string(out)))
	if err != nil {
		return Snapshot{}, fmt.Errorf("casadm -L: %w", err)
	}
	snap := Snapshot{List: list, Cores: map[int][]casadm.Stats{}}
	if len(list.Caches) == 0 {
		return snap, nil
	}
	if snap.Stats, err = Stats(ctx, exec); err != nil {
		return snap, err
	}
	for _, c := range list.Caches {
		for _, k := range c.Cores {
			argv := casadm.CoreStatsArgv(c.ID, k.ID)
			out, err := r.casadm(ctx, argv)
			if err != nil {
				return snap, err
			}
			s, err := casadm.ParseStats(strings.NewReader(string(out)))
			if err != nil {
				return snap, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
			}
			snap.Cores[c.ID] = append(snap.Cores[c.ID], s...)
		}
	}
	return snap, nil
}

// Poll replaces the served reading. A failed read keeps the previous one (and says so).
func (c *Collector) Poll(ctx context.Context) error {
	snap, err := ReadSnapshot(ctx, c.Exec)
	if err != nil {
		return fmt.Errorf("reading Open CAS statistics: %w", err)
	}
	c.Set(snap)
	return nil
}

// Set replaces the served reading.
func (c *Collector) Set(s Snapshot) {
	c.mu.Lock()
	c.snapshot = s
	c.mu.Unlock()
}

var (
	cacheLabels = []string{"node", "cache"}
	classLabels = []string{"node", "cache", "class", "class_name"}
	descInfo    = prometheus.NewDesc("prism_cache_info", "An Open CAS cache on the node (value 1): its cache device, mode, state and line size.",
		[]string{"node", "cache", "device", "mode", "state", "line_size_bytes"}, nil)
	descOccupancy   = prometheus.NewDesc("prism_cache_occupancy_ratio", "Share of the cache holding data (occupancy ÷ cache size).", cacheLabels, nil)
	descDirty       = prometheus.NewDesc("prism_cache_dirty_ratio", "Share of the cache holding data not yet written to the cores (dirty ÷ cache size).", cacheLabels, nil)
	descDirtyAge    = prometheus.NewDesc("prism_cache_dirty_age_seconds", "How long the oldest dirty data has waited to be written back (casadm's \"Dirty for\"; 0 when clean).", cacheLabels, nil)
	descFailed      = prometheus.NewDesc("prism_cache_failed", "1 when the cache is not running normally (failed, incomplete, cache device errors) or a core is inactive; else 0.", cacheLabels, nil)
	descExported    = prometheus.NewDesc("prism_cache_exported_written_bytes_total", "Bytes written to the cache's exported objects (what the OSDs wrote), since the cache started.", cacheLabels, nil)
	descCoreWrites  = prometheus.NewDesc("prism_cache_qlc_written_bytes_total", "Bytes the cache wrote to its cores (QLC): written through, passed through and cleaned back, since the cache started.", cacheLabels, nil)
	descAlpha       = prometheus.NewDesc("prism_cache_write_reduction_ratio", "α_cache = 1 − QLC writes ÷ exported-object writes since the cache started: the share of the OSDs' writes the cache kept off QLC (dirty data not yet written back counts as kept).", cacheLabels, nil)
	descClassOcc    = prometheus.NewDesc("prism_cache_class_occupancy_bytes", "Cache space the IO class holds.", classLabels, nil)
	descClassDirty  = prometheus.NewDesc("prism_cache_class_dirty_bytes", "The IO class's data not yet written to the cores.", classLabels, nil)
	descClassHits   = prometheus.NewDesc("prism_cache_class_hits_total", "Requests of the IO class served from the cache, by direction.", append(classLabels, "dir"), nil)
	descClassMisses = prometheus.NewDesc("prism_cache_class_misses_total", "Requests of the IO class that missed (partial and full misses), by direction.", append(classLabels, "dir"), nil)
	descClassPT     = prometheus.NewDesc("prism_cache_class_pass_through_total", "Requests of the IO class sent straight to the core, by direction.", append(classLabels, "dir"), nil)
	descClassCore   = prometheus.NewDesc("prism_cache_class_core_written_bytes_total", "Bytes of the IO class written to the cores (QLC) by the request path.", classLabels, nil)
	descClassWrites = prometheus.NewDesc("prism_cache_class_written_bytes_total", "Bytes of the IO class written to the exported objects.", classLabels, nil)
	descClassBeta   = prometheus.NewDesc("prism_cache_class_write_invalidation_ratio", "β = the class's exported-object writes ÷ its occupancy since the cache started: how many times over it rewrote the space it holds.", classLabels, nil)
	descCoreWritten = prometheus.NewDesc("prism_cache_core_written_bytes_total", "Bytes written to the core device (QLC) through this cache, since the cache started.", []string{"node", "cache", "core", "device"}, nil)
)

// Describe sends nothing: the metric set depends on the caches (an unchecked collector).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect serves the last reading.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	snap := c.snapshot
	c.mu.Unlock()
	for _, m := range Metrics(c.Node, snap) {
		ch <- m
	}
}

// Metrics turns a reading into metrics. Pure.
func Metrics(node string, snap Snapshot) []prometheus.Metric {
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...))
	}
	byID := map[int][]casadm.Stats{}
	id := 0
	for _, s := range snap.Stats {
		if s.Cache != nil {
			id = s.Cache.ID
		}
		byID[id] = append(byID[id], s)
	}
	for _, lc := range snap.List.Caches {
		cid := itoa(lc.ID)
		recs := byID[lc.ID]
		var info *casadm.CacheInfo
		var usage *casadm.Usage
		for _, s := range recs {
			if s.Cache != nil {
				info, usage = s.Cache, s.Usage
			}
		}
		line := ""
		if info != nil {
			line = strconv.Itoa(info.LineSizeKiB * 1024)
		}
		gauge(descInfo, 1, node, cid, lc.Disk, lc.Mode, lc.Status.State, line)
		failed := lc.Status.State != casadm.StateRunning
		for _, k := range lc.Cores {
			failed = failed || k.Status.State == casadm.StateInactive
		}
		if info != nil && usage != nil && info.SizeBlocks > 0 {
			gauge(descOccupancy, float64(value(usage.Occupancy))/float64(info.SizeBlocks), node, cid)
			gauge(descDirty, float64(value(usage.Dirty))/float64(info.SizeBlocks), node, cid)
		}
		if info != nil {
			gauge(descDirtyAge, float64(info.DirtyForSeconds), node, cid)
		}
		for _, s := range recs {
			if s.Cache != nil && s.Errors != nil && value(s.Errors.CacheTotal) > 0 {
				failed = true
			}
		}
		gauge(descFailed, b2f(failed), node, cid)
		if a := Absorbed(recs); a.ExportedWrites > 0 || a.QLCWrites > 0 {
			counter(descExported, float64(a.ExportedWrites*blockBytes), node, cid)
			counter(descCoreWrites, float64(a.QLCWrites*blockBytes), node, cid)
		}
		if alpha, ok := Alpha(recs); ok {
			gauge(descAlpha, alpha, node, cid)
		}
		for _, s := range recs {
			if s.Class == nil {
				continue
			}
			l := []string{node, cid, itoa(s.Class.ID), s.Class.Name}
			if u := s.Usage; u != nil {
				gauge(descClassOcc, float64(value(u.Occupancy)*blockBytes), l...)
				gauge(descClassDirty, float64(value(u.Dirty)*blockBytes), l...)
			}
			if r := s.Requests; r != nil {
				for _, dir := range []struct {
					name                string
					hits, partial, full *casadm.Counter
					passThrough         *casadm.Counter
				}{{"read", r.ReadHits, r.ReadPartialMisses, r.ReadFullMisses, r.PassThroughReads}, {"write", r.WriteHits, r.WritePartialMisses, r.WriteFullMisses, r.PassThroughWrites}} {
					dl := append(append([]string{}, l...), dir.name)
					counter(descClassHits, float64(value(dir.hits)), dl...)
					counter(descClassMisses, float64(value(dir.partial)+value(dir.full)), dl...)
					counter(descClassPT, float64(value(dir.passThrough)), dl...)
				}
			}
			if b := s.Blocks; b != nil {
				counter(descClassCore, float64(value(b.CoreWrites)*blockBytes), l...)
				counter(descClassWrites, float64(value(b.ExportedWrites)*blockBytes), l...)
			}
		}
		for _, b := range Beta(recs) {
			if b.Defined {
				gauge(descClassBeta, b.Beta, node, cid, itoa(b.ClassID), b.Name)
			}
		}
		for _, s := range snap.Cores[lc.ID] {
			if s.Core == nil || s.Blocks == nil {
				continue
			}
			counter(descCoreWritten, float64(value(s.Blocks.CoreWrites)*blockBytes), node, cid, itoa(s.Core.ID), s.Core.Device)
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
