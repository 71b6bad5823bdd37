package osdstats

import (
	"math"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Summary is the StorageNode's osds list from the last poll; false before the first poll
// succeeded or when the last listing failed (the published list then stays as it was).
func (c *Collector) Summary() ([]prismv1.OSDStatus, bool) {
	c.mu.Lock()
	polled, listErr := c.osds != nil, c.listErr
	c.mu.Unlock()
	if !polled || listErr != "" {
		return nil, false
	}
	return Summarize(c.OSDs()), true
}

// Summarize turns the OSDs into their status summary, rounded so it changes only with the
// table: bytes and ratios to two significant digits, the forecast to the hour. Pure.
func Summarize(osds []OSD) []prismv1.OSDStatus {
	var out []prismv1.OSDStatus
	for _, o := range osds {
		s := prismv1.OSDStatus{ID: int32(o.ID)}
		if o.Known {
			s.DBTotalBytes, s.DBUsedBytes, s.SlowUsedBytes = round2(o.DBTotal), round2(o.DBUsed), round2(o.SlowUsed)
			s.Spilled = o.SlowUsed > 0
		}
		if a := o.Advice; a != nil {
			cur := int32(a.Current)
			s.LevelsOnFast = &cur
			for _, opt := range a.Options {
				s.SlotAdvice = append(s.SlotAdvice, prismv1.OSDSlotOption{Level: int32(opt.Level), SlotBytes: int64(opt.SlotBytes)})
			}
		}
		if f := o.Forecast; f.Known {
			t := metav1.NewTime(f.Date.UTC().Truncate(time.Hour))
			s.SpillForecastTime = &t
		}
		for _, r := range o.Rows {
			c := prismv1.OSDDataClass{Name: r.Class}
			if r.Occupied != nil {
				v := round2(*r.Occupied)
				c.OccupiedBytes = &v
			}
			if r.PerDay != nil {
				v := round2(uint64(math.Max(0, *r.PerDay)))
				c.WrittenBytesPerDay = &v
			}
			if r.Share != nil {
				c.WriteShare = decimal(*r.Share)
			}
			if r.Beta != nil {
				c.Beta = decimal(*r.Beta)
			}
			s.Classes = append(s.Classes, c)
		}
		var msgs []string
		if len(o.Errors) > 0 {
			msgs = append(msgs, "last read: "+strings.Join(o.Errors, "; "))
		}
		if o.Last != nil && o.Last.LevelsOff {
			msgs = append(msgs, "RocksDB level statistics off (rocksdb_perf and rocksdb_collect_compaction_stats are false)")
		}
		if o.Last != nil && o.Last.LevelsUnsupported {
			msgs = append(msgs, "no RocksDB level statistics: the OSD has no dump_objectstore_kv_stats (yet)")
		}
		if msg := strings.Join(msgs, "; "); len(msg) > 1024 {
			s.Message = msg[:1021] + "..."
		} else {
			s.Message = msg
		}
		out = append(out, s)
	}
	return out
}

// round2 keeps two significant digits: 123456789 -> 120000000.
func round2(v uint64) int64 {
	if v > math.MaxInt64 {
		v = math.MaxInt64
	}
	if v < 100 {
		return int64(v)
	}
	p := math.Pow(10, math.Floor(math.Log10(float64(v)))-1)
	return int64(math.Round(float64(v)/p) * p)
}

// decimal prints a ratio with two significant digits, no exponent ("0.23", "170", "0.0012").
func decimal(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	digits := 1 - int(math.Floor(math.Log10(v)))
	p := math.Pow(10, float64(digits))
	r := math.Round(v*p) / p
	return strconv.FormatFloat(r, 'f', -1, 64)
}
