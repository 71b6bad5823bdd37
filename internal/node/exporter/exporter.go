package exporter

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/endurance"
	"github.com/prism-storage/prism/internal/node/health"
)

// deviceState is what the exporter knows about a device after a collection.
type deviceState struct {
	device   prismv1.Device
	reading  health.Reading
	report   *endurance.Report
	baseline uint64 // host bytes at the first reading this agent saw (for α_tier)
	// projected: report is Project(the device's series, rating); it stays valid until the
	// series gains a sample or the rating changes.
	projected bool
	rating    endurance.Rating
}

// Exporter collects readings and serves them as metrics.
type Exporter struct {
	Node      string
	Collector health.Collector
	// StateFile keeps the sample history across restarts; "" keeps it in memory only.
	StateFile string
	// LegacyStateFile is the JSON history of earlier agents: read into StateFile when that
	// does not exist yet, then removed.
	LegacyStateFile string

	mu      sync.Mutex
	history *History
	file    *historyFile                 // nil: in memory only
	fileErr error                        // why file is nil with a StateFile
	devices map[string]*deviceState      // by device name
	errors  map[string]float64           // collect errors per source
	failing map[string]map[string]string // the last poll's failures: device -> source -> message
	fresh   []CollectFailure             // failures that started since NewFailures last ran
	descs   map[string]*prometheus.Desc
	// inventoried is when the node's last inventory succeeded (zero before the first).
	inventoried time.Time
	// policy is the StorageNode's spec.policyName at the agent's last sync; policyKnown
	// says the agent has read it.
	policy      string
	policyKnown bool
}

// Policy records the HybridStoragePolicy that manages the node (its StorageNode's
// spec.policyName, "" when none does), served as prism_node_info{policy}: the one series
// dashboards and alerts join the per-OSD and per-device series to, by node, to see them
// per policy (`* on (node) group_left (policy) prism_node_info`).
func (e *Exporter) Policy(name string) {
	e.mu.Lock()
	e.policy, e.policyKnown = name, true
	e.mu.Unlock()
}

// Inventoried records when the agent last inventoried the node, served as
// prism_node_inventory_timestamp_seconds (the dashboards' inventory age).
func (e *Exporter) Inventoried(t time.Time) {
	e.mu.Lock()
	e.inventoried = t
	e.mu.Unlock()
}

// StateFiles are the history files the agent keeps in its state directory: the log, and the
// JSON history of agents before it, migrated on the first poll.
func StateFiles(dir string) (file, legacy string) {
	return filepath.Join(dir, "wear-history.log"), filepath.Join(dir, "wear-history.json")
}

// Poll reads every device once, updates the history and the projections. Its error is about
// the history file; the readings and projections are updated either way.
func (e *Exporter) Poll(ctx context.Context, devices []prismv1.Device) error {
	readings := e.Collector.Read(ctx, devices)
	e.mu.Lock()
	defer e.mu.Unlock()
	var loadErr error
	if e.history == nil {
		loadErr = e.load()
	}
	seen := map[string]bool{}
	failing := map[string]map[string]string{}
	var added []entry
	for i, r := range readings {
		d := devices[i]
		seen[d.Name] = true
		st, ok := e.devices[d.Name]
		if !ok || st.device.StablePath != d.StablePath {
			st = &deviceState{baseline: r.HostWritten}
			e.devices[d.Name] = st
		}
		st.device, st.reading = d, r
		for src, msg := range r.Errors {
			e.errors[src]++
			if failing[d.Name] == nil {
				failing[d.Name] = map[string]string{}
			}
			failing[d.Name][src] = msg
		}
		s, ok := r.Sample()
		if !ok || d.StablePath == "" {
			st.report, st.projected = nil, false
			continue
		}
		series, isNew := e.history.Add(d.StablePath, s)
		if isNew {
			added = append(added, entry{d.StablePath, series[len(series)-1]})
		}
		project(st, series, isNew, ratingOf(d, series, r))
	}
	for name := range e.devices {
		if !seen[name] {
			delete(e.devices, name) // the device went away: stop exporting it
		}
	}
	e.trackFailures(failing)
	return errors.Join(loadErr, e.save(added))
}

// load reads the history file on the first poll.
func (e *Exporter) load() error {
	e.history = NewHistory()
	e.devices = map[string]*deviceState{}
	e.errors = map[string]float64{}
	if e.StateFile == "" {
		return nil
	}
	e.file, e.fileErr = openHistoryFile(e.StateFile, e.LegacyStateFile, e.history)
	return e.fileErr
}

// save writes the samples this poll added; nothing when it added none (4 polls in 5 at the
// default 1-minute period and 5-minute MinInterval).
func (e *Exporter) save(added []entry) error {
	switch {
	case e.StateFile == "":
		return nil
	case e.file == nil:
		if len(added) == 0 {
			return nil
		}
		return fmt.Errorf("wear history %s: not saved: %w", e.StateFile, e.fileErr)
	}
	return e.file.save(e.history, added)
}

// project updates the device's projection unless its inputs are those of the last one.
func project(st *deviceState, series []endurance.Sample, changed bool, rating endurance.Rating) {
	if st.projected && !changed && st.rating == rating {
		return
	}
	st.report, st.projected, st.rating = nil, true, rating
	if rep, err := endurance.Project(series, rating, endurance.Options{}); err == nil {
		st.report = &rep
	}
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
	m := metricWriter{ch: ch, node: e.Node, descs: e.descCache()}
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
		m.gauge("prism_node_qlc_write_reduction_ratio", "α_tier: share of host writes kept off QLC since the agent started: fast-tier writes / (fast-tier + QLC writes).", nil, nil, fast/(fast+capacity))
	}
	if !e.inventoried.IsZero() {
		m.gauge("prism_node_inventory_timestamp_seconds", "When the agent last inventoried the node's devices, Unix seconds.", nil, nil, float64(e.inventoried.UnixMilli())/1000)
	}
	if e.policyKnown {
		m.gauge("prism_node_info", "The node's HybridStoragePolicy (policy; empty when none manages it), from its StorageNode's spec.policyName (always 1).",
			[]string{"policy"}, []string{e.policy}, 1)
	}
	for src, n := range e.errors {
		m.counter("prism_device_collect_errors_total", "Failed reads of a wear counter source, per source.", []string{"source"}, []string{src}, n)
	}
}

// descCache returns the descriptors built by earlier scrapes: name, help and label names are
// fixed per metric name, and building a Desc is most of a const metric's cost.
func (e *Exporter) descCache() map[string]*prometheus.Desc {
	if e.descs == nil {
		e.descs = map[string]*prometheus.Desc{}
	}
	return e.descs
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
