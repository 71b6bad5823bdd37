package advisor

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Sample is one cache's counters at one observation: cumulative since the cache started,
// except occupancy and dirty, which are levels.
type Sample struct {
	CacheID int32
	// Config identifies the IO class file the node's plan carried (CSVHash): a reload
	// changes what the counters of a window would mix.
	Config                       string
	SizeBytes                    int64
	ExportedWritten, CoreWritten int64
	Classes                      map[int32]ClassSample
}

// ClassSample is one class's counters at one observation.
type ClassSample struct {
	Written, Occupancy, Dirty int64
}

// Delta is the window of one cache between two samples; skip says why there is none.
// A class missing from either sample is left out: the agent did not report it, so its
// counters cannot be trusted to start from the previous value.
func Delta(key string, prev, cur Sample) (w CacheWindow, skip string) {
	switch {
	case cur.CacheID != prev.CacheID:
		return w, fmt.Sprintf("its cache id changed from %d to %d: the cache was restarted", prev.CacheID, cur.CacheID)
	case cur.Config != prev.Config:
		return w, "its IO class file changed during the window"
	case cur.SizeBytes <= 0:
		return w, "its size is unknown (the plan has no cache partition for it)"
	case cur.ExportedWritten < prev.ExportedWritten || cur.CoreWritten < prev.CoreWritten:
		return w, "its write counters went down: the cache restarted or its statistics were reset"
	}
	w = CacheWindow{Key: key, SizeBytes: cur.SizeBytes,
		ExportedWritten: cur.ExportedWritten - prev.ExportedWritten, CoreWritten: cur.CoreWritten - prev.CoreWritten}
	for _, id := range slices.Sorted(maps.Keys(cur.Classes)) {
		c := cur.Classes[id]
		pc, ok := prev.Classes[id]
		if !ok {
			continue
		}
		if c.Written < pc.Written {
			return CacheWindow{}, fmt.Sprintf("class %d's write counter went down: the cache restarted or its statistics were reset", id)
		}
		w.Classes = append(w.Classes, ClassWindow{ID: id, Written: c.Written - pc.Written,
			Occupancy: (pc.Occupancy + c.Occupancy) / 2, Dirty: c.Dirty})
	}
	return w, ""
}

// Window is the caches' deltas over one window.
type Window struct {
	Start, End time.Time
	Caches     []CacheWindow
	// Skipped says, per cache left out, why ("node/device: reason").
	Skipped []string
}

// Tracker keeps the observations of one policy's caches between windows. Not safe for
// concurrent use.
type Tracker struct {
	start    time.Time
	baseline map[string]Sample
	// Last is the most recent complete window (nil before the first).
	Last *Window
}

// Observe records the samples taken at now, keyed by cache. Once the open window is at
// least length old it closes: every cache with a baseline yields its delta or a skip, and
// the samples become the next baselines. A cache first seen mid-window waits for the next
// window, so every cache of a window spans the same time. It reports whether a window closed.
func (t *Tracker) Observe(now time.Time, samples map[string]Sample, length time.Duration) bool {
	if len(t.baseline) == 0 {
		if len(samples) > 0 {
			t.start, t.baseline = now, maps.Clone(samples)
		}
		return false
	}
	if now.Sub(t.start) < length {
		return false
	}
	w := &Window{Start: t.start, End: now}
	for _, key := range slices.Sorted(maps.Keys(t.baseline)) {
		cur, ok := samples[key]
		if !ok {
			w.Skipped = append(w.Skipped, key+": no longer reported")
			continue
		}
		cw, skip := Delta(key, t.baseline[key], cur)
		if skip != "" {
			w.Skipped = append(w.Skipped, key+": "+skip)
			continue
		}
		w.Caches = append(w.Caches, cw)
	}
	t.Last, t.start, t.baseline = w, now, maps.Clone(samples)
	if len(samples) == 0 {
		t.start = time.Time{}
	}
	return true
}

// Since is when the open window started and how many caches it observes (zero before the
// first sample).
func (t *Tracker) Since() (time.Time, int) { return t.start, len(t.baseline) }
