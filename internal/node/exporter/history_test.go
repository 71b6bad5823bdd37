package exporter

import (
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/endurance"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestHistoryKeepsBoundedThinnedSeries(t *testing.T) {
	h := NewHistory()
	added := 0
	for i := 0; i < 10*24*60; i++ { // a poll every minute for 10 days
		if _, ok := h.Add("d", sampleAt(t0.Add(time.Duration(i)*time.Minute))); ok {
			added++
		}
	}
	if want := 10 * 24 * 12; added != want {
		t.Errorf("%d samples accepted from one-minute polls, want %d (one per 5 minutes)", added, want)
	}
	s := h.Series("d")
	if span := s[len(s)-1].Time.Sub(s[0].Time); span > h.MaxAge {
		t.Errorf("kept %s of history, max %s", span, h.MaxAge)
	}
	for i := 1; i < len(s)-1; i++ {
		if d := s[i].Time.Sub(s[i-1].Time); d < h.Spacing {
			t.Fatalf("samples %d and %d are %s apart, want at least %s", i-1, i, d, h.Spacing)
		}
	}
	if d := s[len(s)-1].Time.Sub(s[len(s)-2].Time); d < h.MinInterval {
		t.Errorf("newest sample %s after the one before", d)
	}
	// 8 days at 30 minutes, plus the newest.
	if len(s) < 8*48 || len(s) > 8*48+2 {
		t.Errorf("%d samples kept, want about %d", len(s), 8*48+1)
	}
	if last := s[len(s)-1].Time; !last.Equal(t0.Add((10*24*60 - 5) * time.Minute)) {
		t.Errorf("newest sample at %s, want the last accepted poll", last)
	}
}

// A full series settles at one array of the size a window needs: no reallocation when the
// oldest sample goes, and no growth beyond the window.
func TestHistoryKeepsOneArrayPerDevice(t *testing.T) {
	h := NewHistory()
	var array *endurance.Sample
	moved := 0
	for i := 0; i < 12*24*12; i++ { // a sample every 5 minutes for 12 days
		s, _ := h.Add("d", sampleAt(t0.Add(time.Duration(i)*5*time.Minute)))
		if cap(s) > h.full() {
			t.Fatalf("sample %d: series of %d samples in an array of %d, want at most %d", i, len(s), cap(s), h.full())
		}
		if i < 9*24*12 { // the first 8 days fill the window
			continue
		}
		if array != nil && &s[:1][0] != array {
			moved++
		}
		array = &s[:1][0]
	}
	if moved > 0 {
		t.Errorf("a full series moved to a new array %d times in 3 days, want never", moved)
	}
}

func TestHistoryIgnoresEarlySamplesAndTheClockGoingBack(t *testing.T) {
	h := NewHistory()
	h.Add("d", sampleAt(t0))
	for _, at := range []time.Duration{4 * time.Minute, -time.Hour} {
		if series, ok := h.Add("d", sampleAt(t0.Add(at))); ok || len(series) != 1 {
			t.Errorf("sample at %s added (%t), series of %d", at, ok, len(series))
		}
	}
	if _, ok := h.Add("d", sampleAt(t0.Add(5*time.Minute+time.Nanosecond))); !ok {
		t.Fatal("a sample 5 minutes later must be added")
	}
	if got := h.Series("d")[1].Time; !got.Equal(t0.Add(5 * time.Minute)) {
		t.Errorf("time kept as %s, want whole seconds", got)
	}
}

func TestHistoryExpiresDevicesThatLeft(t *testing.T) {
	h := NewHistory()
	h.Add("gone", sampleAt(t0))
	h.Add("here", sampleAt(t0.Add(8*24*time.Hour)))
	h.Expire(t0.Add(8 * 24 * time.Hour))
	if len(h.Keys()) != 2 {
		t.Fatalf("expired at exactly MaxAge: %v", h.Keys())
	}
	h.Expire(t0.Add(8*24*time.Hour + time.Second))
	if keys := h.Keys(); len(keys) != 1 || keys[0] != "here" {
		t.Fatalf("keys after expiry %v, want [here]", keys)
	}
}

// Thinning to 30 minutes must not move the projections: the same steadily wearing drive (1 %
// every 2 days, in whole percents as drives report it, 1 DWPD) projected from every 5-minute
// sample and from the thinned history.
func TestThinnedHistoryProjectsAsTheFullOne(t *testing.T) {
	h := NewHistory()
	var full []endurance.Sample
	for i := 0; i < 8*24*12; i++ {
		at := time.Duration(i) * 5 * time.Minute
		s := endurance.Sample{
			Time:             t0.Add(at),
			HostBytesWritten: 1e15 + uint64(at.Hours()*7.68e12/24),
			PercentUsed:      10 + int(at.Hours()/48),
			PowerOnHours:     5000 + uint64(at.Hours()),
		}
		full = append(full, s)
		h.Add("d", s)
	}
	rating := endurance.Rating{CapacityBytes: 7.68e12, RatedDWPD: 1, WarrantyYears: 5}
	a, err := endurance.Project(full, rating, endurance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := endurance.Project(h.Series("d"), rating, endurance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Series("d")) >= len(full)/5 {
		t.Fatalf("thinned to %d of %d samples", len(h.Series("d")), len(full))
	}
	for _, c := range []struct {
		name string
		a, b endurance.Projection
	}{{"by percent", a.ByPercent, b.ByPercent}, {"by writes", a.ByWrites, b.ByWrites}} {
		if !c.a.HasDate() || !c.b.HasDate() {
			t.Fatalf("%s: no date (full %+v, thinned %+v)", c.name, c.a, c.b)
		}
		// Within 1 % of the time left (half a year by percent, 5 years by writes).
		left := c.a.Date.Sub(a.Last)
		if d := c.a.Date.Sub(c.b.Date); d < -left/100 || d > left/100 {
			t.Errorf("%s: full history %s, thinned %s", c.name, c.a.Date, c.b.Date)
		}
	}
	if d := a.DWPD7d.DWPD.V - b.DWPD7d.DWPD.V; d < -0.001 || d > 0.001 {
		t.Errorf("7-day DWPD %.4f full, %.4f thinned", a.DWPD7d.DWPD.V, b.DWPD7d.DWPD.V)
	}
	if d := a.DWPD24h.DWPD.V - b.DWPD24h.DWPD.V; d < -0.001 || d > 0.001 {
		t.Errorf("24-hour DWPD %.4f full, %.4f thinned", a.DWPD24h.DWPD.V, b.DWPD24h.DWPD.V)
	}
}
