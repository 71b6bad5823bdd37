//go:build linux

package ceph

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/prism-storage/prism/internal/dashboards"
	"github.com/prism-storage/prism/internal/host/cephdaemon"
	"github.com/prism-storage/prism/internal/node/exporter"
	"github.com/prism-storage/prism/internal/node/osdstats"
	"github.com/prism-storage/prism/test/alerts"
	"github.com/prism-storage/prism/test/support/panelcheck"
)

const (
	osdSpillAlert    = "PrismOSDDBSpillForecast"
	policySpillAlert = "PrismPolicyDBSpillForecast"
	// osdPolicy is the policy the test's node is served under (prism_node_info), as the
	// agent serves its StorageNode's spec.policyName.
	osdPolicy = "qlc-hybrid"
)

// osdMetrics is the agent's OSD collector reading the test's OSD, with the node's policy
// (prism_node_info, which the agent's exporter serves), served on 127.0.0.1 and scraped by a
// real Prometheus, as the agent's /metrics is in a cluster.
type osdMetrics struct {
	c         *cluster
	collector *osdstats.Collector
	prom      string
}

func (c *cluster) startOSDMetrics(ask cephdaemon.Asker) *osdMetrics {
	e := c.e
	col := &osdstats.Collector{Node: nodeName, SocketDir: c.path("run"), Ask: ask, MinWindow: osdTableWindow}
	info := &exporter.Exporter{Node: nodeName} // never polled: it serves only prism_node_info
	info.Policy(osdPolicy)
	reg := prometheus.NewRegistry()
	reg.MustRegister(col, info)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	e.t.Cleanup(func() { _ = srv.Close() })
	cfg := fmt.Sprintf("global:\n  scrape_interval: %[1]s\n  scrape_timeout: %[1]s\nscrape_configs:\n  - job_name: prism-agent\n    static_configs:\n      - targets: [%[2]q]\n",
		metricsScrape, l.Addr().String())
	return &osdMetrics{c: c, collector: col, prom: e.startPrometheus(cfg)}
}

func (m *osdMetrics) instant(expr string) []sample {
	return (&cephMetrics{c: m.c, prom: m.prom}).instant(expr)
}

// alertSelects evaluates an alert's expression (without its for:) and returns, per series it
// selects, the values of labels joined by "/".
func (m *osdMetrics) alertSelects(alert string, labels ...string) []string {
	t := m.c.e.t
	data, err := os.ReadFile(alerts.Path(alerts.RulesFile))
	if err != nil {
		t.Fatal(err)
	}
	rules := alerts.ReadRuleFile(t, data).Alerts()[alert]
	if len(rules) != 1 {
		t.Fatalf("%d rules named %s", len(rules), alert)
	}
	var out []string
	for _, s := range m.instant(rules[0].Expr) {
		var v []string
		for _, l := range labels {
			v = append(v, s.Metric[l])
		}
		out = append(out, strings.Join(v, "/"))
	}
	return out
}

// waitAlertSelects waits until the alert's expression selects exactly want (alertSelects'
// labels), as it does once Prometheus has scraped what the test just made happen, and
// returns it; the test fails if it does not within a minute (30 scrapes).
func (m *osdMetrics) waitAlertSelects(alert string, want []string, labels ...string) []string {
	var got []string
	m.c.e.waitFor(time.Minute, fmt.Sprintf("%s's expression to select %v", alert, want), func() (bool, string) {
		got = m.alertSelects(alert, labels...)
		return slices.Equal(got, want), fmt.Sprintf("it selects %v", got)
	})
	return got
}

// checkPanels runs every dashboard query that reads prism_osd_* against the Prometheus
// scraping the collector: each must have data, for this node's OSD only.
func (m *osdMetrics) checkPanels(o *osd) {
	t := m.c.e.t
	vars := map[string]string{"node": nodeName, "device": ".*", "__rate_interval": "10s", "__interval": "2s", "topn": "10"}
	results, err := panelcheck.Run(m.c.e.ctx, m.prom, panelcheck.Options{Common: vars, Range: time.Minute, Step: metricsScrape})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range results {
		if !strings.Contains(r.Expr, "prism_osd_") {
			continue
		}
		checked++
		if p := r.Problem(); p != "" {
			t.Errorf("%s on the real OSD's metrics: %s\n    %s", r.Name(), p, r.Run)
			continue
		}
		for _, s := range m.instant(dashboards.Substitute(r.Expr, vars)) {
			if d, ok := s.Metric["ceph_daemon"]; ok && d != o.name() {
				t.Errorf("%s selects %s, want %s only", r.Name(), d, o.name())
			}
		}
	}
	if checked == 0 {
		t.Error("no dashboard query reads prism_osd_*")
	}
	t.Logf("%d dashboard queries on prism_osd_* returned data from the agent's collector reading %s", checked, o.name())
}
