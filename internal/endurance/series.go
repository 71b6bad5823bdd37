package endurance

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// validate rejects inputs no drive can produce, so arithmetic below needs
// no further guards.
func validate(samples []Sample, r Rating) error {
	if len(samples) == 0 {
		return errors.New("endurance: no samples")
	}
	for i, s := range samples {
		if s.PercentUsed < UnknownPercent || s.PercentUsed > MaxPercentUsed {
			return fmt.Errorf("endurance: sample %d: percent used %d outside %d..%d", i, s.PercentUsed, UnknownPercent, MaxPercentUsed)
		}
	}
	for name, v := range map[string]float64{"rated DWPD": r.RatedDWPD, "rated TBW": r.RatedTBW} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("endurance: %s %v is not a finite non-negative number", name, v)
		}
	}
	if r.WarrantyYears < 0 || r.WarrantyYears > 100 {
		return fmt.Errorf("endurance: warranty years %d outside 0..100", r.WarrantyYears)
	}
	return nil
}

// series sorts a copy of the samples by time and returns the part after
// the last counter reset, with the resets found.
func series(samples []Sample) ([]Sample, []Reset) {
	s := append([]Sample(nil), samples...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Time.Before(s[j].Time) })
	start := 0
	var resets []Reset
	prev := s[0] // last known value of each counter in the current series
	for i := 1; i < len(s); i++ {
		if r, ok := counterReset(prev, s[i]); ok {
			resets = append(resets, r)
			start = i
			prev = s[i]
			continue
		}
		prev = carry(prev, s[i])
	}
	return s[start:], resets
}

// carry returns b with unknown readings (media 0, percent −1) replaced by
// the last known ones in a, so a counter that skips a sample is still
// compared with its previous value.
func carry(a, b Sample) Sample {
	if b.MediaBytesWritten == 0 {
		b.MediaBytesWritten = a.MediaBytesWritten
	}
	if b.PercentUsed == UnknownPercent {
		b.PercentUsed = a.PercentUsed
	}
	return b
}

// counterReset reports the first lifetime counter that went down from a to b.
func counterReset(a, b Sample) (Reset, bool) {
	type c struct {
		name     string
		from, to uint64
		ok       bool // both readings are known
	}
	for _, x := range []c{
		{"host bytes written", a.HostBytesWritten, b.HostBytesWritten, true},
		{"media bytes written", a.MediaBytesWritten, b.MediaBytesWritten, a.MediaBytesWritten != 0 && b.MediaBytesWritten != 0},
		{"power-on hours", a.PowerOnHours, b.PowerOnHours, true},
		{"percent used", uint64(max(a.PercentUsed, 0)), uint64(max(b.PercentUsed, 0)), a.PercentUsed >= 0 && b.PercentUsed >= 0},
	} {
		if x.ok && x.to < x.from {
			return Reset{At: b.Time, Counter: x.name, From: x.from, To: x.to}, true
		}
	}
	return Reset{}, false
}

// window returns the samples at or after last − w (s is sorted, non-empty).
func window(s []Sample, w time.Duration) []Sample {
	start := s[len(s)-1].Time.Add(-w)
	i := sort.Search(len(s), func(i int) bool { return !s[i].Time.Before(start) })
	return s[i:]
}
