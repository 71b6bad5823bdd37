package endurance

import (
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d float64) time.Time { return t0.Add(time.Duration(d * float64(day))) }

// daily returns one sample per day from..to (inclusive) built by f.
func daily(from, to int, f func(d int) Sample) []Sample {
	var s []Sample
	for d := from; d <= to; d++ {
		x := f(d)
		x.Time = at(float64(d))
		s = append(s, x)
	}
	return s
}

func near(t *testing.T, what string, got Value, want float64) {
	t.Helper()
	if !got.Known || math.Abs(got.V-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %+v, want %.15g", what, got, want)
	}
}

func nearDate(t *testing.T, what string, got Projection, status Status, want time.Time) {
	t.Helper()
	if got.Status != status {
		t.Fatalf("%s status = %s (%s), want %s", what, got.Status, got.Basis, status)
	}
	if d := got.Date.Sub(want); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("%s date = %s, want %s (off by %s)", what, got.Date, want, d)
	}
}

// A 15.36 TB QLC drive (D5-P5316 class) that has written 1 PB in 400
// power-on days at a steady 2.5 TB a day, rated 0.4 DWPD for 5 years.
func TestProject15TBOnePetabyte(t *testing.T) {
	s := daily(393, 400, func(d int) Sample {
		return Sample{HostBytesWritten: uint64(d) * 2_500_000_000_000, PowerOnHours: uint64(d) * 24, PercentUsed: UnknownPercent}
	})
	r := Rating{CapacityBytes: 15_360_000_000_000, RatedDWPD: 0.4, WarrantyYears: 5, WarrantyStart: t0}
	rep, err := Project(s, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// H = 400 × 2.5e12 = 1e15 B (1 PB).
	if rep.HostBytesWritten != 1e15 || rep.Samples != 8 || len(rep.Resets) != 0 {
		t.Fatalf("H = %d, %d samples, resets %v", rep.HostBytesWritten, rep.Samples, rep.Resets)
	}
	// Power-on days = 9600 h ÷ 24 = 400.
	near(t, "power-on days", rep.PowerOnDays, 400)
	// Lifetime DWPD = 1e15 ÷ 15.36e12 ÷ 400 = 65.1041666… ÷ 400 = 0.16276041666…
	near(t, "lifetime DWPD", rep.DWPDLifetime, 1e15/15.36e12/400)
	// 24 h window = days 399-400: 2.5e12 ÷ 15.36e12 ÷ 1 = 0.16276041666…
	near(t, "24h DWPD", rep.DWPD24h.DWPD, 2.5e12/15.36e12)
	near(t, "24h bytes/day", rep.DWPD24h.BytesPerDay, 2.5e12)
	// 7 d window = days 393-400: (1e15 − 982.5e12) ÷ 15.36e12 ÷ 7 = 17.5e12 ÷ 15.36e12 ÷ 7 = 0.16276041666…
	near(t, "7d DWPD", rep.DWPD7d.DWPD, 17.5e12/15.36e12/7)
	if rep.DWPD24h.Partial || rep.DWPD7d.Partial || rep.DWPD7d.Span != 7*day {
		t.Errorf("windows %+v %+v", rep.DWPD24h, rep.DWPD7d)
	}
	// Rated TBW from DWPD = 0.4 × 15.36 TB × 365 × 5 = 0.4 × 15.36 × 1825 = 11,212.8 TB.
	near(t, "rated TBW", rep.Rating.TBW, 11212.8)
	if !rep.Rating.TBWDerived || rep.Rating.DWPDDerived {
		t.Errorf("rating %+v", rep.Rating)
	}
	// Used 1e15 B = 1000 TB; remaining 11,212.8 − 1000 = 10,212.8 TB; 1000 ÷ 11,212.8 = 8.9183789…%.
	near(t, "TBW used", rep.TBWUsed, 1000)
	near(t, "TBW remaining", rep.TBWRemaining, 10212.8)
	near(t, "TBW used %", rep.TBWUsedPercent, 1000/11212.8*100)
	// No percent used reported: only the writes projection has data.
	if rep.ByPercent.Status != StatusInsufficientData {
		t.Errorf("by percent = %+v", rep.ByPercent)
	}
	// Writes: (11,212.8e12 − 1e15) ÷ 2.5e12 B/day = 10,212.8e12 ÷ 2.5e12 = 4085.12 days
	// = 4085 d + 0.12 × 24 h = 4085 d 2 h 52 m 48 s after day 400 (2025-02-04).
	want := at(400).Add(4085*day + 2*time.Hour + 52*time.Minute + 48*time.Second)
	nearDate(t, "by writes", rep.ByWrites, StatusOK, want)
	if rep.ByWrites.RatePerDay != 2.5e12 {
		t.Errorf("rate %v", rep.ByWrites.RatePerDay)
	}
	nearDate(t, "wear out", rep.WearOut, StatusOK, want)
	// Warranty ends 2024-01-01 + 5 y = 2029-01-01, long before 2036-03: not within warranty.
	if !rep.WarrantyEnd.Equal(time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)) || !rep.WarrantyCompared || rep.WearsOutInWarranty {
		t.Errorf("warranty end %s compared %v within %v", rep.WarrantyEnd, rep.WarrantyCompared, rep.WearsOutInWarranty)
	}
}

// Percent used 10,10,11,11,12,12,13,13 on days 0-7:
// x̄ = 3.5, ȳ = 11.5; Σ(x−x̄)(y−ȳ) = 5.25+3.75+0.75+0.25+0.25+0.75+3.75+5.25 = 20;
// Σ(x−x̄)² = 2 × (12.25+6.25+2.25+0.25) = 42; slope = 20/42 = 0.476190… %/day.
// Fitted at day 7: 11.5 + (20/42) × 3.5 = 79/6 = 13.1666… %.
// Days to 100 %: (100 − 79/6) ÷ (20/42) = (521/6) × (21/10) = 182.35 days = 182 d 8 h 24 m.
func TestProjectByPercentFit(t *testing.T) {
	pct := []int{10, 10, 11, 11, 12, 12, 13, 13}
	s := daily(0, 7, func(d int) Sample {
		return Sample{HostBytesWritten: uint64(d), PowerOnHours: uint64(24 * d), PercentUsed: pct[d]}
	})
	rep, err := Project(s, Rating{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := at(7).Add(182*day + 8*time.Hour + 24*time.Minute)
	nearDate(t, "by percent", rep.ByPercent, StatusOK, want)
	if math.Abs(rep.ByPercent.RatePerDay-20.0/42) > 1e-12 {
		t.Errorf("slope %v, want 20/42", rep.ByPercent.RatePerDay)
	}
	if rep.ByWrites.Status != StatusNoRating {
		t.Errorf("by writes %+v", rep.ByWrites)
	}
	nearDate(t, "wear out", rep.WearOut, StatusOK, want)
	// No capacity: DWPD unknown; no warranty start: nothing compared.
	if rep.DWPDLifetime.Known || rep.DWPD7d.DWPD.Known || rep.WarrantyCompared || !rep.WarrantyEnd.IsZero() {
		t.Errorf("unexpected figures %+v", rep)
	}
	near(t, "power-on days", rep.PowerOnDays, 7)
}

// The earlier of two dated projections wins: percent used reaches 100 in
// 182.35 days (as above), writes exhaust the rating in 13 days.
func TestWearOutTakesEarlier(t *testing.T) {
	pct := []int{10, 10, 11, 11, 12, 12, 13, 13}
	s := daily(0, 7, func(d int) Sample {
		// 0.5 TB/day against a 10 TB rating: (10e12 − 3.5e12) ÷ 0.5e12 = 13 days after day 7.
		return Sample{HostBytesWritten: uint64(d) * 500_000_000_000, PowerOnHours: uint64(24 * d), PercentUsed: pct[d]}
	})
	rep, err := Project(s, Rating{CapacityBytes: 1e12, RatedTBW: 10}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	nearDate(t, "by writes", rep.ByWrites, StatusOK, at(20))
	nearDate(t, "wear out", rep.WearOut, StatusOK, at(20))
	// No warranty years: the TBW-only rating cannot be turned into DWPD.
	if rep.Rating.DWPD.Known {
		t.Errorf("DWPD derived without warranty years: %+v", rep.Rating)
	}
}

func TestProjectWornOut(t *testing.T) {
	// 150 TB written against 100 TB rated; percent used 101 then 255 (NVMe ceiling).
	for _, p := range []int{101, 255} {
		s := daily(0, 3, func(d int) Sample {
			return Sample{HostBytesWritten: 147e12 + uint64(d)*1e12, PowerOnHours: 1000, PercentUsed: p}
		})
		rep, err := Project(s, Rating{CapacityBytes: 1e12, RatedTBW: 100}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		nearDate(t, "by percent", rep.ByPercent, StatusWornOut, at(3))
		nearDate(t, "by writes", rep.ByWrites, StatusWornOut, at(3))
		nearDate(t, "wear out", rep.WearOut, StatusWornOut, at(3))
		// 150 − 100 = −50 TB remaining; 150 ÷ 100 = 150 %.
		near(t, "TBW remaining", rep.TBWRemaining, -50)
		near(t, "TBW used %", rep.TBWUsedPercent, 150)
		if got := strings.Contains(strings.Join(rep.Notes, "\n"), "255"); got != (p == 255) {
			t.Errorf("percent %d: notes %q", p, rep.Notes)
		}
		if rep.PercentUsed != p {
			t.Errorf("percent used %d", rep.PercentUsed)
		}
	}
}

func TestProjectZeroRate(t *testing.T) {
	s := daily(0, 7, func(d int) Sample {
		return Sample{HostBytesWritten: 5e12, PowerOnHours: uint64(24 * d), PercentUsed: 4}
	})
	rep, err := Project(s, Rating{CapacityBytes: 1e12, RatedDWPD: 1, WarrantyYears: 5, WarrantyStart: t0}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]Projection{"percent": rep.ByPercent, "writes": rep.ByWrites, "wear out": rep.WearOut} {
		if p.Status != StatusNoWear || p.HasDate() || !p.Date.IsZero() {
			t.Errorf("%s: %+v", name, p)
		}
	}
	near(t, "7d DWPD", rep.DWPD7d.DWPD, 0)
	if rep.WarrantyCompared {
		t.Error("compared a missing date with the warranty")
	}
}

func TestProjectInsufficientData(t *testing.T) {
	s := []Sample{
		{Time: t0, HostBytesWritten: 1e12, PowerOnHours: 10, PercentUsed: 1},
		{Time: t0.Add(time.Hour), HostBytesWritten: 2e12, PowerOnHours: 11, PercentUsed: 1},
	}
	rep, err := Project(s, Rating{CapacityBytes: 1e12, RatedTBW: 600}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// One hour of data: less than half of either window, and under MinSpan (24 h).
	if rep.DWPD24h.DWPD.Known || !rep.DWPD24h.Partial || rep.DWPD24h.Span != time.Hour || rep.DWPD7d.BytesPerDay.Known {
		t.Errorf("windows %+v %+v", rep.DWPD24h, rep.DWPD7d)
	}
	for _, p := range []Projection{rep.ByPercent, rep.ByWrites, rep.WearOut} {
		if p.Status != StatusInsufficientData {
			t.Errorf("%+v", p)
		}
	}
	// Lifetime figures need only the last sample: 2e12 ÷ 1e12 ÷ (11 ÷ 24) = 4.3636… DWPD.
	near(t, "lifetime DWPD", rep.DWPDLifetime, 2/(11.0/24))
}

func TestProjectCounterReset(t *testing.T) {
	host := []uint64{5e12, 6e12, 1e12, 2e12, 3e12} // the drive was swapped before day 2
	s := daily(0, 4, func(d int) Sample {
		return Sample{HostBytesWritten: host[d], PowerOnHours: uint64(100 + 24*d), PercentUsed: UnknownPercent}
	})
	rep, err := Project(s, Rating{CapacityBytes: 1e12}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Resets) != 1 || rep.Resets[0] != (Reset{At: at(2), Counter: "host bytes written", From: 6e12, To: 1e12}) {
		t.Fatalf("resets %+v", rep.Resets)
	}
	if rep.Samples != 3 || !rep.First.Equal(at(2)) || rep.HostBytesWritten != 3e12 {
		t.Errorf("series %d samples from %s, H %d", rep.Samples, rep.First, rep.HostBytesWritten)
	}
	if !strings.Contains(rep.Notes[0], "host bytes written fell from 6000000000000 to 1000000000000") {
		t.Errorf("notes %q", rep.Notes)
	}
	// 24 h window after the reset: (3e12 − 2e12) ÷ 1e12 ÷ 1 = 1 DWPD. The 7 d window spans
	// only 2 days of the new series (< 3.5 d): unknown rather than mixed with the old drive.
	near(t, "24h DWPD", rep.DWPD24h.DWPD, 1)
	if rep.DWPD7d.DWPD.Known {
		t.Errorf("7d window crossed the reset: %+v", rep.DWPD7d)
	}
	// Every monotonic counter restarts the series.
	for name, pair := range map[string][2]Sample{
		"power-on hours":      {{PowerOnHours: 5}, {PowerOnHours: 4}},
		"media bytes written": {{MediaBytesWritten: 5}, {MediaBytesWritten: 4}},
		"percent used":        {{PercentUsed: 5}, {PercentUsed: 4}},
	} {
		if r, ok := counterReset(pair[0], pair[1]); !ok || r.Counter != name {
			t.Errorf("%s: %+v %v", name, r, ok)
		}
	}
	// Unknown readings (media 0, percent −1) are not resets.
	if _, ok := counterReset(Sample{MediaBytesWritten: 5, PercentUsed: 5}, Sample{PercentUsed: UnknownPercent}); ok {
		t.Error("unknown reading taken for a reset")
	}
	// But a counter that fell across an unknown reading is: media 5e12, unknown, 3e12.
	_, resets := series(daily(0, 2, func(d int) Sample {
		return Sample{MediaBytesWritten: []uint64{5e12, 0, 3e12}[d], PercentUsed: UnknownPercent}
	}))
	if len(resets) != 1 || resets[0].Counter != "media bytes written" || resets[0].From != 5e12 || !resets[0].At.Equal(at(2)) {
		t.Errorf("reset across a gap: %+v", resets)
	}
}

func TestProjectMediaAndWAF(t *testing.T) {
	// Media writes 3 × host: WAF = 3e12 … ÷ 1e12 … = 3. A media-based rating of 30 TB
	// spends media bytes: at day 7 media = 7 × 3e12 = 21e12 B = 21 TB, 9 TB left;
	// media rate 3e12 B/day → 9e12 ÷ 3e12 = 3 days after day 7.
	s := daily(0, 7, func(d int) Sample {
		return Sample{HostBytesWritten: uint64(d) * 1e12, MediaBytesWritten: uint64(d) * 3e12, PowerOnHours: uint64(24 * d), PercentUsed: UnknownPercent}
	})
	s[0].MediaBytesWritten = 0 // day 0 reports nothing: 0 means unknown, not a reset
	rep, err := Project(s, Rating{CapacityBytes: 1e12, RatedTBW: 30, MediaBased: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "WAF", rep.WAF, 3)
	near(t, "TBW used", rep.TBWUsed, 21)
	near(t, "TBW remaining", rep.TBWRemaining, 9)
	nearDate(t, "by writes", rep.ByWrites, StatusOK, at(10))

	// The same rating without media counters has nothing to spend against.
	for i := range s {
		s[i].MediaBytesWritten = 0
	}
	rep, _ = Project(s, Rating{CapacityBytes: 1e12, RatedTBW: 30, MediaBased: true}, Options{})
	if rep.WAF.Known || rep.TBWUsed.Known || rep.ByWrites.Status != StatusInsufficientData ||
		!strings.Contains(strings.Join(rep.Notes, "\n"), "does not report them") {
		t.Errorf("no media: %+v", rep)
	}
}

func TestProjectBeyondHorizon(t *testing.T) {
	// 1 B/day against 1 PB: 1e15 days.
	s := daily(0, 7, func(d int) Sample {
		return Sample{HostBytesWritten: uint64(d), PowerOnHours: uint64(24 * d), PercentUsed: UnknownPercent}
	})
	rep, err := Project(s, Rating{RatedTBW: 1000}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ByWrites.Status != StatusBeyondHorizon || rep.ByWrites.HasDate() || rep.WearOut.Status != StatusBeyondHorizon {
		t.Errorf("%+v / %+v", rep.ByWrites, rep.WearOut)
	}
}

func TestProjectOrderAndOptions(t *testing.T) {
	pct := []int{10, 10, 11, 11, 12, 12, 13, 13}
	s := daily(0, 7, func(d int) Sample {
		return Sample{HostBytesWritten: uint64(d), PowerOnHours: uint64(24 * d), PercentUsed: pct[d]}
	})
	rev := append([]Sample(nil), s...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	a, _ := Project(s, Rating{}, Options{})
	b, _ := Project(rev, Rating{}, Options{})
	if !a.ByPercent.Date.Equal(b.ByPercent.Date) || !rev[0].Time.Equal(at(7)) {
		t.Errorf("order changed the result: %s vs %s", a.ByPercent.Date, b.ByPercent.Date)
	}
	// A 2-day window keeps days 5-7 (12, 13, 13): x̄ = 1, ȳ = 38/3; Σ(x−x̄)(y−ȳ) = (−1)(−2/3) + 0 + (1)(1/3) = 1,
	// Σ(x−x̄)² = 2, slope = 0.5 %/day; fitted at day 7: 38/3 + 0.5 = 79/6;
	// (100 − 79/6) ÷ 0.5 = 521/3 = 173.666… days = 173 d 16 h.
	c, _ := Project(s, Rating{}, Options{Window: 2 * day})
	nearDate(t, "2-day window", c.ByPercent, StatusOK, at(7).Add(173*day+16*time.Hour))
	// MinSamples 9 > 8 samples available.
	d, _ := Project(s, Rating{}, Options{MinSamples: 9})
	if d.ByPercent.Status != StatusInsufficientData {
		t.Errorf("MinSamples ignored: %+v", d.ByPercent)
	}
}

func TestProjectErrors(t *testing.T) {
	ok := []Sample{{Time: t0, PercentUsed: 1}}
	tests := []struct {
		s    []Sample
		r    Rating
		want string
	}{
		{nil, Rating{}, "no samples"},
		{[]Sample{{PercentUsed: 256}}, Rating{}, "sample 0: percent used 256 outside -1..255"},
		{[]Sample{{PercentUsed: -2}}, Rating{}, "percent used -2"},
		{ok, Rating{RatedDWPD: -1}, "rated DWPD -1"},
		{ok, Rating{RatedTBW: math.NaN()}, "rated TBW NaN"},
		{ok, Rating{RatedTBW: math.Inf(1)}, "rated TBW +Inf"},
		{ok, Rating{WarrantyYears: -1}, "warranty years -1"},
	}
	for _, tt := range tests {
		if _, err := Project(tt.s, tt.r, Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
}

// A last sample without media bytes or percent used keeps the latest ones read.
func TestProjectCarriesLatestReadings(t *testing.T) {
	s := []Sample{
		{Time: at(0), HostBytesWritten: 1e12, MediaBytesWritten: 2e12, PercentUsed: 7, PowerOnHours: 24},
		{Time: at(1), HostBytesWritten: 2e12, PercentUsed: UnknownPercent, PowerOnHours: 48},
	}
	rep, err := Project(s, Rating{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.PercentUsed != 7 || rep.MediaBytesWritten != 2e12 || rep.HostBytesWritten != 2e12 || !rep.Last.Equal(at(1)) {
		t.Errorf("%+v", rep)
	}
	// WAF pairs counters read together: day 0, 2e12 ÷ 1e12 = 2.
	near(t, "WAF", rep.WAF, 2)
}
