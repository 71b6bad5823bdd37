package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// sel fills the label matchers of a selector into every "{}" of a query template.
func sel(matchers, tmpl string) string { return strings.ReplaceAll(tmpl, "{}", "{"+matchers+"}") }

// Overview is the cluster-wide dashboard: which node wears out first, when and why.
func Overview() (dashboard.Dashboard, error) {
	const m = `node=~"$node"`
	q := func(tmpl string) string { return sel(m, tmpl) }

	nodeLink := link("Node details", "/d/"+UIDNode+"?var-node=${__value.raw}&${datasource:queryparam}&${__url_time_range}")

	nodes := joinedTable("Nodes by soonest wear-out",
		"One row per node, soonest projected wear-out first. The worst device is the one with the earliest "+
			"projected wear-out date (prism_device_wearout_timestamp_seconds: the earlier of the percentage-used "+
			"and rated-writes projections). DWPD columns belong to the device that spent the largest share of its "+
			"rated DWPD; WAF is the highest lifetime media ÷ host ratio on the node; α_tier is the share of host writes "+
			"the fast tier kept off QLC. Nodes without a projection (no wear yet, insufficient data, beyond 100 years) have no date.",
		24, 12, []string{"instance", "job", "stable_path"}, "Wear-out date", false,
		column{ref: "A", name: "Wear-out date", unit: "dateTimeAsIso",
			expr: q(`1000 * max by (node, device, model, tier) (bottomk by (node) (1, prism_device_wearout_timestamp_seconds{}) * on (node, device) group_left (model, tier) prism_device_info{})`)},
		column{ref: "B", name: "Days left", unit: "d",
			expr: q(`(min by (node) (prism_device_wearout_timestamp_seconds{}) - time()) / 86400`)},
		column{ref: "C", name: "Worst wear", unit: "percentunit", steps: wearSteps,
			expr: q(`max by (node) (prism_device_percentage_used_ratio{})`)},
		column{ref: "D", name: "DWPD spent", unit: "none",
			expr: q(`max by (node) (prism_device_dwpd_lifetime{} and on (node, device) topk by (node) (1, prism_device_dwpd_lifetime{} / prism_device_rated_dwpd{}))`)},
		column{ref: "E", name: "DWPD rated", unit: "none",
			expr: q(`max by (node) (prism_device_rated_dwpd{} and on (node, device) topk by (node) (1, prism_device_dwpd_lifetime{} / prism_device_rated_dwpd{}))`)},
		column{ref: "F", name: "DWPD spent ÷ rated", unit: "percentunit", steps: ratioSteps,
			expr: q(`max by (node) (prism_device_dwpd_lifetime{} / prism_device_rated_dwpd{})`)},
		column{ref: "G", name: "WAF (max)", unit: "none",
			expr: q(`max by (node) (prism_device_write_amplification_ratio{})`)},
		column{ref: "H", name: "α_tier (writes kept off QLC)", unit: "percentunit",
			expr: q(`max by (node) (prism_node_qlc_write_reduction_ratio{})`)},
	).
		OverrideByName("node", []dashboard.DynamicConfigValue{nodeLink}).
		OverrideByName("device", []dashboard.DynamicConfigValue{{Id: "displayName", Value: "Worst device"}})

	soonest := joinedTable("Top $topn soonest wear-out devices",
		"The $topn devices with the earliest projected wear-out date (bottomk over prism_device_wearout_timestamp_seconds), "+
			"with their wear and warranty end. A wear-out date before the warranty end is flagged in red.",
		12, 10, []string{"instance", "job", "stable_path"}, "Wear-out date", false,
		column{ref: "A", name: "Wear-out date", unit: "dateTimeAsIso",
			expr: q(`1000 * max by (node, device, model, serial, tier) (bottomk($topn, prism_device_wearout_timestamp_seconds{}) * on (node, device) group_left (model, serial, tier) prism_device_info{})`)},
		column{ref: "B", name: "Wear", unit: "percentunit", steps: wearSteps,
			expr: q(`max by (node, device) (prism_device_percentage_used_ratio{} and on (node, device) bottomk($topn, prism_device_wearout_timestamp_seconds{}))`)},
		column{ref: "C", name: "Warranty end", unit: "dateTimeAsIso",
			expr: q(`1000 * max by (node, device) (prism_device_warranty_end_timestamp_seconds{} and on (node, device) bottomk($topn, prism_device_wearout_timestamp_seconds{}))`)},
		column{ref: "D", name: "Before warranty end", unit: "bool_yes_no", steps: countSteps,
			expr: q(`max by (node, device) ((prism_device_wearout_timestamp_seconds{} < bool prism_device_warranty_end_timestamp_seconds{}) and on (node, device) bottomk($topn, prism_device_wearout_timestamp_seconds{}))`)},
	).OverrideByName("node", []dashboard.DynamicConfigValue{nodeLink})

	mostWorn := joinedTable("Top $topn most worn devices",
		"The $topn devices with the highest percentage used (topk over prism_device_percentage_used_ratio; NVMe allows up to 255 %).",
		12, 10, []string{"instance", "job", "stable_path"}, "Wear", true,
		column{ref: "A", name: "Wear", unit: "percentunit", steps: wearSteps,
			expr: q(`max by (node, device, model, tier) (topk($topn, prism_device_percentage_used_ratio{}) * on (node, device) group_left (model, tier) prism_device_info{})`)},
		column{ref: "B", name: "WAF", unit: "none",
			expr: q(`max by (node, device) (prism_device_write_amplification_ratio{} and on (node, device) topk($topn, prism_device_percentage_used_ratio{}))`)},
		column{ref: "C", name: "Available spare", unit: "percentunit",
			expr: q(`max by (node, device) (prism_device_available_spare_ratio{} and on (node, device) topk($topn, prism_device_percentage_used_ratio{}))`)},
	).OverrideByName("node", []dashboard.DynamicConfigValue{nodeLink})

	b := newBoard(UIDOverview, "Prism / Endurance overview",
		"Per-node SSD endurance across the cluster: which drive wears out first, when, and why (WAF, DWPD spent vs rated, α_tier).").
		WithVariable(datasourceVar()).
		WithVariable(labelVar("node", "Node", "", true)).
		WithVariable(topnVar()).
		WithRow(row("Cluster")).
		WithPanel(single("Nodes", "Nodes with at least one device reported by the Prism agent.", "none", plainSteps, 4,
			statQ("A", q(`count(count by (node) (prism_device_info{}))`), "nodes"))).
		WithPanel(single("Devices", "Devices the Prism agents report.", "none", plainSteps, 4,
			statQ("A", q(`count(prism_device_info{})`), "devices"))).
		WithPanel(single("Worst wear", "Highest percentage used of any device.", "percentunit", wearSteps, 4,
			statQ("A", q(`max(prism_device_percentage_used_ratio{})`), "worst wear"))).
		WithPanel(single("Earliest wear-out", "Earliest projected wear-out date of any device.", "dateTimeAsIso", plainSteps, 4,
			statQ("A", q(`1000 * min(prism_device_wearout_timestamp_seconds{})`), "earliest wear-out"))).
		WithPanel(single("Wear-outs before warranty end", "Devices projected to wear out before their warranty ends.", "none", countSteps, 4,
			statQ("A", sel(m, `count(prism_device_wearout_timestamp_seconds{} < prism_device_warranty_end_timestamp_seconds{}) or vector(0)`), "devices"))).
		WithPanel(single("Critical warnings", "Devices with a non-zero NVMe critical warning bitmask.", "none", countSteps, 4,
			statQ("A", q(`count(prism_device_critical_warning{} > 0) or vector(0)`), "devices"))).
		WithRow(row("Per node")).
		WithPanel(nodes).
		WithRow(row("Wear-out timeline")).
		WithPanel(series("Days until wear-out — $topn soonest nodes",
			"Days from now to the earliest projected wear-out date on each node, for the $topn nodes that wear out first "+
				"(bottomk). A falling line means the projection is moving closer: the node is being written harder.",
			"d", 12, 9,
			rangeQ("A", q(`bottomk($topn, (min by (node) (prism_device_wearout_timestamp_seconds{}) - time()) / 86400)`), "{{node}}"))).
		WithPanel(series("Worst wear — $topn most worn nodes",
			"Highest percentage used on each node over time, for the $topn most worn nodes (topk).",
			"percentunit", 12, 9,
			rangeQ("A", q(`topk($topn, max by (node) (prism_device_percentage_used_ratio{}))`), "{{node}}"))).
		WithPanel(soonest).
		WithPanel(mostWorn).
		WithRow(row("Why: write amplification, DWPD, α_tier")).
		WithPanel(series("WAF — $topn highest devices",
			"Lifetime write amplification (media ÷ host bytes written) of the $topn devices with the highest WAF. "+
				"Absent for drives that do not publish media writes.",
			"none", 8, 9,
			rangeQ("A", q(`topk($topn, max by (node, device) (prism_device_write_amplification_ratio{}))`), "{{node}} {{device}}"))).
		WithPanel(series("DWPD spent ÷ rated — $topn highest devices",
			"Lifetime drive writes per power-on day divided by the rated DWPD. Above 100 % the drive is written faster than its rating allows for the warranty period.",
			"percentunit", 8, 9,
			rangeQ("A", q(`topk($topn, max by (node, device) (prism_device_dwpd_lifetime{} / prism_device_rated_dwpd{}))`), "{{node}} {{device}}"))).
		WithPanel(series("α_tier — $topn least protected nodes",
			"Share of host writes the fast tier kept off QLC (1 − QLC host writes ÷ all host writes) for the $topn nodes with the lowest α_tier.",
			"percentunit", 8, 9,
			rangeQ("A", q(`bottomk($topn, max by (node) (prism_node_qlc_write_reduction_ratio{}))`), "{{node}}"))).
		WithPanel(series("Host writes by tier",
			"Bytes per second the hosts write, summed per tier (prism_device_info's tier label): what α_tier is made of.",
			"Bps", 12, 8,
			rangeQ("A", q(`sum by (tier) (rate(prism_device_host_written_bytes_total{}[$__rate_interval]) * on (node, device) group_left (tier) prism_device_info{})`), "{{tier}}"))).
		WithPanel(series("BlueFS spillover to the slow device — $topn OSDs",
			"Bytes of BlueStore DB (BlueFS) that spilled from the fast DB partition to the slow (QLC) device, per OSD on the selected nodes. "+
				"Spillover puts metadata writes on QLC and lowers α_tier. Joined to nodes through ceph_disk_occupation's instance label.",
			"bytes", 12, 8,
			rangeQ("A", `topk($topn, max by (ceph_daemon) (ceph_bluefs_slow_used_bytes) * on (ceph_daemon) group_left () max by (ceph_daemon) (ceph_disk_occupation{instance=~"$node"}))`, "{{ceph_daemon}}")))
	b = withPolicyOSDs(b, q)
	return finish(b.Build())
}
