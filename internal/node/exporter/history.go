// Package exporter turns the agent's device readings into Prometheus metrics and endurance
// projections: it keeps a bounded history of samples per device (optionally on disk, so a
// restarted agent keeps its forecast) and projects wear-out from it.
package exporter

import (
	"sort"
	"time"

	"github.com/prism-storage/prism/internal/endurance"
)

// History keeps, per stable path, the samples the endurance projections need: one every
// Spacing for MaxAge, plus the newest, which is at least MinInterval after the one before.
//
// Thinning is uniform on purpose: the percent-used projection is a least-squares fit over the
// 7-day window, and a finer recent tier would weigh the last day more than the six before it.
type History struct {
	MinInterval time.Duration // a new sample closer than this to the newest is not kept
	Spacing     time.Duration // samples older than the newest are kept at least this far apart
	MaxAge      time.Duration // samples older than this before the newest are dropped

	series map[string][]endurance.Sample
}

// NewHistory accepts a sample every 5 minutes and keeps one every 30 minutes for 8 days:
// enough for the 7-day slope (336 points) and the 24-hour rate; 385 samples per device.
func NewHistory() *History {
	return &History{MinInterval: 5 * time.Minute, Spacing: 30 * time.Minute, MaxAge: 8 * 24 * time.Hour,
		series: map[string][]endurance.Sample{}}
}

// Add records s for the device unless its newest sample is less than MinInterval before s
// (or after it: the clock went back). Times are kept in whole seconds, as the history file
// stores them. It returns the device's series and whether s was added; the series is only
// ever changed by Add appending, so an unchanged series gives the same projection.
func (h *History) Add(key string, s endurance.Sample) ([]endurance.Sample, bool) {
	s.Time = time.Unix(s.Time.Unix(), 0).UTC()
	series := h.series[key]
	n := len(series)
	if n > 0 && s.Time.Sub(series[n-1].Time) < h.MinInterval {
		return series, false
	}
	// The previous newest sample stays only if it is Spacing after the one before it.
	if n >= 2 && series[n-1].Time.Sub(series[n-2].Time) < h.Spacing {
		series = series[:n-1]
	}
	if n := len(series); n == cap(series) {
		size := max(n+1, 2*n)
		if full := h.full(); full > 0 {
			size = max(n+1, min(2*n, full))
		}
		grown := make([]endurance.Sample, n, size)
		copy(grown, series)
		series = grown
	}
	series = append(series, s)
	cut := 0
	for cut < len(series)-1 && s.Time.Sub(series[cut].Time) > h.MaxAge {
		cut++
	}
	if cut > 0 {
		// Shift in place: a full series keeps one array, and trimming leaves no garbage.
		series = series[:copy(series, series[cut:])]
	}
	h.series[key] = series
	return series, true
}

// full is the most samples a series holds while Add runs: one every Spacing over MaxAge,
// both ends included, the newest, and the one being added before the oldest is dropped.
// Series grow to it and no further: append's doubling left a filling series in an array
// up to twice its length (293 samples in 585), and every trim copied it to a new array.
func (h *History) full() int {
	if h.Spacing <= 0 {
		return 0 // no bound known: Add doubles the array
	}
	return int(h.MaxAge/h.Spacing) + 3
}

// Series returns the device's samples, oldest first; the caller must not modify them.
func (h *History) Series(key string) []endurance.Sample { return h.series[key] }

// Keys returns the stable paths with samples, sorted.
func (h *History) Keys() []string {
	keys := make([]string, 0, len(h.series))
	for k := range h.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Len is the number of samples kept, over all devices.
func (h *History) Len() int {
	n := 0
	for _, s := range h.series {
		n += len(s)
	}
	return n
}

// Expire drops the series of devices whose newest sample is more than MaxAge before now:
// drives that left the node, which Add never visits again.
func (h *History) Expire(now time.Time) {
	for k, s := range h.series {
		if now.Sub(s[len(s)-1].Time) > h.MaxAge {
			delete(h.series, k)
		}
	}
}

// newest is the time of the newest sample of any device (zero when empty).
func (h *History) newest() time.Time {
	var t time.Time
	for _, s := range h.series {
		if last := s[len(s)-1].Time; last.After(t) {
			t = last
		}
	}
	return t
}
