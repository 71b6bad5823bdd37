// Package exporter turns the agent's device readings into Prometheus metrics and endurance
// projections: it keeps a bounded history of samples per device (optionally on disk, so a
// restarted agent keeps its forecast) and projects wear-out from it.
package exporter

import (
	"encoding/json"
	"errors"
	"github.com/prism-storage/prism/internal/fsutil"
	"io/fs"
	"os"
	"time"

	"github.com/prism-storage/prism/internal/endurance"
)

// History keeps, per stable path, samples at least MinInterval apart for MaxAge.
type History struct {
	MinInterval time.Duration
	MaxAge      time.Duration
	Series      map[string][]endurance.Sample `json:"series"`
}

// NewHistory keeps a sample every 5 minutes for 8 days: enough for the 7-day slope.
func NewHistory() *History {
	return &History{MinInterval: 5 * time.Minute, MaxAge: 8 * 24 * time.Hour, Series: map[string][]endurance.Sample{}}
}

// Add appends s to the device's series unless the last sample is more recent than
// MinInterval, and drops samples older than MaxAge. It returns the series.
func (h *History) Add(key string, s endurance.Sample) []endurance.Sample {
	series := h.Series[key]
	if n := len(series); n > 0 && s.Time.Sub(series[n-1].Time) < h.MinInterval {
		return series
	}
	series = append(series, s)
	cut := 0
	for cut < len(series)-1 && s.Time.Sub(series[cut].Time) > h.MaxAge {
		cut++
	}
	series = series[cut:]
	h.Series[key] = series
	return series
}

// Load reads a history written by Save; a missing file is an empty history.
func Load(path string) (*History, error) {
	h := NewHistory()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(data, h); err != nil {
		return NewHistory(), err
	}
	if h.Series == nil {
		h.Series = map[string][]endurance.Sample{}
	}
	return h, nil
}

// Save writes the history atomically (temp file + rename), so a crash leaves the old one.
func (h *History) Save(path string) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, data, 0o644)
}
