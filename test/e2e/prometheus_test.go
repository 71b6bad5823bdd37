package e2e

// The chain's Prometheus spec (docs/e2e.md, spec 6f): a real Prometheus scrapes every agent,
// every dashboard query runs against it (test/support/panelcheck, as the demo's
// --check-panels), and the operator's endurance page, which the chart points at it
// (operator.prometheusURL), answers with every node and its drives.

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/test/e2e/prometheus"
	"github.com/prism-storage/prism/test/support/panelcheck"
)

// mustExpose are the metrics every agent of the guest serves whatever its drives report (the
// inventory, the drive database's rating, the node's policy); with Rook's operator, the OSD's
// BlueFS figures the agent reads from its admin socket (spec 5b) too. The panel check exempts
// a query only for a metric no agent exposes, so these keep it from passing on an agent that
// lost them.
func mustExpose() []string {
	m := []string{"prism_device_info", "prism_device_capacity_bytes", "prism_device_rated_dwpd",
		"prism_node_info", "prism_node_inventory_timestamp_seconds"}
	if cfg.rookOperator {
		m = append(m, "prism_osd_db_total_bytes", "prism_osd_db_used_bytes")
	}
	return m
}

// whyNoData says why a query reading metric cannot have data on this cluster.
func whyNoData(metric string) string {
	if strings.HasPrefix(metric, "ceph_") {
		return "ceph_* come from Ceph's mgr exporter, which this Prometheus does not scrape; test/ceph (TestCephOSDTrace) proves these queries against a real Ceph mgr"
	}
	return metric + " is served by no agent here (the guest's drives or policy give it no value: no cache, NVMe-oF drives' SMART)"
}

// agentNodes are the Ready nodes with a Ready agent pod, and that pod.
func agentNodes(g Gomega) map[string]*corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx(), pods, client.InNamespace(cfg.namespace),
		client.MatchingLabels{"app.kubernetes.io/component": "agent"})).To(Succeed())
	out := map[string]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.PodIP == "" || !podReady(p) {
			continue
		}
		n := &corev1.Node{}
		g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: p.Spec.NodeName}, n)).To(Succeed())
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				out[n.Name] = p
			}
		}
	}
	g.Expect(out).To(HaveKey(cfg.node), "no Ready agent on %s", cfg.node)
	if cfg.node2 != "" {
		g.Expect(out).To(HaveKey(cfg.node2), "no Ready agent on %s", cfg.node2)
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// deployPrometheus creates the suite's Prometheus on the suite's node (where its image was
// imported), or brings its targets up to date, and waits until it is ready.
func deployPrometheus(agents map[string]*corev1.Pod) {
	var targets []prometheus.Target
	for node, p := range agents {
		port := strconv.Itoa(int(namedPort(p, "metrics", 9464)))
		targets = append(targets, prometheus.Target{Address: net.JoinHostPort(p.Status.PodIP, port), Node: node, Pod: p.Name})
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].Node < targets[j].Node })
	objs, err := prometheus.Objects(cfg.node, cfg.prometheusImage, targets)
	Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		err := k8s.Create(ctx(), o)
		if cm, ok := o.(*corev1.ConfigMap); ok && apierrors.IsAlreadyExists(err) {
			old := &corev1.ConfigMap{}
			Expect(k8s.Get(ctx(), client.ObjectKeyFromObject(cm), old)).To(Succeed())
			old.Data = cm.Data
			err = k8s.Update(ctx(), old)
		}
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred(), "create %T %s", o, o.GetName())
		}
	}
	GinkgoWriter.Printf("Prometheus targets: %+v\n", targets)
	Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: prometheus.Namespace, Name: prometheus.Name}, d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1), "Prometheus Deployment: %+v", d.Status)
	}).Should(Succeed())
}

// prometheusDeployed: the suite's Prometheus is available (the endpoints spec then expects the
// page's named query answered).
func prometheusDeployed() bool {
	d := &appsv1.Deployment{}
	return k8s.Get(ctx(), client.ObjectKey{Namespace: prometheus.Namespace, Name: prometheus.Name}, d) == nil && d.Status.AvailableReplicas >= 1
}

// expectPrometheusSeesEveryAgent: (a) Prometheus scrapes every agent of a Ready node, three
// scrapes at least; (b) every dashboard query has data for each such node, unless it reads a
// metric that node's agent (for the overview: every agent) does not serve, each agent serving
// mustExpose; (c) the endurance page, through its
// Service with the reader's token, names every node, its drives of both models and the fast
// drive's rated DWPD.
func expectPrometheusSeesEveryAgent() {
	if cfg.prometheusImage == "" {
		Skip("PRISM_E2E_PROMETHEUS_IMAGE is not set: no Prometheus image on the node (hack/e2e/prometheus-image.sh)")
	}
	agents := agentNodes(Default)
	deployPrometheus(agents)
	prom := prometheus.URL

	// (a) Every agent up, with enough samples for the dashboards' 1-minute rate windows.
	Eventually(func(g Gomega) {
		for node := range agents {
			n, err := panelcheck.Scalar(ctx(), prom, fmt.Sprintf(`sum_over_time(up{job=%q, node=%q}[2m])`, prometheus.Job, node))
			g.Expect(err).NotTo(HaveOccurred(), "up of the agent on %s", node)
			g.Expect(n).To(BeNumerically(">=", 3), "successful scrapes of the agent on %s in 2 min", node)
			devices, err := panelcheck.Labels(ctx(), prom, fmt.Sprintf(`prism_device_info{node=%q}`, node), "device")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(len(devices)).To(BeNumerically(">=", 2), "prism_device_info of %s: %v", node, devices)
		}
	}).WithTimeout(5 * time.Minute).WithPolling(15 * time.Second).Should(Succeed())

	// (b) Every dashboard query, for each node.
	served := func(selector string) map[string]bool {
		names, err := panelcheck.Labels(ctx(), prom, `count by (__name__) ({__name__=~"prism_.+", job="`+prometheus.Job+`"`+selector+`})`, "__name__")
		Expect(err).NotTo(HaveOccurred())
		out := map[string]bool{}
		for _, n := range names {
			out[n] = true
		}
		return out
	}
	cluster := served("")
	var failed []string
	for _, node := range slices.Sorted(maps.Keys(agents)) {
		mine := served(fmt.Sprintf(`, node=%q`, node))
		for _, m := range mustExpose() {
			Expect(mine).To(HaveKey(m), "the agent on %s does not serve %s (it serves %v)", node, m, slices.Sorted(maps.Keys(mine)))
		}
		noData, err := panelcheck.UnexposedOnNode(cluster, mine, whyNoData)
		Expect(err).NotTo(HaveOccurred())
		devices, err := panelcheck.Labels(ctx(), prom, fmt.Sprintf(`prism_device_info{node=%q}`, node), "device")
		Expect(err).NotTo(HaveOccurred())
		sort.Strings(devices)
		o, err := panelcheck.ForNode(node, devices, "1m", prometheus.ScrapeInterval, 2*time.Minute, 15*time.Second)
		Expect(err).NotTo(HaveOccurred())
		results, err := panelcheck.Run(ctx(), prom, o)
		Expect(err).NotTo(HaveOccurred())
		v := panelcheck.Judge(results, o, noData)
		GinkgoWriter.Printf("every dashboard query for node %s (devices %v): %d of %d with data\n%s\n", node, devices, v.Checked, len(results), strings.Join(v.Lines, "\n"))
		for _, f := range v.Failed {
			failed = append(failed, node+": "+f)
		}
	}
	Expect(failed).To(BeEmpty(), "dashboard queries without data although every metric they read is served")

	// (c) The endurance page, as a reader's browser asks it.
	expectEndurancePageNames(agents)
}

// expectEndurancePageNames reads the page and its named queries through Service prism-endurance
// with a token of prism-endurance-reader: the fleet counts every node's drives, the node order
// names every node, each node's drives include both models and its fast drive has a rated DWPD.
func expectEndurancePageNames(agents map[string]*corev1.Pod) {
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-endurance"}, svc)).To(Succeed())
	page := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "8082")
	tok := readerToken()
	get := func(path string, q url.Values) (int, []byte) {
		u := page + path
		if q != nil {
			u += "?" + q.Encode()
		}
		req, err := http.NewRequestWithContext(ctx(), http.MethodGet, u, nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		Expect(err).NotTo(HaveOccurred(), "GET %s", u)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		return resp.StatusCode, body
	}
	status, body := get("/", nil)
	Expect(status).To(Equal(http.StatusOK), "the page: %.300s", body)
	Expect(strings.ToLower(string(body))).To(ContainSubstring("<!doctype html>"))

	// series asks the page's named query with params and returns its series' labels and values.
	type series struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	query := func(params url.Values) []series {
		status, body := get("/api/query", params)
		Expect(status).To(Equal(http.StatusOK), "named query %v: %.300s", params, body)
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []series `json:"result"`
			} `json:"data"`
		}
		Expect(json.Unmarshal(body, &r)).To(Succeed(), "named query %v: %.300s", params, body)
		Expect(r.Status).To(Equal("success"))
		GinkgoWriter.Printf("endurance page %v: %s\n", params, body)
		return r.Data.Result
	}
	value := func(s series) float64 {
		str, _ := s.Value[1].(string)
		f, err := strconv.ParseFloat(str, 64)
		Expect(err).NotTo(HaveOccurred(), "value of %v", s)
		return f
	}
	nodes := slices.Sorted(maps.Keys(agents))

	devices := query(url.Values{"name": {"fleet_devices"}})
	Expect(devices).To(HaveLen(1))
	Expect(value(devices[0])).To(BeNumerically(">=", 2*len(nodes)), "fleet_devices")

	var ordered []string
	for _, s := range query(url.Values{"name": {"node_order"}, "k": {"100"}}) {
		ordered = append(ordered, s.Metric["node"])
	}
	Expect(ordered).To(ContainElements(nodes), "the page's node order")

	list := strings.Join(nodes, ",")
	models := map[string][]string{}  // node -> its drives' models
	fastDrive := map[string]string{} // node -> its drive of the fast model
	for _, s := range query(url.Values{"name": {"device_info"}, "nodes": {list}}) {
		models[s.Metric["node"]] = append(models[s.Metric["node"]], s.Metric["model"])
		if s.Metric["model"] == cfg.fastModel {
			fastDrive[s.Metric["node"]] = s.Metric["device"]
		}
	}
	rated := map[[2]string]float64{}
	for _, s := range query(url.Values{"name": {"device_rated_dwpd"}, "nodes": {list}}) {
		rated[[2]string{s.Metric["node"], s.Metric["device"]}] = value(s)
	}
	for _, node := range nodes {
		Expect(models[node]).To(ContainElements(cfg.fastModel, cfg.qlcModel), "the page's drives of %s", node)
		// The drive database rates the fast model (P5800X: 100 DWPD); it has no DWPD for the QLC
		// model (internal/drivedb/drives.csv), whose other figures come from its SMART log.
		d := [2]string{node, fastDrive[node]}
		Expect(rated).To(HaveKey(d), "the page's rated DWPD of %s's %s drive %s", node, cfg.fastModel, d[1])
		Expect(rated[d]).To(BeNumerically(">", 0), "the page's rated DWPD of %s's drive %s", node, d[1])
	}
}
