package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Device is the page of one device: its identity, history and forecast.
func Device() (dashboard.Dashboard, error) {
	const m = `node="$node", device="$device"`
	d := func(tmpl string) string { return sel(m, tmpl) }
	dash := []dashboard.DynamicConfigValue{{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []any{10.0, 10.0}}}}

	identity := joinedTable("Identity", "Model, serial, firmware, tier, media and transport as the agent reports them.", 24, 4,
		[]string{"instance", "job"}, "", false,
		column{ref: "A", expr: d(`max by (node, device, stable_path, model, serial, firmware, tier, media, transport) (prism_device_info{})`)},
		column{ref: "B", name: "Capacity", unit: "bytes", expr: d(`max by (node, device) (prism_device_capacity_bytes{})`)},
		column{ref: "C", name: "Power-on", unit: "s", expr: d(`max by (node, device) (prism_device_power_on_seconds_total{})`)},
	)

	b := newBoard(UIDDevice, "Prism / Endurance device",
		"One device's endurance history and forecast: wear, projected wear-out against the warranty, rated writes used, WAF and DWPD.").
		WithVariable(datasourceVar()).
		WithVariable(labelVar("node", "Node", "", false)).
		WithVariable(labelVar("device", "Device", `{node="$node"}`, false)).
		WithRow(row("$device on $node")).
		WithPanel(identity).
		WithPanel(single("Wear", "Percentage used (NVMe allows up to 255 %).", "percentunit", wearSteps, 4,
			statQ("A", d(`prism_device_percentage_used_ratio{}`), "wear"))).
		WithPanel(single("Projected wear-out", "Earlier of the percentage-used and rated-writes projections; empty with no wear or insufficient data.", "dateTimeAsIso", plainSteps, 4,
			statQ("A", d(`1000 * prism_device_wearout_timestamp_seconds{}`), "wear-out"))).
		WithPanel(single("Warranty end", "First seen + warranty years, unless configured.", "dateTimeAsIso", plainSteps, 4,
			statQ("A", d(`1000 * prism_device_warranty_end_timestamp_seconds{}`), "warranty end"))).
		WithPanel(single("Rated writes used", "1 − remaining ÷ rated TBW (host bytes unless the rating counts media writes).", "percentunit", wearSteps, 4,
			statQ("A", d(`1 - prism_device_rated_written_remaining_bytes{} / prism_device_rated_written_bytes{}`), "used"))).
		WithPanel(single("WAF", "Lifetime media ÷ host bytes written.", "none", plainSteps, 4,
			statQ("A", d(`prism_device_write_amplification_ratio{}`), "WAF"))).
		WithPanel(single("DWPD spent ÷ rated", "Lifetime DWPD over the rated DWPD.", "percentunit", ratioSteps, 4,
			statQ("A", d(`prism_device_dwpd_lifetime{} / prism_device_rated_dwpd{}`), "DWPD ratio"))).
		WithRow(row("History and forecast")).
		WithPanel(series("Wear and 90-day forecast",
			"Percentage used (solid) and where a straight line through the last 7 days puts it 90 days later (dashed, predict_linear). "+
				"Percentage used is an integer: on a slowly wearing drive the 7-day trend is flat while rated writes still move.",
			"percentunit", 12, 9,
			rangeQ("A", d(`prism_device_percentage_used_ratio{}`), "percentage used"),
			rangeQ("B", d(`predict_linear(prism_device_percentage_used_ratio{}[7d], 90 * 86400)`), "in 90 days (7 d trend)")).
			OverrideByQuery("B", dash)).
		WithPanel(series("Rated writes used and 90-day forecast",
			"Share of the rated TBW written (solid) and the share 90 days later at the 7-day write pace (dashed).",
			"percentunit", 12, 9,
			rangeQ("A", d(`1 - prism_device_rated_written_remaining_bytes{} / prism_device_rated_written_bytes{}`), "rated writes used"),
			rangeQ("B", d(`1 - (prism_device_rated_written_remaining_bytes{} - 90 * 86400 * rate(prism_device_host_written_bytes_total{}[7d])) / prism_device_rated_written_bytes{}`), "in 90 days (7 d pace)")).
			OverrideByQuery("B", dash)).
		WithPanel(series("Projected wear-out date vs warranty end",
			"How the projected wear-out date moved over time (solid), against the warranty end (dashed). Below the dashed line the drive wears out under warranty.",
			"dateTimeAsIso", 12, 9,
			rangeQ("A", d(`1000 * prism_device_wearout_timestamp_seconds{}`), "projected wear-out"),
			rangeQ("B", d(`1000 * prism_device_warranty_end_timestamp_seconds{}`), "warranty end")).
			OverrideByQuery("B", dash)).
		WithPanel(series("Days of rated writes left at the 7-day pace",
			"Remaining rated bytes ÷ the host write rate of the last 7 days.", "d", 12, 9,
			rangeQ("A", d(`prism_device_rated_written_remaining_bytes{} / (86400 * rate(prism_device_host_written_bytes_total{}[7d]))`), "days"))).
		WithRow(row("Why: writes, WAF, DWPD")).
		WithPanel(series("Bytes written: host and media", "Host and media (NAND) bytes written per second.", "Bps", 8, 8,
			rangeQ("A", d(`rate(prism_device_host_written_bytes_total{}[$__rate_interval])`), "host"),
			rangeQ("B", d(`rate(prism_device_media_written_bytes_total{}[$__rate_interval])`), "media"))).
		WithPanel(series("WAF: lifetime and last hour",
			"Lifetime WAF as the drive reports it, and media ÷ host bytes written over the last hour (how the current workload amplifies).", "none", 8, 8,
			rangeQ("A", d(`prism_device_write_amplification_ratio{}`), "lifetime"),
			rangeQ("B", d(`rate(prism_device_media_written_bytes_total{}[1h]) / rate(prism_device_host_written_bytes_total{}[1h])`), "last hour"))).
		WithPanel(series("DWPD: lifetime, last 24 h, rated",
			"Drive writes per day: lifetime per power-on day, over the last 24 h of wall-clock time, and the rating (dashed).", "none", 8, 8,
			rangeQ("A", d(`prism_device_dwpd_lifetime{}`), "lifetime"),
			rangeQ("B", d(`86400 * rate(prism_device_host_written_bytes_total{}[1d]) / prism_device_capacity_bytes{}`), "last 24 h"),
			rangeQ("C", d(`prism_device_rated_dwpd{}`), "rated")).
			OverrideByQuery("C", dash)).
		WithRow(row("Health")).
		WithPanel(series("Temperature", "Composite temperature.", "celsius", 8, 7,
			rangeQ("A", d(`prism_device_temperature_celsius{}`), "temperature"))).
		WithPanel(series("Available spare", "Available spare (solid) and its warning threshold (dashed).", "percentunit", 8, 7,
			rangeQ("A", d(`prism_device_available_spare_ratio{}`), "spare"),
			rangeQ("B", d(`prism_device_available_spare_threshold_ratio{}`), "threshold")).
			OverrideByQuery("B", dash)).
		WithPanel(series("Media errors and critical warning", "NVMe media and data integrity errors (lifetime) and the critical warning bitmask.", "none", 8, 7,
			rangeQ("A", d(`prism_device_media_errors_total{}`), "media errors"),
			rangeQ("B", d(`prism_device_critical_warning{}`), "critical warning"))).
		WithPanel(series("BlueFS of the OSDs on this device",
			"The OSDs that use this device, as their data device or for their DB slot (a fast device holds several): "+
				"BlueFS bytes on the fast DB partition and spilled to the slow data device. "+
				"Joined through ceph_disk_occupation's devices label, the kernel names of all disks under the OSD, also under LVM.", "bytes", 24, 7,
			rangeQ("A", `max by (ceph_daemon) (ceph_bluefs_db_used_bytes * on (ceph_daemon) group_left () max by (ceph_daemon) (ceph_disk_occupation{instance="$node", devices=~"(.+,)?$device(,.+)?"}))`, "{{ceph_daemon}} DB"),
			rangeQ("B", `max by (ceph_daemon) (ceph_bluefs_slow_used_bytes * on (ceph_daemon) group_left () max by (ceph_daemon) (ceph_disk_occupation{instance="$node", devices=~"(.+,)?$device(,.+)?"}))`, "{{ceph_daemon}} slow")).
			OverrideByQuery("B", dash))
	return finish(b.Build())
}
