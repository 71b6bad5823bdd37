package endurance

import (
	"fmt"
	"time"
)

// Project computes the endurance report of one drive from its samples (any
// order) and rating. See the package documentation for every formula.
func Project(samples []Sample, r Rating, o Options) (Report, error) {
	if err := validate(samples, r); err != nil {
		return Report{}, err
	}
	o = o.withDefaults()
	s, resets := series(samples)
	first, last := s[0], s[len(s)-1]
	last = latest(s) // a reading the last sample lacks comes from the one before
	rep := Report{
		First: first.Time, Last: last.Time, Samples: len(s), Resets: resets,
		HostBytesWritten:  last.HostBytesWritten,
		MediaBytesWritten: last.MediaBytesWritten,
		PercentUsed:       last.PercentUsed,
		WAF:               waf(s),
	}
	for _, x := range resets {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s fell from %d to %d at %s: drive replaced or counters reset, series restarted there",
			x.Counter, x.From, x.To, x.At.UTC().Format(time.RFC3339)))
	}
	if last.PercentUsed == MaxPercentUsed {
		rep.Notes = append(rep.Notes, "percent used is 255, the NVMe ceiling: the true value may be higher")
	}
	rep.PowerOnDays, rep.DWPDLifetime = lifetimeDWPD(last, r.CapacityBytes)
	rep.DWPD24h = windowRate(s, day, r.CapacityBytes)
	rep.DWPD7d = windowRate(s, 7*day, r.CapacityBytes)

	var notes []string
	rep.Rating, notes = deriveRating(r)
	rep.Notes = append(rep.Notes, notes...)
	if w, ok := written(last, r.MediaBased); ok && rep.Rating.TBW.Known {
		tb := float64(w) / bytesPerTB
		rep.TBWUsed = known(tb)
		rep.TBWRemaining = known(rep.Rating.TBW.V - tb)
		rep.TBWUsedPercent = known(tb / rep.Rating.TBW.V * 100)
	} else if r.MediaBased && !ok {
		rep.Notes = append(rep.Notes, "the rating counts media writes but the drive does not report them")
	}

	rep.ByPercent = byPercent(s, o)
	rep.ByWrites = byWrites(s, r.MediaBased, rep.Rating, o)
	rep.WearOut = earlier(rep.ByPercent, rep.ByWrites)
	if !r.WarrantyStart.IsZero() && r.WarrantyYears > 0 {
		rep.WarrantyEnd = r.WarrantyStart.AddDate(r.WarrantyYears, 0, 0)
		if rep.WearOut.HasDate() {
			rep.WarrantyCompared = true
			rep.WearsOutInWarranty = rep.WearOut.Date.Before(rep.WarrantyEnd)
		}
	}
	return rep, nil
}

// written is the counter the rating is spent against: host bytes (JESD218
// ratings are host writes) or, for a media-based rating, media bytes.
func written(x Sample, mediaBased bool) (uint64, bool) {
	if mediaBased {
		return x.MediaBytesWritten, x.MediaBytesWritten != 0
	}
	return x.HostBytesWritten, true
}

// byPercent fits p(t) = a + s·t (percent, days) by least squares over the
// window's samples with a known percent used and projects
// t_last + (100 − p(t_last)) ÷ s.
func byPercent(s []Sample, o Options) Projection {
	const basis = "least-squares slope of percent used over the window"
	last := s[len(s)-1].Time
	var pts []Sample
	for _, x := range window(s, o.Window) {
		if x.PercentUsed != UnknownPercent {
			pts = append(pts, x)
		}
	}
	if p := latest(s).PercentUsed; p >= 100 {
		return Projection{Status: StatusWornOut, Date: last, Basis: fmt.Sprintf("percent used is %d", p)}
	}
	if len(pts) < o.MinSamples || pts[len(pts)-1].Time.Sub(pts[0].Time) < o.MinSpan {
		return Projection{Status: StatusInsufficientData, Basis: fmt.Sprintf("%s: need %d samples spanning %s", basis, o.MinSamples, o.MinSpan)}
	}
	slope, intercept := fit(pts)
	if !(slope > 0) {
		return Projection{Status: StatusNoWear, RatePerDay: slope, Basis: basis}
	}
	now := intercept + slope*days(last.Sub(pts[0].Time))
	if now >= 100 {
		return Projection{Status: StatusWornOut, Date: last, RatePerDay: slope, Basis: basis + ": fitted value at the last sample reaches 100 %"}
	}
	return dated(last, last, (100-now)/slope, slope, basis)
}

// latest is the last sample with media bytes and percent used, when it
// lacks them, carried over from the latest sample that had them.
func latest(s []Sample) Sample {
	cur := s[0]
	for _, x := range s[1:] {
		cur = carry(cur, x)
	}
	return cur
}

// fit returns the least-squares slope (percent per day) and intercept of
// percent used against days since the first point:
// s = Σ(x−x̄)(y−ȳ) ÷ Σ(x−x̄)², a = ȳ − s·x̄.
func fit(pts []Sample) (slope, intercept float64) {
	n := float64(len(pts))
	var mx, my float64
	for _, p := range pts {
		mx += days(p.Time.Sub(pts[0].Time))
		my += float64(p.PercentUsed)
	}
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for _, p := range pts {
		dx := days(p.Time.Sub(pts[0].Time)) - mx
		sxy += dx * (float64(p.PercentUsed) - my)
		sxx += dx * dx
	}
	slope = sxy / sxx
	return slope, my - slope*mx
}

// byWrites divides the rating budget left by the recent write rate:
// t + (rated TBW × 10^12 − W) ÷ r, r in bytes per day over the window.
func byWrites(s []Sample, mediaBased bool, u RatingUsed, o Options) Projection {
	basis := "host bytes written against rated TBW"
	if mediaBased {
		basis = "media bytes written against rated TBW"
	}
	if !u.TBW.Known {
		return Projection{Status: StatusNoRating, Basis: "no rated TBW, and no DWPD with capacity and warranty years to derive it"}
	}
	last := s[len(s)-1].Time
	var pts []Sample
	for _, x := range window(s, o.Window) {
		if _, ok := written(x, mediaBased); ok {
			pts = append(pts, x)
		}
	}
	budget := u.TBW.V * bytesPerTB
	if len(pts) == 0 {
		return Projection{Status: StatusInsufficientData, Basis: basis + ": counter not reported"}
	}
	end := pts[len(pts)-1]
	wEnd, _ := written(end, mediaBased)
	if float64(wEnd) >= budget {
		return Projection{Status: StatusWornOut, Date: last, Basis: basis + ": rating already written"}
	}
	wStart, _ := written(pts[0], mediaBased)
	span := end.Time.Sub(pts[0].Time)
	if len(pts) < 2 || span < o.MinSpan {
		return Projection{Status: StatusInsufficientData, Basis: fmt.Sprintf("%s: need 2 samples spanning %s", basis, o.MinSpan)}
	}
	rate := float64(wEnd-wStart) / days(span)
	if !(rate > 0) {
		return Projection{Status: StatusNoWear, Basis: basis}
	}
	return dated(end.Time, last, (budget-float64(wEnd))/rate, rate, basis)
}

// dated returns anchor + d days, never earlier than last (a later
// sample without the counter cannot move the date back) and never further
// than the horizon, where time arithmetic would lose meaning.
func dated(anchor, last time.Time, d, rate float64, basis string) Projection {
	if !(d <= horizonDays) {
		return Projection{Status: StatusBeyondHorizon, RatePerDay: rate, Basis: basis}
	}
	date := anchor.Add(time.Duration(d * float64(day)))
	if date.Before(last) {
		return Projection{Status: StatusWornOut, Date: last, RatePerDay: rate, Basis: basis + ": extrapolated past the last sample"}
	}
	return Projection{Status: StatusOK, Date: date, RatePerDay: rate, Basis: basis}
}

// earlier picks the earlier dated projection. With none dated, it prefers a
// conclusive "no wear" or "beyond horizon" over missing data.
func earlier(byPct, byWrites Projection) Projection {
	switch {
	case byPct.HasDate() && byWrites.HasDate():
		if byWrites.Date.Before(byPct.Date) {
			return byWrites
		}
		return byPct
	case byPct.HasDate():
		return byPct
	case byWrites.HasDate():
		return byWrites
	}
	for _, p := range []Projection{byWrites, byPct} {
		if p.Status == StatusNoWear || p.Status == StatusBeyondHorizon {
			return p
		}
	}
	return byPct
}
