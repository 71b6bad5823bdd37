package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Node is the page of one node: its devices, α_tier, its Open CAS cache per IO class
// and the BlueFS usage of its OSDs.
func Node() (dashboard.Dashboard, error) {
	const m = `node="$node", device=~"$device"` // device panels
	const n = `node="$node"`                    // node-wide panels
	d := func(tmpl string) string { return sel(m, tmpl) }
	nd := func(tmpl string) string { return sel(n, tmpl) }

	devices := joinedTable("Devices",
		"One row per device of the node. Wear-out date: the earlier of the percentage-used and rated-writes projections "+
			"(empty: no wear, insufficient data or beyond 100 years). Write rate: host bytes per second over the last hour.",
		24, 9, []string{"instance", "job", "stable_path"}, "Wear-out date", false,
		column{ref: "A", expr: d(`max by (node, device, model, serial, tier, media) (prism_device_info{})`)},
		column{ref: "B", name: "Wear", unit: "percentunit", steps: wearSteps,
			expr: d(`max by (node, device) (prism_device_percentage_used_ratio{})`)},
		column{ref: "C", name: "Wear-out date", unit: "dateTimeAsIso",
			expr: d(`1000 * max by (node, device) (prism_device_wearout_timestamp_seconds{})`)},
		column{ref: "D", name: "WAF", unit: "none",
			expr: d(`max by (node, device) (prism_device_write_amplification_ratio{})`)},
		column{ref: "E", name: "DWPD spent", unit: "none",
			expr: d(`max by (node, device) (prism_device_dwpd_lifetime{})`)},
		column{ref: "F", name: "DWPD rated", unit: "none",
			expr: d(`max by (node, device) (prism_device_rated_dwpd{})`)},
		column{ref: "G", name: "Write rate (1 h)", unit: "Bps",
			expr: d(`max by (node, device) (rate(prism_device_host_written_bytes_total{}[1h]))`)},
		column{ref: "H", name: "Temperature", unit: "celsius",
			expr: d(`max by (node, device) (prism_device_temperature_celsius{})`)},
		column{ref: "I", name: "Spare", unit: "percentunit",
			expr: d(`max by (node, device) (prism_device_available_spare_ratio{})`)},
		column{ref: "J", name: "Critical warning", unit: "none", steps: countSteps,
			expr: d(`max by (node, device) (prism_device_critical_warning{})`)},
	).OverrideByName("device", []dashboard.DynamicConfigValue{
		link("Device details", "/d/"+UIDDevice+"?var-node=${node}&var-device=${__value.raw}&${datasource:queryparam}&${__url_time_range}"),
	})

	b := newBoard(UIDNode, "Prism / Endurance node",
		"One node's drives: wear, WAF, DWPD, writes, temperature and spare per device; α_tier over time; Open CAS cache per IO class.").
		WithVariable(datasourceVar()).
		WithVariable(labelVar("node", "Node", "", false)).
		WithVariable(labelVar("device", "Device", `{node="$node"}`, true)).
		WithRow(row("Devices")).
		WithPanel(devices).
		WithPanel(series("Wear (percentage used)", "NVMe percentage used / ATA wear indicator per device.", "percentunit", 12, 8,
			rangeQ("A", d(`max by (device) (prism_device_percentage_used_ratio{})`), "{{device}}"))).
		WithPanel(series("Days until projected wear-out", "Days from now to each device's projected wear-out date.", "d", 12, 8,
			rangeQ("A", d(`max by (device) ((prism_device_wearout_timestamp_seconds{} - time()) / 86400)`), "{{device}}"))).
		WithPanel(series("Write amplification (WAF)", "Lifetime media ÷ host bytes written per device; absent without media writes.", "none", 8, 8,
			rangeQ("A", d(`max by (device) (prism_device_write_amplification_ratio{})`), "{{device}}"))).
		WithPanel(series("DWPD spent vs rated",
			"Lifetime drive writes per power-on day (solid) against the rated DWPD (dashed).", "none", 8, 8,
			rangeQ("A", d(`max by (device) (prism_device_dwpd_lifetime{})`), "{{device}} spent"),
			rangeQ("B", d(`max by (device) (prism_device_rated_dwpd{})`), "{{device}} rated")).
			OverrideByQuery("B", []dashboard.DynamicConfigValue{{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []any{10.0, 10.0}}}})).
		WithPanel(series("Bytes written: host and media", "Host and media (NAND) bytes written per second per device.", "Bps", 8, 8,
			rangeQ("A", d(`max by (device) (rate(prism_device_host_written_bytes_total{}[$__rate_interval]))`), "{{device}} host"),
			rangeQ("B", d(`max by (device) (rate(prism_device_media_written_bytes_total{}[$__rate_interval]))`), "{{device}} media"))).
		WithPanel(series("Temperature", "Composite temperature per device.", "celsius", 12, 7,
			rangeQ("A", d(`max by (device) (prism_device_temperature_celsius{})`), "{{device}}"))).
		WithPanel(series("Available spare", "NVMe available spare (solid) and the threshold below which the drive warns (dashed).", "percentunit", 12, 7,
			rangeQ("A", d(`max by (device) (prism_device_available_spare_ratio{})`), "{{device}} spare"),
			rangeQ("B", d(`max by (device) (prism_device_available_spare_threshold_ratio{})`), "{{device}} threshold")).
			OverrideByQuery("B", []dashboard.DynamicConfigValue{{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []any{10.0, 10.0}}}})).
		WithRow(row("Tiering (α_tier)")).
		WithPanel(series("α_tier — share of host writes kept off QLC",
			"1 − QLC host writes ÷ (QLC + fast-tier host writes) over the agent's lifetime window.", "percentunit", 12, 8,
			rangeQ("A", nd(`max by (node) (prism_node_qlc_write_reduction_ratio{})`), "α_tier {{node}}")).
			Min(0).Max(1)).
		WithPanel(series("Host writes by tier", "Host bytes written per second, summed per tier.", "Bps", 12, 8,
			rangeQ("A", nd(`sum by (tier) (rate(prism_device_host_written_bytes_total{}[$__rate_interval]) * on (node, device) group_left (tier) prism_device_info{})`), "{{tier}}")).
			Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))).
		WithRow(row("Cache (Open CAS)")).
		WithPanel(series("Cache occupancy and dirty", "Occupied and dirty share of each cache.", "percentunit", 8, 8,
			rangeQ("A", nd(`max by (cache) (prism_cache_occupancy_ratio{})`), "cache {{cache}} occupied"),
			rangeQ("B", nd(`max by (cache) (prism_cache_dirty_ratio{})`), "cache {{cache}} dirty")).
			Min(0).Max(1)).
		WithPanel(series("Occupancy per IO class", "Bytes each IO class occupies in the cache.", "bytes", 8, 8,
			rangeQ("A", nd(`sum by (class_name) (prism_cache_class_occupancy_bytes{})`), "{{class_name}}")).
			Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))).
		WithPanel(series("Dirty per IO class", "Dirty bytes per IO class: written to the fast tier, not yet to QLC.", "bytes", 8, 8,
			rangeQ("A", nd(`sum by (class_name) (prism_cache_class_dirty_bytes{})`), "{{class_name}}")).
			Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))).
		WithPanel(series("Written to QLC per IO class", "Bytes per second each IO class writes to the core (QLC) device.", "Bps", 8, 8,
			rangeQ("A", nd(`sum by (class_name) (rate(prism_cache_class_core_written_bytes_total{}[$__rate_interval]))`), "{{class_name}}"))).
		WithPanel(series("Hit ratio per IO class", "Hits ÷ (hits + misses) per IO class, both directions.", "percentunit", 8, 8,
			rangeQ("A", nd(`sum by (class_name) (rate(prism_cache_class_hits_total{}[$__rate_interval])) / (sum by (class_name) (rate(prism_cache_class_hits_total{}[$__rate_interval])) + sum by (class_name) (rate(prism_cache_class_misses_total{}[$__rate_interval])))`), "{{class_name}}"))).
		WithPanel(series("Write invalidation β per IO class",
			"β = writes ÷ occupancy over the window: how often a class's cached data is overwritten while still in the cache.", "none", 8, 8,
			rangeQ("A", nd(`max by (class_name) (prism_cache_class_write_invalidation_ratio{})`), "{{class_name}}"))).
		WithPanel(series("Oldest dirty data", "How long the oldest dirty data of each cache has been dirty.", "s", 12, 7,
			rangeQ("A", nd(`max by (cache) (prism_cache_dirty_age_seconds{})`), "cache {{cache}}"))).
		WithPanel(single("Caches failed", "Caches in a failed, not running or incomplete state, with cache device errors, or with an inactive core.", "none", countSteps, 12,
			statQ("A", nd(`sum(prism_cache_failed{})`), "failed"))).
		WithRow(row("Ceph BlueFS")).
		WithPanel(series("BlueFS DB used and spilled to the slow device",
			"Per OSD on this node: BlueFS bytes on the fast DB partition (solid) and spilled to the slow QLC device (dashed; should be 0).", "bytes", 24, 8,
			rangeQ("A", `max by (ceph_daemon) (ceph_bluefs_db_used_bytes * on (ceph_daemon) group_left () max by (ceph_daemon) (ceph_disk_occupation{instance="$node"}))`, "{{ceph_daemon}} DB"),
			rangeQ("B", `max by (ceph_daemon) (ceph_bluefs_slow_used_bytes * on (ceph_daemon) group_left () max by (ceph_daemon) (ceph_disk_occupation{instance="$node"}))`, "{{ceph_daemon}} slow")).
			OverrideByQuery("B", []dashboard.DynamicConfigValue{{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []any{10.0, 10.0}}}}))
	withOSDTable(b).
		WithRow(row("Agent")).
		WithPanel(series("SMART / log-page read errors", "Failed reads per device and source over the last hour.", "none", 12, 7,
			rangeQ("A", nd(`sum by (device, source) (increase(prism_device_collect_errors_total{}[1h]))`), "{{device}} {{source}}"))).
		WithPanel(single("Inventory age", "Seconds since the agent's last inventory of this node.", "s", plainSteps, 6,
			statQ("A", nd(`time() - max(prism_node_inventory_timestamp_seconds{})`), "age"))).
		WithPanel(joinedTable("Host bytes source", "Where each device's host-written bytes come from: nvme-smart, ata-smart or sysfs.", 6, 7,
			[]string{"instance", "job", "stable_path", "node"}, "", false,
			column{ref: "A", expr: nd(`max by (node, device, source) (prism_device_host_written_bytes_source{})`)}))
	return finish(b.Build())
}
