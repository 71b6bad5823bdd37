package main

import (
	"os"
	"time"

	"github.com/prism-storage/prism/internal/endurance"
	"github.com/prism-storage/prism/internal/node/exporter"
)

// The simulated nodes' agents start with a wear history of SIMULATED PAST SAMPLES: a real
// agent keeps one sample per device every 30 minutes in its --state-dir, and a wear-out
// forecast needs days of them. The samples are what the simulated workload (workload.go)
// would have produced over the last 8 days at the drive's simulated rate, ending at the
// drive's recorded counters; they are written with the exporter's own History, as an agent
// writes its file. Nothing in them was measured.

// historySpan and historyStep are the simulated past: a week for the 7-day slope plus a day.
const (
	historySpan = 8*24*time.Hour - time.Hour
	historyStep = 30 * time.Minute
)

// seedHistory writes the simulated past samples of the drives that have lifetime counters into
// the agent state directory dir, and returns how many it wrote.
func seedHistory(dir string, drives []*simulatedDrive, now time.Time) (int, error) {
	h := exporter.NewHistory()
	for _, d := range drives {
		last, ok := d.reading.Sample()
		if !ok {
			continue // sysfs counts since boot: the agent keeps no history for it
		}
		for ago := historySpan; ago > 0; ago -= historyStep {
			h.Add(d.stablePath, pastSample(last, d.rate, ago, now))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	file, _ := exporter.StateFiles(dir)
	return h.Len(), h.WriteFile(file)
}

// pastSample is the sample the drive would have given ago before now, written at rate since:
// fewer host bytes, fewer power-on hours, and the percentage used lower by the share of those
// bytes in what the drive has used so far (the drive's own bytes per percent).
func pastSample(last endurance.Sample, rate float64, ago time.Duration, now time.Time) endurance.Sample {
	delta := uint64(rate * ago.Seconds())
	s := endurance.Sample{Time: now.Add(-ago), PercentUsed: last.PercentUsed}
	s.HostBytesWritten = last.HostBytesWritten - min(delta, last.HostBytesWritten)
	if last.MediaBytesWritten > 0 && last.HostBytesWritten > 0 {
		waf := float64(last.MediaBytesWritten) / float64(last.HostBytesWritten)
		s.MediaBytesWritten = uint64(float64(s.HostBytesWritten) * waf)
	}
	hours := uint64(ago.Hours())
	s.PowerOnHours = last.PowerOnHours - min(hours, last.PowerOnHours)
	if last.PercentUsed > 0 && last.PercentUsed != endurance.UnknownPercent && last.HostBytesWritten > 0 {
		perPercent := float64(last.HostBytesWritten) / float64(last.PercentUsed)
		s.PercentUsed = max(0, last.PercentUsed-int(float64(delta)/perPercent))
	}
	return s
}
