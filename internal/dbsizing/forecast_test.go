package dbsizing

import (
	"testing"
	"time"
)

func TestSpillForecast(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	linear := func(n int, step time.Duration, start, perStep uint64) []Sample {
		var s []Sample
		for i := range n {
			s = append(s, Sample{Time: t0.Add(time.Duration(i) * step), DBUsedBytes: start + uint64(i)*perStep})
		}
		return s
	}
	for _, c := range []struct {
		name     string
		samples  []Sample
		total    uint64
		reserve  uint64
		spilled  bool
		known    bool
		date     time.Time
		perDay   float64
		noReason bool
	}{
		// 10 GiB used of 30, +1 GiB a day, 1 GiB reserve: 19 days after the last sample (day 4).
		{name: "steady growth", samples: linear(5, day, 10*gib, gib), total: 30 * gib, reserve: gib,
			known: true, date: t0.Add(4*day + 15*day), perDay: gib, noReason: true},
		{name: "no growth", samples: linear(5, day, 10*gib, 0), total: 30 * gib, reserve: gib},
		{name: "shrinking", samples: []Sample{{Time: t0, DBUsedBytes: 5 * gib}, {Time: t0.Add(day), DBUsedBytes: 4 * gib}}, total: 30 * gib},
		{name: "too short a window", samples: linear(5, time.Minute, 10*gib, mib), total: 30 * gib},
		{name: "one sample", samples: linear(1, time.Minute, 10*gib, 0), total: 30 * gib},
		{name: "none", total: 30 * gib},
		{name: "spilled", samples: []Sample{{Time: t0, DBUsedBytes: gib}, {Time: t0.Add(day), DBUsedBytes: gib, SlowUsedBytes: mib}}, total: 30 * gib, spilled: true, noReason: true},
		{name: "within the reserve already", samples: linear(2, day, 29*gib+mib, 0), total: 30 * gib, reserve: gib, known: true, date: t0.Add(day)},
		{name: "no DB device", samples: linear(3, day, gib, gib), total: 0},
		{name: "beyond 100 years", samples: linear(3, day, gib, 1), total: 30 * gib},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := SpillForecast(c.samples, c.total, c.reserve, MinWindow)
			if f.Spilled != c.spilled || f.Known != c.known {
				t.Fatalf("%+v: want spilled %v known %v", f, c.spilled, c.known)
			}
			if c.known && !f.Date.Equal(c.date) {
				t.Errorf("date %s, want %s", f.Date, c.date)
			}
			if c.perDay != 0 && (f.GrowthBytesPerDay < c.perDay*0.999 || f.GrowthBytesPerDay > c.perDay*1.001) {
				t.Errorf("growth %.0f bytes/day, want %.0f", f.GrowthBytesPerDay, c.perDay)
			}
			if (f.Reason == "") != c.noReason {
				t.Errorf("reason %q", f.Reason)
			}
		})
	}
}

// Least squares, not the last two points: a noisy series (a WAL recycled, a compaction
// freeing space) keeps its trend.
func TestSpillForecastNoisy(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var s []Sample
	for i := range 11 {
		used := uint64(10*gib) + uint64(i)*100*mib
		if i%2 == 1 {
			used += 300 * mib // every other reading catches a full memtable's WAL
		}
		s = append(s, Sample{Time: t0.Add(time.Duration(i) * time.Hour), DBUsedBytes: used})
	}
	f := SpillForecast(s, 20*gib, 0, MinWindow)
	perDay := f.GrowthBytesPerDay / (24 * 100 * mib)
	if !f.Known || perDay < 0.9 || perDay > 1.1 {
		t.Fatalf("%+v: growth %.2f × 100 MiB/h, want about 1", f, perDay)
	}
}
