package browser

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"
)

// The SYNTHETIC cluster: made-up series, no agent, for the page rendering tests and to run
// every dashboard query (real agents feed the dashboards in hack/demo --check-panels).
// Five storage nodes, each with an Optane P4800X (fast
// tier, Open CAS cache and BlueStore DBs) and Solidigm/Intel D5-P5316 QLC drives.
// Values follow the endurance model of internal/endurance (see wearout):
// stor-delta's nvme1n1, a P5316 at 23 % wear with WAF 1.8, is the first drive
// to wear out; stor-echo is new and has no projection at all.
const (
	qlcCapacity    = 15.36e12
	qlcRatedDWPD   = 0.82 // ≈ 22.9 PBW over 5 years (synthetic value)
	optaneCapacity = 750e9
	optaneDWPD     = 30
	warrantyYears  = 5
	day            = 86400.0
	horizonDays    = 100 * 365
)

type syntheticDevice struct {
	name, model, serial, firmware, tier, media string
	capacity, ratedDWPD                        float64
	wear                                       float64 // percentage used ÷ 100
	dwpd                                       float64 // lifetime host drive writes per power-on day
	waf                                        float64 // 0: the drive publishes no media writes
	temp, spare                                float64
	osd                                        int // Ceph OSD id whose block device this is; -1 none
}

type syntheticNode struct {
	name        string
	powerOnDays float64
	devices     []syntheticDevice
}

func optane(wear, dwpd float64, serial string) syntheticDevice {
	return syntheticDevice{name: "nvme0n1", model: "INTEL SSDPE21K750GA", serial: serial, firmware: "E2010650",
		tier: "Fast", media: "3DXPoint", capacity: optaneCapacity, ratedDWPD: optaneDWPD,
		wear: wear, dwpd: dwpd, temp: 36, spare: 1.0, osd: -1}
}

func p5316(name string, wear, dwpd, waf float64, serial string, osd int) syntheticDevice {
	return syntheticDevice{name: name, model: "INTEL SSDPF2NV153TZ", serial: serial, firmware: "ACV10320",
		tier: "Capacity", media: "QLC", capacity: qlcCapacity, ratedDWPD: qlcRatedDWPD,
		wear: wear, dwpd: dwpd, waf: waf, temp: 41, spare: 1 - wear/4, osd: osd}
}

var syntheticNodes = []syntheticNode{
	{"stor-alpha", 300, []syntheticDevice{optane(0.01, 2.0, "PHKS0001"),
		p5316("nvme1n1", 0.06, 0.12, 1.30, "PHAC0101", 0), p5316("nvme2n1", 0.05, 0.10, 1.25, "PHAC0102", 1), p5316("nvme3n1", 0.04, 0.09, 1.20, "PHAC0103", 2)}},
	{"stor-bravo", 350, []syntheticDevice{optane(0.01, 2.4, "PHKS0002"),
		p5316("nvme1n1", 0.11, 0.16, 1.50, "PHAC0201", 3), p5316("nvme2n1", 0.09, 0.14, 1.45, "PHAC0202", 4), p5316("nvme3n1", 0.10, 0.15, 1.50, "PHAC0203", 5)}},
	{"stor-charlie", 400, []syntheticDevice{optane(0.02, 2.6, "PHKS0003"),
		p5316("nvme1n1", 0.14, 0.18, 1.60, "PHAC0301", 6), p5316("nvme2n1", 0.12, 0.16, 1.55, "PHAC0302", 7), p5316("nvme3n1", 0.13, 0.17, 1.60, "PHAC0303", 8)}},
	{"stor-delta", 500, []syntheticDevice{optane(0.02, 3.0, "PHKS0004"),
		p5316("nvme1n1", 0.23, 0.20, 1.80, "PHAC0401", 9), p5316("nvme2n1", 0.19, 0.17, 1.70, "PHAC0402", 10), p5316("nvme3n1", 0.17, 0.15, 1.60, "PHAC0403", 11)}},
	{"stor-echo", 20, []syntheticDevice{optane(0, 0.05, "PHKS0005"),
		p5316("nvme1n1", 0, 0.01, 1.10, "PHAC0501", 12), p5316("nvme2n1", 0, 0.01, 1.10, "PHAC0502", 13)}},
}

// Expected results, derived from the synthetic cluster above.
const (
	soonestNode   = "stor-delta"
	soonestDevice = "nvme1n1"
)

// policyOf is each node's HybridStoragePolicy (prism_node_info): alpha, bravo and charlie run
// qlc-hybrid (OSDs 0-8), delta and echo qlc-archive (OSDs 9-13, osd.9 spilled).
func policyOf(node string) string {
	switch node {
	case "stor-delta", "stor-echo":
		return "qlc-archive"
	}
	return "qlc-hybrid"
}

var expectedOrder = []string{"stor-delta", "stor-charlie", "stor-bravo", "stor-alpha", "stor-echo"}

// wearout projects a device's wear-out date as internal/endurance does: the
// earlier of the percentage-used line (wear grew linearly over the power-on
// days) and the rated-writes projection at the lifetime write rate; none when
// neither wears or the date is more than 100 years out.
func wearout(now time.Time, d syntheticDevice, powerOnDays, hostBytes float64) (time.Time, bool) {
	best := math.Inf(1)
	if d.wear > 0 {
		best = (1 - d.wear) / (d.wear / powerOnDays)
	}
	if rate := d.dwpd * d.capacity; rate > 0 {
		rated := d.ratedDWPD * d.capacity * 365 * warrantyYears
		best = math.Min(best, (rated-hostBytes)/rate)
	}
	if math.IsInf(best, 1) || best > horizonDays {
		return time.Time{}, false
	}
	return now.Add(time.Duration(best * day * float64(time.Second))), true
}

// exposition collects samples by metric family and writes the text format.
type exposition struct {
	order []string
	types map[string]string
	lines map[string][]string
}

func newExposition() *exposition {
	return &exposition{types: map[string]string{}, lines: map[string][]string{}}
}

func (e *exposition) add(name, typ string, value float64, labels ...string) {
	if _, ok := e.types[name]; !ok {
		e.order = append(e.order, name)
		e.types[name] = typ
	}
	var ls []string
	for i := 0; i+1 < len(labels); i += 2 {
		ls = append(ls, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	e.lines[name] = append(e.lines[name], fmt.Sprintf("%s{%s} %s", name, strings.Join(ls, ","), formatFloat(value)))
}

func formatFloat(v float64) string { return fmt.Sprintf("%.10g", v) }

func (e *exposition) String() string {
	var b strings.Builder
	for _, name := range e.order {
		fmt.Fprintf(&b, "# HELP %s Prism synthetic test exposition (made-up values).\n# TYPE %s %s\n", name, name, e.types[name])
		for _, l := range e.lines[name] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// syntheticServer serves /nodes/<node>/metrics (the node agent of each node, per
// docs/metrics.md) and /ceph/metrics (Ceph mgr's prometheus module). Counters
// grow with time at the synthetic write rates, so rate() has something to see.
func syntheticServer(start time.Time) http.Handler {
	mux := http.NewServeMux()
	for _, n := range syntheticNodes {
		mux.HandleFunc("GET /nodes/"+n.name+"/metrics", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = fmt.Fprint(w, nodeMetrics(n, start, time.Now()))
		})
	}
	mux.HandleFunc("GET /ceph/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprint(w, cephMetrics(start, time.Now()))
	})
	return mux
}

func nodeMetrics(n syntheticNode, start, now time.Time) string {
	e := newExposition()
	elapsed := now.Sub(start).Seconds()
	powerOn := n.powerOnDays*day + elapsed
	firstSeen := start.Add(-time.Duration(n.powerOnDays * day * float64(time.Second)))
	var fastRate, qlcRate float64
	for _, d := range n.devices {
		ids := []string{"node", n.name, "device", d.name, "stable_path", "/dev/disk/by-id/nvme-" + d.model + "_" + d.serial}
		l := func(extra ...string) []string { return append(append([]string{}, ids...), extra...) }
		rate := d.dwpd * d.capacity / day // host bytes per second
		host := d.dwpd*d.capacity*n.powerOnDays + rate*elapsed
		rated := d.ratedDWPD * d.capacity * 365 * warrantyYears
		if d.tier == "Fast" {
			fastRate += rate
		} else {
			qlcRate += rate
		}
		e.add("prism_device_info", "gauge", 1, l("model", d.model, "serial", d.serial, "firmware", d.firmware,
			"tier", d.tier, "media", d.media, "transport", "nvme")...)
		e.add("prism_device_capacity_bytes", "gauge", d.capacity, ids...)
		e.add("prism_device_host_written_bytes_total", "counter", host, ids...)
		e.add("prism_device_host_written_bytes_source", "gauge", 1, l("source", "nvme-smart")...)
		if d.waf > 0 {
			e.add("prism_device_media_written_bytes_total", "counter", host*d.waf, ids...)
			e.add("prism_device_write_amplification_ratio", "gauge", d.waf, ids...)
		}
		e.add("prism_device_percentage_used_ratio", "gauge", d.wear, ids...)
		e.add("prism_device_available_spare_ratio", "gauge", d.spare, ids...)
		e.add("prism_device_available_spare_threshold_ratio", "gauge", 0.10, ids...)
		e.add("prism_device_critical_warning", "gauge", 0, ids...)
		e.add("prism_device_media_errors_total", "counter", 0, ids...)
		e.add("prism_device_power_on_seconds_total", "counter", powerOn, ids...)
		e.add("prism_device_temperature_celsius", "gauge", d.temp+math.Sin(elapsed/10), ids...)
		e.add("prism_device_rated_dwpd", "gauge", d.ratedDWPD, ids...)
		e.add("prism_device_rated_written_bytes", "gauge", rated, ids...)
		e.add("prism_device_dwpd_lifetime", "gauge", host/d.capacity/(powerOn/day), ids...)
		e.add("prism_device_rated_written_remaining_bytes", "gauge", rated-host, ids...)
		e.add("prism_device_warranty_end_timestamp_seconds", "gauge",
			float64(firstSeen.AddDate(warrantyYears, 0, 0).Unix()), ids...)
		if at, ok := wearout(start, d, n.powerOnDays, d.dwpd*d.capacity*n.powerOnDays); ok {
			e.add("prism_device_wearout_timestamp_seconds", "gauge", float64(at.Unix()), ids...)
		}
		e.add("prism_device_collect_errors_total", "counter", 0, l("source", "ocp-c0")...)
	}
	// α over the window: the fast tier's share of host writes.
	e.add("prism_node_qlc_write_reduction_ratio", "gauge", 1-qlcRate/(qlcRate+fastRate), "node", n.name)
	e.add("prism_node_inventory_timestamp_seconds", "gauge", float64(now.Add(-30*time.Second).Unix()), "node", n.name)
	e.add("prism_node_info", "gauge", 1, "node", n.name, "policy", policyOf(n.name))

	// One write-back cache on a partition of the Optane, in front of the QLC cores.
	const cacheSize = 600e9
	cache := []string{"node", n.name, "cache", "1"}
	e.add("prism_cache_info", "gauge", 1, "node", n.name, "cache", "1", "device", "nvme0n1p3", "mode", "wb", "state", "Running", "line_size_bytes", "4096")
	e.add("prism_cache_occupancy_ratio", "gauge", 0.83, cache...)
	e.add("prism_cache_dirty_ratio", "gauge", 0.12+0.01*math.Sin(elapsed/7), cache...)
	e.add("prism_cache_dirty_age_seconds", "gauge", 42+elapsed, cache...)
	e.add("prism_cache_failed", "gauge", 0, cache...)
	classes := []struct {
		id, name          string
		share, dirty, hit float64
	}{{"0", "unclassified", 0.30, 0.05, 0.40}, {"1", "metadata", 0.25, 0.30, 0.95}, {"2", "small-writes", 0.35, 0.50, 0.80}, {"3", "large-sequential", 0.10, 0.02, 0.10}}
	for _, c := range classes {
		cl := []string{"node", n.name, "cache", "1", "class", c.id, "class_name", c.name}
		e.add("prism_cache_class_occupancy_bytes", "gauge", cacheSize*0.83*c.share, cl...)
		e.add("prism_cache_class_dirty_bytes", "gauge", cacheSize*0.12*c.dirty, cl...)
		reqs := 5000 * c.share * (1000 + elapsed)
		for _, dir := range []string{"read", "write"} {
			e.add("prism_cache_class_hits_total", "counter", math.Floor(reqs*c.hit), append(cl, "dir", dir)...)
			e.add("prism_cache_class_misses_total", "counter", math.Floor(reqs*(1-c.hit)), append(cl, "dir", dir)...)
			e.add("prism_cache_class_pass_through_total", "counter", math.Floor(reqs*0.01), append(cl, "dir", dir)...)
		}
		e.add("prism_cache_class_core_written_bytes_total", "counter", qlcRate*c.share*(1000+elapsed), cl...)
		e.add("prism_cache_class_write_invalidation_ratio", "gauge", 0.2+c.dirty, cl...)
	}
	for _, d := range n.devices {
		if d.tier == "Capacity" {
			e.add("prism_cache_core_written_bytes_total", "counter", d.dwpd*d.capacity/day*(1000+elapsed),
				"node", n.name, "cache", "1", "core", d.name, "device", d.name)
		}
	}
	osdMetrics(e, n, elapsed)
	return e.String()
}

// osdMetrics is the per-OSD table the agent reads from the OSD admin sockets (docs/metrics.md,
// "OSDs"): a 30 GiB slot per OSD that keeps L0..L2, 18 GiB + id/2 GiB used, growing 2 GiB a
// day (so the highest id spills soonest), the OSD of soonestDevice spilled, and the seeds' shares.
func osdMetrics(e *exposition, n syntheticNode, elapsed float64) {
	const slot, gib = 30 << 30, 1 << 30
	classes := []struct {
		name                   string
		occupied, share, dayGB float64
	}{{"wal", 1 * gib, 0.05, 690}, {"bluefs-log", 0.1 * gib, 0.01, 60}, {"sst", 14 * gib, 0.30, 4200}, {"spilled", 0, 0, 0}, {"objects", 9000 * gib, 0.64, 8800}, {"L0", 1 * gib, 0.05, 690}, {"L1", 1 * gib, 0.08, 1012}, {"L2", 12 * gib, 0.17, 2500}}
	for _, d := range n.devices {
		if d.osd < 0 {
			continue
		}
		ids := []string{"node", n.name, "ceph_daemon", fmt.Sprintf("osd.%d", d.osd)}
		used := 18*gib + float64(d.osd)*gib/2 + elapsed*1e4
		spilled := 0.0
		if n.name == soonestNode && d.name == soonestDevice {
			spilled = 3.2e9 // as Ceph's own ceph_bluefs_slow_used_bytes says (cephMetrics)
		}
		e.add("prism_osd_db_total_bytes", "gauge", slot, ids...)
		e.add("prism_osd_db_used_bytes", "gauge", used, ids...)
		e.add("prism_osd_slow_used_bytes", "gauge", spilled, ids...)
		e.add("prism_osd_db_levels_on_fast", "gauge", 2, ids...)
		e.add("prism_osd_db_growth_bytes_per_day", "gauge", 2*gib, ids...)
		if spilled == 0 { // the agent forecasts no spill for a slot that has spilled
			e.add("prism_osd_db_spill_forecast_timestamp_seconds", "gauge", float64(time.Now().Unix())+(slot-used)/(2*gib)*day, ids...)
		}
		e.add("prism_osd_read_ok", "gauge", 1, ids...)
		e.add("prism_osd_rocksdb_level_stats_enabled", "gauge", 1, ids...)
		for level, bytes := range []float64{2156 << 20, 2426 << 20, 5120 << 20, 32068 << 20} {
			e.add("prism_osd_db_slot_advice_bytes", "gauge", bytes, append(append([]string{}, ids...), "level", fmt.Sprint(level))...)
		}
		for _, c := range classes {
			cl := append(append([]string{}, ids...), "class", c.name)
			e.add("prism_osd_class_occupied_bytes", "gauge", c.occupied, cl...)
			e.add("prism_osd_class_written_bytes_total", "counter", c.dayGB*1e9*(10+elapsed/day), cl...)
			e.add("prism_osd_class_written_bytes_per_day", "gauge", c.dayGB*1e9, cl...)
			e.add("prism_osd_class_write_share_ratio", "gauge", c.share, cl...)
			if c.occupied > 0 {
				e.add("prism_osd_class_write_invalidation_ratio", "gauge", c.dayGB*1e9*10/c.occupied, cl...)
			}
		}
	}
}

func cephMetrics(start, now time.Time) string {
	e := newExposition()
	elapsed := now.Sub(start).Seconds()
	type osd struct {
		id              int
		node, dev, fast string
		db, spill       float64
	}
	var osds []osd
	for _, n := range syntheticNodes {
		fast := ""
		for _, d := range n.devices {
			if d.tier == "Fast" {
				fast = d.name
			}
		}
		for _, d := range n.devices {
			if d.osd < 0 {
				continue
			}
			o := osd{id: d.osd, node: n.name, dev: d.name, fast: fast, db: 28e9 + float64(d.osd)*1e9 + elapsed*1e5}
			if n.name == soonestNode && d.name == soonestDevice {
				o.spill = 3.2e9 // this OSD's DB outgrew its slot: metadata writes land on QLC
			}
			osds = append(osds, o)
		}
	}
	sort.Slice(osds, func(i, j int) bool { return osds[i].id < osds[j].id })
	for _, o := range osds {
		daemon := fmt.Sprintf("osd.%d", o.id)
		e.add("ceph_bluefs_db_used_bytes", "gauge", o.db, "ceph_daemon", daemon)
		e.add("ceph_bluefs_slow_used_bytes", "gauge", o.spill, "ceph_daemon", daemon)
		// The label set of the mgr's prometheus module (test/ceph logs a real one); devices
		// lists the kernel names of the OSD's data and DB disks, sorted as Ceph does.
		disks := []string{o.fast, o.dev}
		sort.Strings(disks)
		e.add("ceph_disk_occupation", "untyped", 1, "ceph_daemon", daemon, "device", "/dev/"+o.dev,
			"db_device", "/dev/"+o.fast+"p"+fmt.Sprint(o.id+1), "wal_device", "", "instance", o.node,
			"devices", strings.Join(disks, ","), "device_ids", "N/A")
	}
	return e.String()
}
