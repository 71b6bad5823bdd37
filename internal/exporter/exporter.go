package exporter

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/endurance"
	"github.com/prism-storage/prism/internal/health"
)

// deviceState is what the exporter knows about a device after a collection.
type deviceState struct {
	device   prismv1.Device
	reading  health.Reading
	report   *endurance.Report
	baseline uint64 // host bytes at the first reading this agent saw (for α)
}

// Exporter collects readings and serves them as metrics.
type Exporter struct {
	Node      string
	Collector health.Collector
	// StateFile keeps the sample history across restarts; "" keeps it in memory only.
	StateFile string

	mu      sync.Mutex
	history *History
	devices map[string]*deviceState // by device name
	errors  map[string]float64      // collect errors per source
}

// Poll reads every device once, updates the history and the projections.
func (e *Exporter) Poll(ctx context.Context, devices []prismv1.Device) error {
	readings := e.Collector.Read(ctx, devices)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.history == nil {
		e.history = NewHistory()
		if e.StateFile != "" {
			if h, err := Load(e.StateFile); err == nil {
				e.history = h
			}
		}
		e.devices = map[string]*deviceState{}
		e.errors = map[string]float64{}
	}
	seen := map[string]bool{}
	for i, r := range readings {
		d := devices[i]
		seen[d.Name] = true
		st, ok := e.devices[d.Name]
		if !ok || st.device.StablePath != d.StablePath {
			st = &deviceState{baseline: r.HostWritten}
			e.devices[d.Name] = st
		}
		st.device, st.reading, st.report = d, r, nil
		for src := range r.Errors {
			e.errors[src]++
		}
		if s, ok := r.Sample(); ok && d.StablePath != "" {
			series := e.history.Add(d.StablePath, s)
			rating := ratingOf(d, series, r)
			if rep, err := endurance.Project(series, rating, endurance.Options{}); err == nil {
				st.report = &rep
			}
		}
	}
	for name := range e.devices {
		if !seen[name] {
			delete(e.devices, name) // the device went away: stop exporting it
		}
	}
	if e.StateFile != "" {
		return e.history.Save(e.StateFile)
	}
	return nil
}

// ratingOf is the drive database's rating, with the warranty assumed to start when the
// drive was first powered on (now − power-on hours): the best proxy the host knows.
func ratingOf(d prismv1.Device, series []endurance.Sample, r health.Reading) endurance.Rating {
	rt := endurance.Rating{CapacityBytes: uint64(max(d.SizeBytes, 0))}
	if e := d.RatedEndurance; e != nil {
		rt.RatedDWPD, _ = strconv.ParseFloat(e.DWPD, 64)
		rt.RatedTBW, _ = strconv.ParseFloat(e.TBWTerabytes, 64)
		rt.WarrantyYears = int(e.WarrantyYears)
	}
	if len(series) > 0 && r.PowerOnHours > 0 {
		first := series[0]
		rt.WarrantyStart = first.Time.Add(-time.Duration(first.PowerOnHours) * time.Hour)
	}
	return rt
}

// Describe sends no descriptors: the metric set depends on what each drive publishes
// (an unchecked collector), which client_golang supports.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

// Collect emits the metrics of the last poll.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := metricWriter{ch: ch, node: e.Node}
	var fast, capacity float64
	for _, st := range e.devices {
		m.device(st)
		written := float64(st.reading.HostWritten - min(st.baseline, st.reading.HostWritten))
		switch st.device.Tier {
		case prismv1.TierFast:
			fast += written
		case prismv1.TierCapacity:
			capacity += written
		}
	}
	if fast+capacity > 0 {
		m.gauge("prism_node_qlc_write_reduction_ratio", "Share of host writes kept off QLC since the agent started: fast-tier writes / (fast-tier + QLC writes).", nil, nil, fast/(fast+capacity))
	}
	for src, n := range e.errors {
		m.counter("prism_device_collect_errors_total", "Failed reads of a wear counter source, per source.", []string{"source"}, []string{src}, n)
	}
}

// Summary is the device's endurance at the last poll, for its StorageNode status; nil when the
// device has not been read yet. Figures are rounded so the status changes only when they do.
func (e *Exporter) Summary(device string) *prismv1.DeviceEndurance {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, ok := e.devices[device]
	if !ok {
		return nil
	}
	r := st.reading
	out := &prismv1.DeviceEndurance{}
	if r.HostSource != "" && r.HostSource != health.SourceSysfs {
		out.HostWrittenBytes = int64(min(r.HostWritten, 1<<62))
	}
	if r.PercentUsed != endurance.UnknownPercent {
		p := int32(r.PercentUsed)
		out.PercentUsed = &p
	}
	switch {
	case r.MediaWritten > 0 && out.HostWrittenBytes > 0:
		out.WriteAmplification = strconv.FormatFloat(float64(r.MediaWritten)/float64(r.HostWritten), 'f', 2, 64)
	case r.WAF > 0:
		out.WriteAmplification = strconv.FormatFloat(r.WAF, 'f', 2, 64)
	}
	if rep := st.report; rep != nil {
		if rep.DWPDLifetime.Known && rep.DWPDLifetime.V >= 0 {
			out.DWPDLifetime = strconv.FormatFloat(rep.DWPDLifetime.V, 'f', 3, 64)
		}
		if rep.WearOut.HasDate() {
			t := metav1.NewTime(rep.WearOut.Date.Truncate(24 * time.Hour))
			out.WearOutTime = &t
		}
		if !rep.WarrantyEnd.IsZero() {
			t := metav1.NewTime(rep.WarrantyEnd.Truncate(24 * time.Hour))
			out.WarrantyEndTime = &t
		}
	}
	return out
}
