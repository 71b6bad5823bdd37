package endurance

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// samplesFrom turns fuzz bytes into samples, 20 bytes each: minutes since t0
// (int32, may go backwards), host bytes, media bytes (uint32 × 1e6, so 0 =
// unknown is common), percent used (int16 folded into −1..255) and
// power-on hours (uint16).
func samplesFrom(b []byte) []Sample {
	var s []Sample
	le := binary.LittleEndian
	for ; len(b) >= 20; b = b[20:] {
		s = append(s, Sample{
			Time:              t0.Add(time.Duration(int32(le.Uint32(b[0:]))) * time.Minute),
			HostBytesWritten:  le.Uint64(b[4:]),
			MediaBytesWritten: uint64(le.Uint32(b[12:])) * 1e6,
			PercentUsed:       int(int16(le.Uint16(b[16:])))%257 - 1,
			PowerOnHours:      uint64(le.Uint16(b[18:])),
		})
	}
	return s
}

func FuzzProject(f *testing.F) {
	seed := func(s []Sample) []byte {
		var b []byte
		for _, x := range s {
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(x.Time.Sub(t0)/time.Minute)))
			b = binary.LittleEndian.AppendUint64(b, x.HostBytesWritten)
			b = binary.LittleEndian.AppendUint32(b, uint32(x.MediaBytesWritten/1e6))
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(x.PercentUsed+1)))
			b = binary.LittleEndian.AppendUint16(b, uint16(x.PowerOnHours))
		}
		return b
	}
	pct := []int{10, 10, 11, 11, 12, 12, 13, 13}
	f.Add(seed(daily(0, 7, func(d int) Sample {
		return Sample{HostBytesWritten: uint64(d) * 5e11, MediaBytesWritten: uint64(d) * 1e12, PowerOnHours: uint64(24 * d), PercentUsed: pct[d]}
	})), uint64(1e12), 0.4, 10.0, uint8(5), false, int64(7*day))
	f.Add([]byte{}, uint64(0), 0.0, 0.0, uint8(0), true, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, capacity uint64, dwpd, tbw float64, years uint8, media bool, window int64) {
		s := samplesFrom(b)
		r := Rating{CapacityBytes: capacity, RatedDWPD: dwpd, RatedTBW: tbw, WarrantyYears: int(years % 11), WarrantyStart: t0, MediaBased: media}
		rep, err := Project(s, r, Options{Window: time.Duration(window)})
		if err != nil {
			return
		}
		var last time.Time
		for _, x := range s {
			if x.Time.After(last) || last.IsZero() {
				last = x.Time
			}
		}
		if !rep.Last.Equal(last) {
			t.Fatalf("report ends %s, samples end %s", rep.Last, last)
		}
		for name, p := range map[string]Projection{"percent": rep.ByPercent, "writes": rep.ByWrites, "wear out": rep.WearOut} {
			if p.HasDate() && p.Date.Before(last) {
				t.Fatalf("%s: date %s before last sample %s (%+v)", name, p.Date, last, p)
			}
			if !p.HasDate() && !p.Date.IsZero() {
				t.Fatalf("%s: status %s with a date", name, p.Status)
			}
			if math.IsNaN(p.RatePerDay) {
				t.Fatalf("%s: NaN rate", name)
			}
		}
		if rep.ByPercent.HasDate() && rep.ByWrites.HasDate() {
			first := rep.ByPercent.Date
			if rep.ByWrites.Date.Before(first) {
				first = rep.ByWrites.Date
			}
			if !rep.WearOut.Date.Equal(first) {
				t.Fatalf("wear out %s is not the earlier of %s and %s", rep.WearOut.Date, rep.ByPercent.Date, rep.ByWrites.Date)
			}
		}
		for _, v := range []Value{rep.WAF, rep.DWPDLifetime, rep.DWPD24h.DWPD, rep.DWPD7d.DWPD, rep.TBWRemaining} {
			if v.Known && (math.IsNaN(v.V) || math.IsInf(v.V, 0)) {
				t.Fatalf("non-finite figure in %+v", rep)
			}
		}
	})
}
