package dbsizing

import (
	"fmt"
	"time"
)

// Sample is one reading of an OSD's BlueFS use.
type Sample struct {
	Time time.Time
	// DBUsedBytes is BlueFS's use of the DB device (db_used_bytes).
	DBUsedBytes uint64
	// SlowUsedBytes is BlueFS's use of the slow device (slow_used_bytes): > 0 has spilled.
	SlowUsedBytes uint64
}

// Forecast says when a slot spills at the observed growth.
type Forecast struct {
	// Spilled: BlueFS already uses the slow device.
	Spilled bool
	// Known: Date is a forecast (growth was positive over at least MinWindow).
	Known bool
	Date  time.Time
	// GrowthBytesPerDay is the least-squares slope of db_used_bytes over the samples (also
	// after a spill; 0 with under minWindow of samples).
	GrowthBytesPerDay float64
	// Reason says why there is no date, or that the slot is already within the reserve.
	Reason string
}

// MinWindow is the shortest span of samples a forecast is made from.
const MinWindow = 10 * time.Minute

// SpillForecast fits db_used_bytes over the samples (in time order) with least squares and
// extrapolates to the point where less than reserveBytes of the DB device (dbTotalBytes,
// BlueFS's db_total_bytes) is left. BlueFS spills when one allocation does not fit, not when
// the device is full: on Ceph 16.2 the RocksDB WAL, growing past its preallocated file while
// a memtable fills, spilled 281 MiB with 182 MiB of a 486 MiB DB device free (test/ceph,
// docs/osd-table.md); callers pass a write buffer (write_buffer_size) as the reserve. The
// last sample decides whether the slot has spilled already; a slot already within the
// reserve is forecast to spill at the last sample.
func SpillForecast(samples []Sample, dbTotalBytes, reserveBytes uint64, minWindow time.Duration) Forecast {
	if len(samples) == 0 {
		return Forecast{Reason: "no sample yet"}
	}
	last := samples[len(samples)-1]
	if last.SlowUsedBytes > 0 {
		f := Forecast{Spilled: true}
		f.GrowthBytesPerDay, _ = growth(samples, minWindow)
		return f
	}
	if dbTotalBytes == 0 {
		return Forecast{Reason: "the OSD has no dedicated DB device"}
	}
	if last.DBUsedBytes+reserveBytes >= dbTotalBytes {
		return Forecast{Known: true, Date: last.Time, Reason: "less than the reserve is left"}
	}
	perDay, reason := growth(samples, minWindow)
	if reason != "" {
		return Forecast{Reason: reason}
	}
	slope := perDay / 86400 // bytes per second
	f := Forecast{GrowthBytesPerDay: perDay}
	if slope <= 0 {
		f.Reason = "db_used_bytes is not growing"
		return f
	}
	left := float64(dbTotalBytes) - float64(reserveBytes) - float64(last.DBUsedBytes)
	secs := left / slope
	const maxSecs = 100 * 365 * 86400
	if secs > maxSecs {
		f.Reason = "more than 100 years at this growth"
		return f
	}
	f.Known = true
	f.Date = last.Time.Add(time.Duration(secs * float64(time.Second)))
	return f
}

// growth is the least-squares slope of db_used_bytes in bytes per day, or why there is none.
func growth(samples []Sample, minWindow time.Duration) (float64, string) {
	span := samples[len(samples)-1].Time.Sub(samples[0].Time)
	if len(samples) < 2 || span < minWindow {
		return 0, fmt.Sprintf("%s of samples, %s needed", span.Round(time.Second), minWindow)
	}
	t0 := samples[0].Time
	var n, sx, sy, sxx, sxy float64
	for _, s := range samples {
		x := s.Time.Sub(t0).Seconds()
		y := float64(s.DBUsedBytes)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	den := n*sxx - sx*sx
	if den <= 0 {
		return 0, "samples at one instant"
	}
	return (n*sxy - sx*sy) / den * 86400, ""
}
