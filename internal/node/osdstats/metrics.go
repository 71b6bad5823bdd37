package osdstats

import (
	"github.com/prometheus/client_golang/prometheus"
)

var (
	osdLabels   = []string{"node", "ceph_daemon"}
	classLabels = []string{"node", "ceph_daemon", "class"}

	descClassOccupied = prometheus.NewDesc("prism_osd_class_occupied_bytes",
		"Bytes the OSD's data class holds: wal, bluefs-log and sst on the DB device (BlueFS's usage matrix, allocated space), spilled on the slow device (slow_used_bytes), objects on the data device (BlueStore's allocated), and RocksDB levels L0..Ln as RocksDB sizes them.", classLabels, nil)
	descClassWritten = prometheus.NewDesc("prism_osd_class_written_bytes_total",
		"Bytes the OSD wrote for the data class since the OSD started (BlueFS bytes_written_wal, logged_bytes, bytes_written_sst minus bytes_written_slow, bytes_written_slow; BlueStore write_big_bytes + write_small_bytes; RocksDB Write(GB) per level).", classLabels, nil)
	descClassPerDay = prometheus.NewDesc("prism_osd_class_written_bytes_per_day",
		"Bytes per day the data class wrote between the agent's last two readings.", classLabels, nil)
	descClassShare = prometheus.NewDesc("prism_osd_class_write_share_ratio",
		"The data class's part of the OSD's writes between the last two readings (wal, bluefs-log, sst, spilled and objects add up to 1; levels split sst and spilled).", classLabels, nil)
	descClassBeta = prometheus.NewDesc("prism_osd_class_write_invalidation_ratio",
		"β = bytes the class wrote since the OSD started ÷ bytes it holds: how many times over it rewrote its space.", classLabels, nil)
	descDBTotal     = prometheus.NewDesc("prism_osd_db_total_bytes", "The OSD's DB device as BlueFS owns it (db_total_bytes).", osdLabels, nil)
	descDBUsed      = prometheus.NewDesc("prism_osd_db_used_bytes", "BlueFS's use of the DB device (db_used_bytes).", osdLabels, nil)
	descSlowUsed    = prometheus.NewDesc("prism_osd_slow_used_bytes", "BlueFS's use of the slow (data) device: RocksDB files that spilled (slow_used_bytes).", osdLabels, nil)
	descLevelsOnDB  = prometheus.NewDesc("prism_osd_db_levels_on_fast", "The deepest RocksDB level the current DB slot holds with the WAL and L0 (-1: not even those), from the OSD's level targets.", osdLabels, nil)
	descSlotAdvice  = prometheus.NewDesc("prism_osd_db_slot_advice_bytes", "DB slot size that keeps RocksDB levels L0..L<level> on the fast tier, from the OSD's configured level targets.", []string{"node", "ceph_daemon", "level"}, nil)
	descGrowth      = prometheus.NewDesc("prism_osd_db_growth_bytes_per_day", "Growth of db_used_bytes per day (least squares over the agent's readings, up to a week).", osdLabels, nil)
	descSpillAt     = prometheus.NewDesc("prism_osd_db_spill_forecast_timestamp_seconds", "When the DB slot is forecast to spill onto the slow device at today's growth (less than a write buffer left), Unix seconds; absent when not growing or already spilled.", osdLabels, nil)
	descReadOK      = prometheus.NewDesc("prism_osd_read_ok", "1 when the agent's last reading of the OSD's admin socket read every part; 0 when a part failed (values kept from earlier readings).", osdLabels, nil)
	descLevelsKnown = prometheus.NewDesc("prism_osd_rocksdb_level_stats_enabled", "1 when the OSD reports RocksDB's per-level statistics (rocksdb_perf and rocksdb_collect_compaction_stats true), else 0.", osdLabels, nil)
)

// Describe sends nothing: the metric set depends on the OSDs (an unchecked collector).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect serves the last poll's values.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range Metrics(c.Node, c.OSDs()) {
		ch <- m
	}
}

// Metrics turns the OSDs into metrics. Pure.
func Metrics(node string, osds []OSD) []prometheus.Metric {
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	for _, o := range osds {
		id := "osd." + itoa(o.ID) // Ceph's own label for the daemon (ceph_bluefs_*, ceph_disk_occupation)
		ok := 1.0
		if len(o.Errors) > 0 {
			ok = 0
		}
		gauge(descReadOK, ok, node, id)
		if o.Last != nil {
			gauge(descLevelsKnown, b2f(o.Last.Levels != nil), node, id)
		}
		for _, r := range o.Rows {
			l := []string{node, id, r.Class}
			if r.Occupied != nil {
				gauge(descClassOccupied, float64(*r.Occupied), l...)
			}
			if r.Written != nil {
				out = append(out, prometheus.MustNewConstMetric(descClassWritten, prometheus.CounterValue, float64(*r.Written), l...))
			}
			if r.PerDay != nil {
				gauge(descClassPerDay, *r.PerDay, l...)
			}
			if r.Share != nil {
				gauge(descClassShare, *r.Share, l...)
			}
			if r.Beta != nil {
				gauge(descClassBeta, *r.Beta, l...)
			}
		}
		if o.Known {
			gauge(descDBTotal, float64(o.DBTotal), node, id)
			gauge(descDBUsed, float64(o.DBUsed), node, id)
			gauge(descSlowUsed, float64(o.SlowUsed), node, id)
		}
		if a := o.Advice; a != nil {
			gauge(descLevelsOnDB, float64(a.Current), node, id)
			for _, opt := range a.Options {
				gauge(descSlotAdvice, float64(opt.SlotBytes), node, id, itoa(opt.Level))
			}
		}
		f := o.Forecast
		if f.GrowthBytesPerDay != 0 {
			gauge(descGrowth, f.GrowthBytesPerDay, node, id)
		}
		if f.Known {
			gauge(descSpillAt, float64(f.Date.Unix()), node, id)
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
