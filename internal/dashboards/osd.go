package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// withOSDTable adds the per-OSD table (the agent's prism_osd_*, read from the OSD admin
// sockets on the node) to the node page: each OSD's slot, levels kept on the fast tier and
// spill forecast; its data classes (the seeds' PRISM table); how the write shares and β move.
func withOSDTable(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	const n = `node="$node"`
	nd := func(tmpl string) string { return sel(n, tmpl) }
	osds := joinedTable("OSDs: DB slot and spill forecast",
		"Per OSD whose admin socket is on this node (the Prism agent reads them): BlueFS's use of the DB slot and of the slow device, "+
			"the deepest RocksDB level the slot holds with the WAL and L0 (-1: not even those), "+
			"the DB's growth and the forecast spill date (empty: not growing, already spilled, or under 10 minutes of readings).",
		24, 7, []string{"node"}, "Spill forecast", false,
		column{ref: "A", name: "DB slot", unit: "bytes", expr: nd(`max by (node, ceph_daemon) (prism_osd_db_total_bytes{})`)},
		column{ref: "B", name: "DB used", unit: "bytes", expr: nd(`max by (node, ceph_daemon) (prism_osd_db_used_bytes{})`)},
		column{ref: "C", name: "Spilled", unit: "bytes", expr: nd(`max by (node, ceph_daemon) (prism_osd_slow_used_bytes{})`)},
		column{ref: "D", name: "Levels on fast tier", unit: "none", expr: nd(`max by (node, ceph_daemon) (prism_osd_db_levels_on_fast{})`)},
		column{ref: "E", name: "Growth per day", unit: "bytes", expr: nd(`max by (node, ceph_daemon) (prism_osd_db_growth_bytes_per_day{})`)},
		column{ref: "F", name: "Spill forecast", unit: "dateTimeAsIso", expr: nd(`1000 * max by (node, ceph_daemon) (prism_osd_db_spill_forecast_timestamp_seconds{})`)},
	)
	advice := joinedTable("DB slot advice",
		"The slot that keeps RocksDB levels L0..L<level> on the fast tier with the WAL, per OSD, from the level targets it is configured with "+
			"(max_bytes_for_level_base × multiplier^(n−1), the WAL up to max_total_wal_size, L0 at its compaction trigger) ÷ the 95 % BlueStore lets RocksDB fill.",
		24, 7, []string{"node"}, "level", false,
		column{ref: "A", name: "Slot", unit: "bytes", expr: nd(`max by (node, ceph_daemon, level) (prism_osd_db_slot_advice_bytes{})`)},
	)
	classes := joinedTable("OSD data classes (the PRISM table)",
		"Per OSD and data class: bytes held, bytes written per day (between the agent's last two readings), share of the OSD's writes "+
			"and β = bytes written since the OSD started ÷ bytes held. wal, bluefs-log, sst, spilled and objects add up to the OSD's writes; "+
			"L0..Ln split sst and spilled (only with rocksdb_perf and rocksdb_collect_compaction_stats on, and on Ceph 16.2 only the default column family).",
		24, 9, []string{"node"}, "Share of writes", true,
		column{ref: "A", name: "Occupied", unit: "bytes", expr: nd(`max by (node, ceph_daemon, class) (prism_osd_class_occupied_bytes{})`)},
		column{ref: "B", name: "Written per day", unit: "bytes", expr: nd(`max by (node, ceph_daemon, class) (prism_osd_class_written_bytes_per_day{})`)},
		column{ref: "C", name: "Share of writes", unit: "percentunit", expr: nd(`max by (node, ceph_daemon, class) (prism_osd_class_write_share_ratio{})`)},
		column{ref: "D", name: "β", unit: "none", expr: nd(`max by (node, ceph_daemon, class) (prism_osd_class_write_invalidation_ratio{})`)},
	)
	return b.WithRow(row("OSDs (Prism's per-OSD table)")).
		WithPanel(osds).
		WithPanel(classes).
		WithPanel(advice).
		WithPanel(series("Share of the OSDs' writes per data class",
			"Each class's share of the node's OSD writes between the agent's readings (levels excluded: they split sst and spilled).", "percentunit", 12, 8,
			rangeQ("A", nd(`sum by (class) (prism_osd_class_written_bytes_per_day{class!~"L[0-9]+"}) / scalar(sum(prism_osd_class_written_bytes_per_day{class!~"L[0-9]+"}))`), "{{class}}")).
			Min(0).Max(1).
			Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))).
		WithPanel(series("DB used and the slot, per OSD",
			"BlueFS's use of each OSD's DB slot (solid) against the slot (dashed); the forecast extrapolates the solid line to a write buffer short of the dashed one.", "bytes", 12, 8,
			rangeQ("A", nd(`max by (ceph_daemon) (prism_osd_db_used_bytes{})`), "{{ceph_daemon}} used"),
			rangeQ("B", nd(`max by (ceph_daemon) (prism_osd_db_total_bytes{})`), "{{ceph_daemon}} slot")).
			OverrideByQuery("B", []dashboard.DynamicConfigValue{{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []any{10.0, 10.0}}}}))
}
