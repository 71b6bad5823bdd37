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
			"Each class's share of the node's OSD writes between the agent's readings (levels excluded: they split sst and spilled); 0 while the OSDs wrote nothing.", "percentunit", 12, 8,
			// The total at least 1 byte a day: idle OSDs (every class 0 between two readings,
			// as in the e2e guest before any client write) gave 0/0, NaN in every series.
			rangeQ("A", nd(`sum by (class) (prism_osd_class_written_bytes_per_day{class!~"L[0-9]+"}) / scalar(clamp_min(sum(prism_osd_class_written_bytes_per_day{class!~"L[0-9]+"}), 1))`), "{{class}}")).
			Min(0).Max(1).
			Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))).
		WithPanel(series("DB used and the slot, per OSD",
			"BlueFS's use of each OSD's DB slot (solid) against the slot (dashed); the forecast extrapolates the solid line to a write buffer short of the dashed one.", "bytes", 12, 8,
			rangeQ("A", nd(`max by (ceph_daemon) (prism_osd_db_used_bytes{})`), "{{ceph_daemon}} used"),
			rangeQ("B", nd(`max by (ceph_daemon) (prism_osd_db_total_bytes{})`), "{{ceph_daemon}} slot")).
			OverrideByQuery("B", []dashboard.DynamicConfigValue{{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []any{10.0, 10.0}}}}))
}

// byPolicy joins a per-node series to its node's policy: prism_node_info{node,policy} (the
// agent's StorageNode spec.policyName) carries the policy once per node, so the per-OSD
// series need not repeat it. The "{}" take the dashboard's node matcher.
const byPolicy = ` * on (node) group_left (policy) prism_node_info{}`

// policySpillDays is the horizon of the per-policy spill count: PrismOSDDBSpillForecast's
// default and `kubectl prism osds`' "SPILL WITHIN 14 DAYS".
const policySpillDays = "14"

// withPolicyOSDs adds the per-policy view of the OSDs' DB slots to the overview: per policy,
// how many OSDs spilled or will within 14 days, the soonest spill, and per RocksDB level the
// one slot size that keeps it on the fast tier for every OSD of the policy (a policy gives its
// OSDs one spec.db.size) with the fast-tier capacity that size takes.
func withPolicyOSDs(b *dashboard.DashboardBuilder, q func(string) string) *dashboard.DashboardBuilder {
	osds := `prism_osd_db_total_bytes{}` + byPolicy
	policies := joinedTable("OSDs per policy: DB spill",
		"One row per HybridStoragePolicy (the node's StorageNode spec.policyName, from prism_node_info; empty: no policy manages the node), "+
			"over the OSDs whose admin sockets the agents read: how many spilled RocksDB onto their slow device, how many are forecast to spill within "+
			policySpillDays+" days (PrismOSDDBSpillForecast's default), the soonest forecast, the fewest levels any OSD's slot keeps on the fast tier "+
			"(-1: not even the WAL and L0), and the fast-tier bytes the OSDs' slots take now. The same as the first table of `kubectl prism osds`.",
		24, 6, []string{"instance", "job"}, "Spill within "+policySpillDays+" days", true,
		column{ref: "A", name: "OSDs", unit: "none", expr: q(`count by (policy) (` + osds + `)`)},
		column{ref: "B", name: "Spilled", unit: "none", steps: countSteps,
			expr: q(`sum by (policy) ((prism_osd_slow_used_bytes{} > bool 0)` + byPolicy + `)`)},
		column{ref: "C", name: "Spill within " + policySpillDays + " days", unit: "none", steps: countSteps,
			expr: q(`sum by (policy) ((prism_osd_db_spill_forecast_timestamp_seconds{} - time() < bool 86400 * ` + policySpillDays + `)` + byPolicy + `) or 0 * count by (policy) (` + osds + `)`)},
		column{ref: "D", name: "Soonest spill", unit: "dateTimeAsIso",
			expr: q(`1000 * min by (policy) (prism_osd_db_spill_forecast_timestamp_seconds{}` + byPolicy + `)`)},
		column{ref: "E", name: "Fewest levels on fast tier", unit: "none",
			expr: q(`min by (policy) (prism_osd_db_levels_on_fast{}` + byPolicy + `)`)},
		column{ref: "F", name: "DB slots now", unit: "bytes", expr: q(`sum by (policy) (` + osds + `)`)},
	)
	advice := `prism_osd_db_slot_advice_bytes{}` + byPolicy
	slots := joinedTable("DB slot per policy and level",
		"Per policy and RocksDB level: the smallest slot that keeps L0..L<level> with the WAL on the fast tier for every OSD of the policy "+
			"(the largest of their advised slots: a policy gives all its OSDs one spec.db.size), how many of its OSDs' slots keep that level now, "+
			"and the fast-tier bytes the policy's OSDs would take with slots resized to that size (OSDs × slot), to compare with the fast devices.",
		16, 8, []string{"instance", "job"}, "level", false,
		column{ref: "A", name: "Slot for every OSD", unit: "bytes", expr: q(`max by (policy, level) (` + advice + `)`)},
		column{ref: "B", name: "OSDs keeping it now", unit: "none",
			expr: q(`sum by (policy, level) ((prism_osd_db_slot_advice_bytes{} <= bool on (node, ceph_daemon) group_left () prism_osd_db_total_bytes{})` + byPolicy + `)`)},
		column{ref: "C", name: "Fast tier if resized", unit: "bytes",
			expr: q(`count by (policy, level) (` + advice + `) * max by (policy, level) (` + advice + `)`)},
	)
	fast := joinedTable("Fast devices per policy",
		"The capacity of the fast-tier devices (prism_device_info tier Fast) on each policy's nodes, which the slots above share with the caches.",
		8, 8, []string{"instance", "job"}, "", false,
		column{ref: "A", name: "Fast devices", unit: "bytes",
			expr: q(`sum by (policy) (prism_device_capacity_bytes{} * on (node, device) group_left () prism_device_info{tier="Fast"}` + byPolicy + `)`)},
	)
	return b.WithRow(row("OSDs per policy")).
		WithPanel(policies).
		WithPanel(slots).
		WithPanel(fast).
		WithPanel(series("Share of each policy's OSDs spilled or spilling within 7 days",
			"Per policy, the share of its OSDs that spilled RocksDB onto the slow device or are forecast to within 7 days: PrismPolicyDBSpillForecast's "+
				"expression with its default horizon, before its threshold (0.25). A policy-wide share means the policy's slot size is too small, not one OSD's workload.",
			"percentunit", 24, 8,
			rangeQ("A", q(`count by (policy) (((prism_osd_slow_used_bytes{} > 0) or (prism_osd_db_spill_forecast_timestamp_seconds{} - time() < 86400 * 7))`+byPolicy+`) / count by (policy) (`+osds+`)`), "{{policy}}")).
			Min(0).Max(1))
}
