package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/prism-storage/prism/internal/dashboards"
	"github.com/prism-storage/prism/internal/kube/access"
	"github.com/prism-storage/prism/internal/webui"
	"github.com/prism-storage/prism/test/support/panelcheck"
)

// playwrightVersion is the npm playwright-core the test drives Chromium with.
// It never downloads a browser: it launches Debian's /usr/bin/chromium.
const playwrightVersion = "1.65.1"

const chromiumPath = "/usr/bin/chromium"

func TestEndurance(t *testing.T) {
	tools := ensureTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// playwright-core installs while Prometheus collects data.
	pwDir := t.TempDir()
	pwDone := make(chan error, 1)
	go func() { pwDone <- installPlaywright(ctx, tools, pwDir) }()

	start := time.Now()
	synthetic := httptest.NewServer(syntheticServer(start)) // listens on 127.0.0.1
	defer synthetic.Close()
	prom := startPrometheus(t, ctx, tools.prometheus, synthetic.Listener.Addr().String())
	waitForData(t, ctx, prom)
	t.Logf("Prometheus %s has the synthetic exposition's data after %s", prom, time.Since(start).Round(time.Second))

	// That every panel has data from REAL agents is checked by hack/demo --check-panels; here
	// the queries run against made-up series, which also cover the panels the demo cannot
	// feed (WAF, Ceph's BlueFS series).
	t.Run("dashboard queries against the synthetic exposition", func(t *testing.T) { checkQueries(t, ctx, prom) })
	t.Run("per-policy OSD panels against the synthetic cluster's values", func(t *testing.T) { checkPolicyPanels(t, ctx, prom) })
	t.Run("endurance page in chromium", func(t *testing.T) {
		if err := <-pwDone; err != nil {
			t.Fatalf("installing playwright-core@%s: %v", playwrightVersion, err)
		}
		checkPage(t, ctx, tools, prom, pwDir)
	})
}

// ---- tools -------------------------------------------------------------------

type toolPaths struct{ prometheus, node, npm string }

// ensureTools finds Prometheus, Chromium, node and npm, installing Debian's
// packages for the missing ones when root; without root it skips and says what
// is missing.
func ensureTools(t *testing.T) toolPaths {
	t.Helper()
	want := []struct{ bin, pkg string }{{"prometheus", "prometheus"}, {chromiumPath, "chromium"}, {"node", "nodejs"}, {"npm", "npm"}}
	var missing, pkgs []string
	for _, w := range want {
		if _, err := exec.LookPath(w.bin); err != nil {
			missing = append(missing, w.bin)
			pkgs = append(pkgs, w.pkg)
		}
	}
	if len(missing) > 0 {
		if os.Geteuid() != 0 {
			t.Skipf("SKIP: %s not installed and not root, so the Debian packages %s cannot be installed", strings.Join(missing, ", "), strings.Join(pkgs, " "))
		}
		if _, err := exec.LookPath("apt-get"); err != nil {
			t.Skipf("SKIP: %s not installed and there is no apt-get", strings.Join(missing, ", "))
		}
		t.Logf("installing Debian packages %s", strings.Join(pkgs, " "))
		for _, args := range [][]string{{"update", "-qq"}, append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...)} {
			cmd := exec.Command("apt-get", args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	}
	var p toolPaths
	var err error
	for _, x := range []struct {
		dst *string
		bin string
	}{{&p.prometheus, "prometheus"}, {&p.node, "node"}, {&p.npm, "npm"}} {
		if *x.dst, err = exec.LookPath(x.bin); err != nil {
			t.Fatalf("%s still missing after installing: %v", x.bin, err)
		}
	}
	out, err := exec.Command(p.node, "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".", 2)[0])
	if major < 20 {
		msg := fmt.Sprintf("playwright-core %s needs Node.js ≥ 20, this is %s", playwrightVersion, strings.TrimSpace(string(out)))
		if os.Geteuid() != 0 {
			t.Skip("SKIP: " + msg)
		}
		t.Fatal(msg)
	}
	return p
}

// installPlaywright installs the pinned playwright-core into dir (no browser).
func installPlaywright(ctx context.Context, tools toolPaths, dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"prism-browser-test","private":true}`+"\n"), 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, tools.npm, "install", "--no-save", "--no-audit", "--no-fund", "--no-package-lock",
		"--loglevel=error", "playwright-core@"+playwrightVersion)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// ---- Prometheus ----------------------------------------------------------------

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startPrometheus runs a real Prometheus on 127.0.0.1 with a temporary TSDB,
// scraping the synthetic exposition of every node's agent and of the Ceph mgr every second.
func startPrometheus(t *testing.T, ctx context.Context, bin, syntheticAddr string) string {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n")
	cfg.WriteString("  - job_name: prism-agent\n    static_configs:\n")
	for _, n := range syntheticNodes {
		fmt.Fprintf(&cfg, "      - targets: [%q]\n        labels: {__metrics_path__: /nodes/%s/metrics, instance: %s}\n", syntheticAddr, n.name, n.name)
	}
	// Ceph's mgr module exports instance as the OSD host: keep it (as Ceph's docs advise).
	fmt.Fprintf(&cfg, "  - job_name: ceph\n    honor_labels: true\n    metrics_path: /ceph/metrics\n    static_configs:\n      - targets: [%q]\n", syntheticAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--storage.tsdb.retention.time=1h",
		"--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			if log, _ := os.ReadFile(logf.Name()); len(log) > 0 {
				t.Logf("prometheus log:\n%s", log)
			}
		}
	})
	base := "http://" + addr
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		if ctx.Err() != nil || cmd.ProcessState != nil {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("Prometheus did not become ready on %s: %v\n%s", addr, err, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitForData waits until every synthetic series is in and every device has a few samples.
func waitForData(t *testing.T, ctx context.Context, prom string) {
	t.Helper()
	devices, osds := 0, 0
	for _, n := range syntheticNodes {
		devices += len(n.devices)
		for _, d := range n.devices {
			if d.osd >= 0 {
				osds++
			}
		}
	}
	checks := []struct {
		query string
		min   float64
	}{
		{"count(prism_device_info)", float64(devices)},
		{"count(ceph_disk_occupation)", float64(osds)},
		{"min(count_over_time(prism_device_host_written_bytes_total[1m]))", 6},
	}
	deadline := time.Now().Add(90 * time.Second)
	for _, c := range checks {
		for {
			v, err := panelcheck.Scalar(ctx, prom, c.query)
			if err == nil && v >= c.min {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				t.Fatalf("Prometheus has no data: %s = %v (want ≥ %v), %v", c.query, v, c.min, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// ---- (a) every dashboard query against the synthetic exposition ------------------

// checkQueries runs every query of every generated dashboard, variables substituted with
// values of the synthetic cluster, and requires data with at least one finite value: the
// queries are valid PromQL and select what the exposition (docs/metrics.md) serves.
func checkQueries(t *testing.T, ctx context.Context, prom string) {
	results, err := panelcheck.Run(ctx, prom, panelcheck.Options{
		Common: map[string]string{"__rate_interval": "30s", "__interval": "2s", "topn": "10"},
		PerBoard: map[string]map[string]string{
			dashboards.UIDOverview: {"node": ".*"}, // "All"
			dashboards.UIDNode:     {"node": soonestNode, "device": ".*"},
			dashboards.UIDDevice:   {"node": soonestNode, "device": soonestDevice},
		},
		Range: time.Minute, Step: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if p := r.Problem(); p != "" {
			t.Errorf("%s: %s\n  %s", r.Name(), p, r.Run)
		}
	}
	if len(results) < 50 {
		t.Fatalf("only %d queries checked", len(results))
	}
	t.Logf("%d dashboard queries returned data from Prometheus scraping the synthetic exposition", len(results))
}

// ---- (b) the endurance page in Chromium ---------------------------------------------

type pageVisit struct {
	State         string     `json:"state"`
	Status        string     `json:"status"`
	TableState    string     `json:"tableState"`
	ChartState    string     `json:"chartState"`
	Rows          [][]string `json:"rows"`
	PageInfo      string     `json:"pageInfo"`
	OSDRows       [][]string `json:"osdRows"`
	OSDState      string     `json:"osdState"`
	Summary       []string   `json:"summary"`
	ConsoleErrors []string   `json:"consoleErrors"`
	PageErrors    []string   `json:"pageErrors"`
	BadResponses  []string   `json:"badResponses"`
	Chart         *struct {
		Series  int      `json:"series"`
		Labels  []string `json:"labels"`
		Points  int      `json:"points"`
		NonNull []int    `json:"nonNull"`
	} `json:"chart"`
	CanvasInk int `json:"canvasInk"`
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String() + "/"
}

// The page asks the API server who calls (webui.PageAccess); here a table stands for it,
// as test/envtest/endpoints_test.go asks a real one.
const (
	browserReaderToken   = "browser-reader-token"
	browserOutsiderToken = "browser-outsider-token"
)

type browserReaders struct{}

func (browserReaders) Check(_ context.Context, r *http.Request, attrs authorizer.AttributesRecord) access.Verdict {
	switch r.Header.Get("Authorization") {
	case "Bearer " + browserReaderToken:
		return access.Verdict{Status: http.StatusOK, User: &user.DefaultInfo{Name: "reader"}}
	case "Bearer " + browserOutsiderToken:
		return access.Verdict{Status: http.StatusForbidden, Message: "outsider may not get storagenodes.prism.storage.io"}
	}
	return access.Verdict{Status: http.StatusUnauthorized, Message: "a Kubernetes bearer token is required"}
}

type signinVisit struct {
	FirstStatus   int    `json:"firstStatus"`
	FormShown     bool   `json:"formShown"`
	RefusedStatus int    `json:"refusedStatus"`
	RefusedText   string `json:"refusedText"`
	AfterState    string `json:"afterState"`
}

func checkPage(t *testing.T, ctx context.Context, tools toolPaths, prom, pwDir string) {
	// The page against the real Prometheus, against one without Prism's
	// metrics, and against none at all.
	pageURL := serve(t, webui.Handler(prom, browserReaders{}))
	empty := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		typ := "vector"
		if strings.HasSuffix(r.URL.Path, "query_range") {
			typ = "matrix"
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":%q,"result":[]}}`, typ)
	}))
	emptyURL := serve(t, webui.Handler(strings.TrimSuffix(empty, "/"), browserReaders{}))
	downURL := serve(t, webui.Handler("http://"+freePort(t), browserReaders{}))

	script, err := os.ReadFile("drive.js")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pwDir, "drive.js"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	// The screenshot goes to a temporary directory; PRISM_UPDATE_SCREENSHOT=1 refreshes the one
	// in docs/ (tests must not change tracked files on every run).
	shot := filepath.Join(t.TempDir(), "endurance-page.png")
	if os.Getenv("PRISM_UPDATE_SCREENSHOT") != "" {
		if shot, err = filepath.Abs(filepath.Join("..", "..", "docs", "images", "endurance-page.png")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(runCtx, tools.node, "drive.js")
	cmd.Dir = pwDir
	cmd.Env = append(os.Environ(),
		"PRISM_URL="+pageURL, "EMPTY_URL="+emptyURL, "DOWN_URL="+downURL,
		"READER_TOKEN="+browserReaderToken, "OUTSIDER_TOKEN="+browserOutsiderToken,
		"SCREENSHOT="+shot, "USER_DATA_DIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("drive.js: %v\n%s%s", err, stderr.String(), stdout.String())
	}
	var got struct {
		Signin                   signinVisit
		Main, Paged, Empty, Down pageVisit
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("drive.js output: %v\n%s", err, stdout.String())
	}
	if s := got.Signin; s.FirstStatus != 401 || !s.FormShown || s.RefusedStatus != 403 ||
		!strings.Contains(s.RefusedText, "may not get storagenodes") || s.AfterState != "ready" {
		t.Errorf("sign-in: %+v; want 401 with the form, 403 for the outsider's token, the page for the reader's", s)
	}

	m := got.Main
	if m.State != "ready" || m.TableState != "" || m.ChartState != "" {
		t.Errorf("page state %q, table %q, chart %q, status %q", m.State, m.TableState, m.ChartState, m.Status)
	}
	var order []string
	for _, r := range m.Rows {
		if len(r) != 8 {
			t.Fatalf("row %v: want 8 cells", r)
		}
		order = append(order, r[1])
	}
	if strings.Join(order, " ") != strings.Join(expectedOrder, " ") {
		t.Errorf("node order %v, want %v (soonest wear-out first)", order, expectedOrder)
	}
	if len(m.Rows) > 0 {
		first := m.Rows[0]
		t.Logf("first row: %q", first)
		if first[1] != soonestNode || !strings.HasPrefix(first[2], soonestDevice+" ") || first[3] != "23 %" ||
			!strings.HasPrefix(first[5], "0.20 / 0.82") || first[6] != "1.80" || first[7] != "22 %" {
			t.Errorf("first row %q: want %s, %s, 23 %% wear, DWPD 0.20 / 0.82, WAF 1.80, α 22 %%", first, soonestNode, soonestDevice)
		}
		if last := m.Rows[len(m.Rows)-1]; last[4] != "no projection" {
			t.Errorf("last row %q: want no projection", last)
		}
	}
	devices := 0
	for _, n := range syntheticNodes {
		devices += len(n.devices)
	}
	if len(m.Summary) != 4 || m.Summary[0] != strconv.Itoa(len(syntheticNodes)) || m.Summary[1] != strconv.Itoa(devices) || m.Summary[2] != "23 %" {
		t.Errorf("summary %q", m.Summary)
	}
	if c := m.Chart; c == nil {
		t.Error("no uPlot chart")
	} else {
		if c.Series != len(expectedOrder) || len(c.Labels) == 0 || c.Labels[0] != soonestNode || c.Points < 2 {
			t.Errorf("chart: %d series %v, %d points", c.Series, c.Labels, c.Points)
		}
		for i, n := range c.NonNull {
			if n == 0 {
				t.Errorf("chart series %s has no data", c.Labels[i])
			}
		}
	}
	if m.CanvasInk < 1000 {
		t.Errorf("the chart canvas is blank (%d painted pixels)", m.CanvasInk)
	}
	if len(m.ConsoleErrors)+len(m.PageErrors)+len(m.BadResponses) > 0 {
		t.Errorf("console errors %q, page errors %q, failed requests %q", m.ConsoleErrors, m.PageErrors, m.BadResponses)
	}

	checkOSDRows(t, m)

	p := got.Paged
	if len(p.Rows) != 2 || p.Rows[0][0] != "3" || p.Rows[0][1] != expectedOrder[2] || p.Rows[1][1] != expectedOrder[3] ||
		!strings.HasPrefix(p.PageInfo, "page 2 of 3") || len(p.ConsoleErrors) > 0 {
		t.Errorf("page 2 of 2-row pages: rows %q, %q, console %q", p.Rows, p.PageInfo, p.ConsoleErrors)
	}

	e := got.Empty
	if len(e.OSDRows) != 0 || !strings.Contains(e.OSDState, "No OSD reported") {
		t.Errorf("no-data page: OSD rows %q, state %q", e.OSDRows, e.OSDState)
	}
	if e.State != "empty" || !strings.Contains(e.TableState, "No data") || len(e.Rows) != 0 || len(e.ConsoleErrors)+len(e.PageErrors) > 0 {
		t.Errorf("no-data page: state %q, table %q, rows %d, console %q %q", e.State, e.TableState, len(e.Rows), e.ConsoleErrors, e.PageErrors)
	}
	d := got.Down
	if d.State != "error" || !strings.Contains(d.TableState, "Could not query Prometheus") || len(d.Rows) != 0 || len(d.PageErrors) > 0 {
		t.Errorf("Prometheus-down page: state %q, table %q, rows %d, page errors %q", d.State, d.TableState, len(d.Rows), d.PageErrors)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Errorf("screenshot %s: %v", shot, err)
	} else {
		t.Logf("screenshot: %s (%d bytes)", shot, fi.Size())
	}
}

// checkOSDRows: the page's OSD section lists every synthetic OSD, the spilled one first, then
// by forecast (the highest id fills soonest), with the shares the exposition serves.
func checkOSDRows(t *testing.T, m pageVisit) {
	t.Helper()
	osds := 0
	for _, n := range syntheticNodes {
		for _, d := range n.devices {
			if d.osd >= 0 {
				osds++
			}
		}
	}
	if len(m.OSDRows) != osds || m.OSDState != "" {
		t.Fatalf("OSD section: %d rows (want %d), state %q", len(m.OSDRows), osds, m.OSDState)
	}
	first, second := m.OSDRows[0], m.OSDRows[1]
	t.Logf("OSD rows: %q, %q", first, second)
	if len(first) != 8 || first[0] != soonestNode || first[3] != "3.0 GiB" || first[5] != "spilled" {
		t.Errorf("first OSD row %q: want the spilled OSD of %s (3.0 GiB on the slow device)", first, soonestNode)
	}
	// osd.13: (30 − 24.5) GiB left at 2 GiB a day is 2.75 days.
	if second[1] != "osd.13" || !strings.HasSuffix(second[5], "(in 3 d)") ||
		second[4] != "WAL, L0–L2" || second[6] != "5.0 % / 30 % / 64 %" {
		t.Errorf("second OSD row %q: want osd.13, a forecast in 3 days, WAL, L0–L2 and shares 5.0 %% / 30 %% / 64 %%", second)
	}
}
