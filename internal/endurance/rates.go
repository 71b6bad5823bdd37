package endurance

import "time"

// days converts a duration to days of 24 h.
func days(d time.Duration) float64 { return d.Hours() / 24 }

// waf is media ÷ host bytes written of the latest sample that reports
// both, so the two counters are read at the same moment.
func waf(s []Sample) Value {
	for i := len(s) - 1; i >= 0; i-- {
		if x := s[i]; x.MediaBytesWritten != 0 && x.HostBytesWritten != 0 {
			return known(float64(x.MediaBytesWritten) / float64(x.HostBytesWritten))
		}
	}
	return Value{}
}

// lifetimeDWPD returns power-on days (P ÷ 24) and H ÷ C ÷ power-on days.
func lifetimeDWPD(last Sample, capacity uint64) (powerOnDays, dwpd Value) {
	if last.PowerOnHours == 0 {
		return Value{}, Value{}
	}
	d := float64(last.PowerOnHours) / 24
	if capacity == 0 {
		return known(d), Value{}
	}
	return known(d), known(float64(last.HostBytesWritten) / float64(capacity) / d)
}

// windowRate is the host write rate between the first and last samples of
// the window ending at the last sample, counted when they span ≥ w/2.
func windowRate(s []Sample, w time.Duration, capacity uint64) WindowRate {
	win := window(s, w)
	first, last := win[0], win[len(win)-1]
	r := WindowRate{Span: last.Time.Sub(first.Time)}
	r.Partial = r.Span < w
	if len(win) < 2 || r.Span < w/2 {
		return r
	}
	perDay := float64(last.HostBytesWritten-first.HostBytesWritten) / days(r.Span)
	r.BytesPerDay = known(perDay)
	if capacity > 0 {
		r.DWPD = known(perDay / float64(capacity))
	}
	return r
}
