package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/prism-storage/prism/internal/endurance"
)

// metricWriter builds const metrics with the node label first.
type metricWriter struct {
	ch    chan<- prometheus.Metric
	node  string
	descs map[string]*prometheus.Desc // by metric name; the caller holds the exporter's lock
}

func (m metricWriter) emit(kind prometheus.ValueType, name, help string, labels, values []string, v float64) {
	desc, ok := m.descs[name]
	if !ok {
		desc = prometheus.NewDesc(name, help, append([]string{"node"}, labels...), nil)
		m.descs[name] = desc
	}
	m.ch <- prometheus.MustNewConstMetric(desc, kind, v, append([]string{m.node}, values...)...)
}

func (m metricWriter) gauge(name, help string, labels, values []string, v float64) {
	m.emit(prometheus.GaugeValue, name, help, labels, values, v)
}

func (m metricWriter) counter(name, help string, labels, values []string, v float64) {
	m.emit(prometheus.CounterValue, name, help, labels, values, v)
}

var deviceLabels = []string{"device", "stable_path"}

// device emits every metric a device has; a figure the drive does not publish is absent.
func (m metricWriter) device(st *deviceState) {
	d, r := st.device, st.reading
	lv := []string{d.Name, d.StablePath}
	g := func(name, help string, v float64) { m.gauge(name, help, deviceLabels, lv, v) }
	c := func(name, help string, v float64) { m.counter(name, help, deviceLabels, lv, v) }

	m.gauge("prism_device_info", "Device identity and Prism tier (always 1).",
		append(deviceLabels, "model", "serial", "firmware", "tier", "media", "transport"),
		append(lv, d.Model, d.Serial, d.Firmware, string(d.Tier), d.Media, d.Transport), 1)
	g("prism_device_capacity_bytes", "Device size in bytes.", float64(d.SizeBytes))
	if r.HostSource != "" {
		c("prism_device_host_written_bytes_total", "Bytes the host wrote to the device (lifetime for SMART sources, since boot for sysfs).", float64(r.HostWritten))
		m.gauge("prism_device_host_written_bytes_source", "Where prism_device_host_written_bytes_total comes from (always 1).",
			append(deviceLabels, "source"), append(lv, r.HostSource), 1)
	}
	if r.MediaWritten > 0 {
		c("prism_device_media_written_bytes_total", "Bytes written to the flash media itself (includes the drive's own write amplification).", float64(r.MediaWritten))
	}
	switch {
	case r.MediaWritten > 0 && r.HostWritten > 0 && r.HostSource != "sysfs":
		g("prism_device_write_amplification_ratio", "Lifetime media bytes written / host bytes written.", float64(r.MediaWritten)/float64(r.HostWritten))
	case r.WAF > 0:
		g("prism_device_write_amplification_ratio", "Lifetime media bytes written / host bytes written.", r.WAF)
	}
	if r.PercentUsed != endurance.UnknownPercent {
		g("prism_device_percentage_used_ratio", "Share of rated endurance used as the drive reports it (NVMe percentage used / 100; may exceed 1).", float64(r.PercentUsed)/100)
	}
	if r.AvailableSpare >= 0 {
		g("prism_device_available_spare_ratio", "NVMe available spare / 100.", float64(r.AvailableSpare)/100)
		g("prism_device_available_spare_threshold_ratio", "NVMe available spare threshold / 100.", float64(r.SpareThreshold)/100)
	}
	if r.CriticalWarning >= 0 {
		g("prism_device_critical_warning", "NVMe critical warning bitmask (0 = none).", float64(r.CriticalWarning))
		c("prism_device_media_errors_total", "NVMe media and data integrity errors.", float64(r.MediaErrors))
	}
	if r.PowerOnHours > 0 {
		c("prism_device_power_on_seconds_total", "Power-on time in seconds (hours as the drive reports them x 3600).", float64(r.PowerOnHours)*3600)
	}
	if r.TemperatureOK {
		g("prism_device_temperature_celsius", "Composite temperature in degrees Celsius.", float64(r.TemperatureC))
	}
	if st.report != nil {
		m.projection(st.report, lv)
	}
}

func (m metricWriter) projection(rep *endurance.Report, lv []string) {
	g := func(name, help string, v float64) { m.gauge(name, help, deviceLabels, lv, v) }
	if rep.Rating.DWPD.Known {
		g("prism_device_rated_dwpd", "Rated drive writes per day over the warranty (published, or derived from TBW).", rep.Rating.DWPD.V)
	}
	if rep.Rating.TBW.Known {
		g("prism_device_rated_written_bytes", "Rated bytes written over the warranty (TBW x 10^12).", rep.Rating.TBW.V*1e12)
	}
	if rep.TBWRemaining.Known {
		g("prism_device_rated_written_remaining_bytes", "Rated bytes written minus bytes written so far (negative when exceeded).", rep.TBWRemaining.V*1e12)
	}
	if rep.DWPDLifetime.Known {
		g("prism_device_dwpd_lifetime", "Host bytes written / capacity / power-on days.", rep.DWPDLifetime.V)
	}
	if !rep.WarrantyEnd.IsZero() {
		g("prism_device_warranty_end_timestamp_seconds", "End of the warranty (power-on start + warranty years), Unix seconds.", float64(rep.WarrantyEnd.Unix()))
	}
	if rep.WearOut.HasDate() {
		g("prism_device_wearout_timestamp_seconds", "Projected wear-out date, Unix seconds (the earlier of the percentage-used and written-bytes projections).", float64(rep.WearOut.Date.Unix()))
	}
}
