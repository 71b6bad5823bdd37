//go:build linux

package ceph

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prism-storage/prism/internal/dashboards"
	"github.com/prism-storage/prism/test/alerts"
	"github.com/prism-storage/prism/test/support/panelcheck"
)

// spilloverAlert is the chart's alert on BlueFS spill-over, evaluated here on real Ceph.
const spilloverAlert = "PrismBlueFSSpillover"

// metricsScrape is both the mgr module's scrape_interval and Prometheus's: the module
// caches its answer for that long, and should match Prometheus (Ceph's docs).
const metricsScrape = 2 * time.Second

// cephScrapeConfig has the scrape job docs/dashboards.md ("Ceph's metrics") tells users to
// add when they scrape the mgr themselves (ceph-mgr): honor_labels keeps the instance label
// the module sets (the OSD's host) instead of renaming it exported_instance. Rook's
// ServiceMonitors set honorLabels: true too. The second job scrapes the same module without
// honor_labels, as an older or hand-written ServiceMonitor would: the alert must take the
// node from exported_instance there, and give one alert per OSD for both jobs together.
const cephScrapeConfig = `global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
scrape_configs:
  - job_name: ceph-mgr
    honor_labels: true
    static_configs:
      - targets: [%[2]q]
  - job_name: ceph-mgr-without-honor-labels
    static_configs:
      - targets: [%[2]q]
`

// cephMetrics is the mgr's prometheus module on 127.0.0.1 and a real Prometheus scraping it.
type cephMetrics struct {
	c    *cluster
	mgr  string // host:port of the module
	prom string // http://host:port of Prometheus
}

// startCephMetrics enables the mgr's prometheus module on a free port of 127.0.0.1 and
// starts Debian's Prometheus scraping it with cephScrapeConfig.
func (c *cluster) startCephMetrics() *cephMetrics {
	e := c.e
	port, err := freePort()
	if err != nil {
		e.t.Fatal(err)
	}
	m := &cephMetrics{c: c, mgr: fmt.Sprintf("127.0.0.1:%d", port)}
	c.mustCeph("config", "set", "mgr", "mgr/prometheus/server_addr", "127.0.0.1")
	c.mustCeph("config", "set", "mgr", "mgr/prometheus/server_port", strconv.Itoa(port))
	c.mustCeph("config", "set", "mgr", "mgr/prometheus/scrape_interval", strconv.Itoa(int(metricsScrape.Seconds())))
	c.mustCeph("mgr", "module", "enable", "prometheus")
	e.waitFor(2*time.Minute, "the mgr's prometheus module to serve /metrics", func() (bool, string) {
		body, err := httpGet(e.ctx, "http://"+m.mgr+"/metrics")
		return err == nil && strings.Contains(body, "ceph_disk_occupation_human{"), fmt.Sprintf("%v %s", err, tail(body, 2))
	})
	m.prom = e.startPrometheus(fmt.Sprintf(cephScrapeConfig, metricsScrape, m.mgr))
	return m
}

// startPrometheus runs Debian's prometheus (installed with its package when missing, as
// test/alerts does for promtool) on a free port of 127.0.0.1 with cfg and a TSDB under the
// run's directory, and returns its URL once ready.
func (e *env) startPrometheus(cfg string) string {
	t := e.t
	alerts.Promtool(t) // installs Debian's prometheus package, which has both binaries
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not on PATH after installing Debian's prometheus package: %v", err)
	}
	dir := filepath.Join(e.dir, "prometheus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	d := e.startDaemon("prometheus", bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	e.waitFor(time.Minute, "Prometheus to be ready on "+addr, func() (bool, string) {
		if !d.running() {
			t.Fatalf("prometheus exited: %v", d.err)
		}
		_, err := httpGet(e.ctx, "http://"+addr+"/-/ready")
		return err == nil, fmt.Sprint(err)
	})
	return "http://" + addr
}

func httpGet(ctx context.Context, u string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return string(body), err
}

// sample is one series of an instant vector.
type sample struct {
	Metric map[string]string
	Value  float64
}

// instant runs an instant query and returns its series; an error fails the test.
func (m *cephMetrics) instant(expr string) []sample {
	t := m.c.e.t
	t.Helper()
	r, err := panelcheck.Get(m.c.e.ctx, m.prom, "/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	var vec []struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
		t.Fatalf("query %s: result type %s: %v", expr, r.Data.ResultType, err)
	}
	out := make([]sample, 0, len(vec))
	for _, s := range vec {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("query %s: value %v: %v", expr, s.Value[1], err)
		}
		out = append(out, sample{Metric: s.Metric, Value: v})
	}
	return out
}

// waitBlueFS waits until Prometheus has scraped the OSD's BlueFS usage as the OSD itself
// reports it now (`ceph tell osd.N perf dump bluefs`), and returns that report.
func (m *cephMetrics) waitBlueFS(o *osd) map[string]int64 {
	var b map[string]int64
	m.c.e.waitFor(2*time.Minute, "Prometheus to have "+o.name()+"'s BlueFS counters", func() (bool, string) {
		b = m.c.bluefsCounters(o)
		db := m.instant(fmt.Sprintf(`max(ceph_bluefs_db_used_bytes{ceph_daemon=%q})`, o.name()))
		slow := m.instant(fmt.Sprintf(`max(ceph_bluefs_slow_used_bytes{ceph_daemon=%q})`, o.name()))
		// db_used_bytes moves with every RocksDB flush; slow_used_bytes only when BlueFS
		// allocates on the slow device, so it must match exactly.
		ok := len(db) == 1 && len(slow) == 1 && db[0].Value > 0 && slow[0].Value == float64(b["slow_used_bytes"])
		return ok, fmt.Sprintf("Prometheus db_used %v slow_used %v; OSD db_used %d slow_used %d", db, slow, b["db_used_bytes"], b["slow_used_bytes"])
	})
	return b
}

// spilloverExpr is the expression of the chart's spill-over alert.
func spilloverExpr(c *cluster) string {
	t := c.e.t
	data, err := os.ReadFile(alerts.Path(alerts.RulesFile))
	if err != nil {
		t.Fatal(err)
	}
	rules := alerts.ReadRuleFile(t, data).Alerts()[spilloverAlert]
	if len(rules) != 1 {
		t.Fatalf("%s: %d rules named %s, want 1", alerts.RulesFile, len(rules), spilloverAlert)
	}
	return rules[0].Expr
}

// checkNoSpillAlert asserts, before anything spilled, that Prometheus has the OSD's BlueFS
// counters (slow_used_bytes 0) and that the spill-over alert's expression selects nothing.
func (m *cephMetrics) checkNoSpillAlert(o *osd) {
	t := m.c.e.t
	b := m.waitBlueFS(o)
	if b["slow_used_bytes"] != 0 {
		t.Fatalf("%s spilled before the compaction (slow_used_bytes %d)", o.name(), b["slow_used_bytes"])
	}
	if got := m.instant(spilloverExpr(m.c)); len(got) != 0 {
		t.Errorf("%s selects %v while no OSD has spilled", spilloverAlert, got)
	}
	t.Logf("before the spill: Prometheus has %s's db_used_bytes %d and slow_used_bytes 0; %s selects nothing", o.name(), b["db_used_bytes"], spilloverAlert)
}

// checkSpillMetrics runs, once the OSD has spilled, every dashboard query on Ceph's BlueFS
// metrics with $node and $device set as Prism's own labels name the OSD's node and devices,
// and the spill-over alert's expression; each must find the OSD.
func (m *cephMetrics) checkSpillMetrics(o *osd, data, fast *loopDev) {
	t := m.c.e.t
	b := m.waitBlueFS(o)
	if b["slow_used_bytes"] <= 0 {
		t.Fatalf("%s: slow_used_bytes %d after the compaction: nothing spilled, the checks below would prove nothing", o.name(), b["slow_used_bytes"])
	}
	m.logExposition(o)
	m.logSeries(o)
	device := "/dev/" + data.name
	disks := []string{data.name, fast.name}
	sort.Strings(disks) // Ceph lists them from a std::set
	m.checkOccupation(o, device, strings.Join(disks, ","))

	// The variables as the dashboards' own variable queries fill them from Prism's
	// metrics: node = the Kubernetes node name, device = the kernel name. The device page
	// must find the OSD from its data device and from the fast device that holds its DB.
	vars := map[string]string{"__rate_interval": "10s", "__interval": "2s", "topn": "10", "node": nodeName, "device": data.name}
	checked := m.checkCephQueries(o, vars, b["slow_used_bytes"], "")
	vars["device"] = fast.name
	checked += m.checkCephQueries(o, vars, b["slow_used_bytes"], dashboards.UIDDevice)
	t.Logf("%d dashboard queries on Ceph's metrics returned %s and only it", checked, o.name())

	alert := m.instant(spilloverExpr(m.c))
	if len(alert) != 1 || alert[0].Metric["ceph_daemon"] != o.name() || alert[0].Metric["node"] != nodeName ||
		alert[0].Metric["device"] != device || alert[0].Value != float64(b["slow_used_bytes"]) {
		t.Errorf("%s on real Ceph: %v; want %s with node %q, device %q and value %d", spilloverAlert, alert, o.name(), nodeName, device, b["slow_used_bytes"])
	}
	t.Logf("real Ceph: %s selects %v", spilloverAlert, alert)
}

// checkOccupation asserts the labels the joins rest on, from both scrape jobs: instance
// (honor_labels) or exported_instance (without) is NODE_NAME, not this machine's hostname;
// device is the data device's node; devices the kernel names of data and DB disks.
func (m *cephMetrics) checkOccupation(o *osd, device, devices string) {
	t := m.c.e.t
	if host, _ := os.Hostname(); host == nodeName {
		t.Fatalf("this machine is called %s like the simulated node: the instance label could not tell NODE_NAME from the hostname", host)
	}
	for _, metric := range []string{"ceph_disk_occupation", "ceph_disk_occupation_human"} {
		series := m.instant(fmt.Sprintf(`%s{ceph_daemon=%q}`, metric, o.name()))
		jobs := map[string]map[string]string{}
		for _, s := range series {
			jobs[s.Metric["job"]] = s.Metric
		}
		honored, plain := jobs["ceph-mgr"], jobs["ceph-mgr-without-honor-labels"]
		if len(series) != 2 || honored["instance"] != nodeName || honored["device"] != device ||
			plain["exported_instance"] != nodeName || plain["instance"] != m.mgr || plain["device"] != device {
			t.Errorf("%s of %s: %v; want per job one series with device %q and the host %q in instance (honor_labels) or exported_instance (without)",
				metric, o.name(), series, device, nodeName)
		}
		if metric == "ceph_disk_occupation" && honored["devices"] != devices {
			t.Errorf("ceph_disk_occupation of %s: devices %q, want %q (data and DB disks)", o.name(), honored["devices"], devices)
		}
	}
}

// checkCephQueries runs every dashboard query (of dashboard uid, or all when "") that reads
// Ceph's metrics with vars; each must have data, select only o, and show o's spill exactly.
// It returns how many it checked, and fails when none.
func (m *cephMetrics) checkCephQueries(o *osd, vars map[string]string, slowUsed int64, uid string) int {
	t := m.c.e.t
	results, err := panelcheck.Run(m.c.e.ctx, m.prom, panelcheck.Options{Common: vars, Range: time.Minute, Step: metricsScrape})
	if err != nil {
		t.Fatal(err)
	}
	boards := map[string]int{}
	for _, r := range results {
		// Ceph's own series; prism_osd_* (grouped by the ceph_daemon label too) come from the
		// agent's OSD table and are checked against its collector (osdmetrics_test.go).
		readsCeph := strings.Contains(r.Expr, "ceph_") && !strings.Contains(r.Expr, "prism_osd_")
		if !readsCeph || (uid != "" && r.Dashboard != uid) {
			continue
		}
		boards[r.Dashboard]++
		if p := r.Problem(); p != "" {
			t.Errorf("%s on real Ceph with %v: %s\n    %s", r.Name(), vars, p, r.Run)
			continue
		}
		got := m.instant(dashboards.Substitute(r.Expr, vars))
		if len(got) != 1 || got[0].Metric["ceph_daemon"] != o.name() {
			t.Errorf("%s with %v selects %v, want %s only\n    %s", r.Name(), vars, got, o.name(), r.Run)
			continue
		}
		if strings.Contains(r.Expr, "slow_used_bytes") && got[0].Value != float64(slowUsed) {
			t.Errorf("%s: %s has %v bytes spilled, the OSD reports %d", r.Name(), o.name(), got[0].Value, slowUsed)
		}
		t.Logf("real Ceph, $device=%s: %s: %d series, %v", vars["device"], r.Name(), r.Series, got)
	}
	uids := []string{dashboards.UIDOverview, dashboards.UIDNode, dashboards.UIDDevice}
	if uid != "" {
		uids = []string{uid}
	}
	n := 0
	for _, u := range uids {
		if boards[u] == 0 {
			t.Errorf("dashboard %s has no query on Ceph's metrics: its BlueFS panels were not checked", u)
		}
		n += boards[u]
	}
	return n
}

// logSeries logs the series Prometheus stored for the OSD: the labels the queries see.
func (m *cephMetrics) logSeries(o *osd) {
	match := fmt.Sprintf(`{__name__=~"ceph_bluefs_(db|slow)_used_bytes|ceph_disk_occupation(_human)?", ceph_daemon=%q}`, o.name())
	body, err := httpGet(m.c.e.ctx, m.prom+"/api/v1/series?"+url.Values{"match[]": {match}}.Encode())
	m.c.e.t.Logf("Prometheus series of %s (%v): %s", o.name(), err, body)
}

// logExposition logs the module's own lines for the OSD: the real label sets.
func (m *cephMetrics) logExposition(o *osd) {
	body, err := httpGet(m.c.e.ctx, "http://"+m.mgr+"/metrics")
	if err != nil {
		m.c.e.t.Fatalf("mgr /metrics: %v", err)
	}
	var lines []string
	for line := range strings.SplitSeq(body, "\n") {
		for _, name := range []string{"ceph_bluefs_db_used_bytes{", "ceph_bluefs_slow_used_bytes{", "ceph_disk_occupation{", "ceph_disk_occupation_human{"} {
			if strings.HasPrefix(line, name) && strings.Contains(line, `"`+o.name()+`"`) {
				lines = append(lines, line)
			}
		}
	}
	sort.Strings(lines)
	m.c.e.t.Logf("mgr prometheus module exposition for %s:\n%s", o.name(), strings.Join(lines, "\n"))
}
