package webui

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProm records what reaches it and answers like Prometheus.
type fakeProm struct {
	mu   sync.Mutex
	reqs []*http.Request
	h    http.HandlerFunc
}

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.reqs = append(f.reqs, r.Clone(r.Context()))
	f.mu.Unlock()
	if f.h != nil {
		f.h(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
}

func (f *fakeProm) last(t *testing.T) *http.Request {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("nothing reached Prometheus")
	}
	return f.reqs[len(f.reqs)-1]
}

func (f *fakeProm) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// get sends a GET as a reader allowed to see the page (tokens: see readers).
func get(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	h.ServeHTTP(rec, req)
	return rec
}

func errorOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Status, Error string }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Status != "error" {
		t.Fatalf("want a Prometheus-style error, got %d %q", rec.Code, rec.Body.String())
	}
	return body.Error
}

func TestProxyForwardsOnlyQueries(t *testing.T) {
	fp := &fakeProm{}
	srv := httptest.NewServer(fp)
	defer srv.Close()
	h := Handler(srv.URL+"/prom/", readers)

	rec := get(t, h, "/api/query?name=fleet_devices&time=1700000000.5&step=9&path=/api/v1/admin/tsdb/delete_series&match[]=up")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("instant: %d %s", rec.Code, rec.Body)
	}
	r := fp.last(t)
	if r.Method != http.MethodGet || r.URL.Path != "/prom/api/v1/query" {
		t.Fatalf("reached %s %s", r.Method, r.URL.Path)
	}
	want := url.Values{"query": {"count(prism_device_info)"}, "time": {"1700000000.5"}, "timeout": {"25s"}}
	if r.URL.Query().Encode() != want.Encode() {
		t.Fatalf("forwarded %q, want %q", r.URL.RawQuery, want.Encode())
	}

	rec = get(t, h, "/api/query?kind=range&name=chart_wear&nodes=n1,n2.rack&start=2024-01-01T00:00:00Z&end=1700000000&step=15s")
	if rec.Code != 200 {
		t.Fatalf("range: %d %s", rec.Code, rec.Body)
	}
	r = fp.last(t)
	if r.URL.Path != "/prom/api/v1/query_range" || r.URL.Query().Get("step") != "15s" || r.URL.Query().Get("query") != `max by (node) (prism_device_percentage_used_ratio{node=~"n1|n2\\.rack"})` {
		t.Fatalf("range reached %s ?%s", r.URL.Path, r.URL.RawQuery)
	}

	// Prometheus' own errors pass through with their status.
	fp.h = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"status":"error","errorType":"bad_data","error":"parse error"}`)
	}
	rec = get(t, h, "/api/query?name=fleet_nodes")
	if rec.Code != 400 || errorOf(t, rec) != "parse error" {
		t.Fatalf("error pass-through: %d %s", rec.Code, rec.Body)
	}
}

func TestProxyRefuses(t *testing.T) {
	fp := &fakeProm{}
	srv := httptest.NewServer(fp)
	defer srv.Close()
	h := Handler(srv.URL, readers)
	long := strings.TrimSuffix(strings.Repeat("node-with-a-long-name-000,", maxQueryBytes/25), ",")
	for _, tc := range []struct {
		method, target string
		code           int
	}{
		{http.MethodPost, "/api/query?name=fleet_nodes", 405},
		{http.MethodDelete, "/api/query?name=fleet_nodes", 405},
		{http.MethodGet, "/api/query?kind=series&name=fleet_nodes", 400},
		{http.MethodGet, "/api/query?kind=admin&name=fleet_nodes", 400},
		{http.MethodGet, "/api/query", 400},
		{http.MethodGet, "/api/query?query=up", 400},
		{http.MethodGet, "/api/query?name=fleet_nodes&query=up", 400},
		{http.MethodGet, "/api/query?kind=range&name=chart_wear&nodes=n1&start=1", 400},
		{http.MethodGet, "/api/query?name=fleet_nodes&time=1%26x%3Dy", 400},
		{http.MethodGet, "/api/query?name=device_info&nodes=" + long, 413},
		{http.MethodGet, "/api/v1/query?query=up", 404},
		{http.MethodGet, "/api/v1/admin/tsdb/snapshot", 404},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tc.method, tc.target, nil)
		req.Header.Set("Authorization", "Bearer "+readerToken)
		h.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("%s %.60s: %d, want %d (%s)", tc.method, tc.target, rec.Code, tc.code, rec.Body)
		}
	}
	if n := fp.count(); n != 0 {
		t.Fatalf("%d refused requests reached Prometheus", n)
	}
}

func TestProxyNotConfigured(t *testing.T) {
	for _, u := range []string{"", "prometheus:9090", "ftp://x", "http://user:pw@x:9090", "http://x:9090/?a=b", "::"} {
		rec := get(t, Handler(u, readers), "/api/query?name=fleet_nodes")
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%q: %d %s", u, rec.Code, rec.Body)
			continue
		}
		if msg := errorOf(t, rec); msg == "" || strings.Contains(msg, "pw") {
			t.Errorf("%q: error %q", u, msg)
		}
		// The page itself still loads and can say so.
		if rec := get(t, Handler(u, readers), "/"); rec.Code != 200 {
			t.Errorf("%q: page %d", u, rec.Code)
		}
	}
}

func TestProxyDoesNotFollowRedirectsOrPassNonJSON(t *testing.T) {
	other := &fakeProm{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	fp := &fakeProm{h: func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherSrv.URL+"/api/v1/query?query=up", http.StatusFound)
	}}
	srv := httptest.NewServer(fp)
	defer srv.Close()
	h := Handler(srv.URL, readers)
	if rec := get(t, h, "/api/query?name=fleet_nodes"); rec.Code != http.StatusBadGateway {
		t.Fatalf("redirect: %d %s", rec.Code, rec.Body)
	}
	if other.count() != 0 {
		t.Fatal("the proxy followed a redirect")
	}
	fp.h = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>login</html>")
	}
	if rec := get(t, h, "/api/query?name=fleet_nodes"); rec.Code != http.StatusBadGateway || strings.Contains(rec.Body.String(), "login") {
		t.Fatalf("non-JSON: %d %s", rec.Code, rec.Body)
	}
}

func TestProxyLimits(t *testing.T) {
	oldMax, oldTimeout := maxResponseBytes, queryTimeout
	defer func() { maxResponseBytes, queryTimeout = oldMax, oldTimeout }()
	maxResponseBytes, queryTimeout = 1024, 300*time.Millisecond

	release := make(chan struct{})
	fp := &fakeProm{h: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("query") == "count(prism_device_info)" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = io.WriteString(w, `{"status":"success","data":"`+strings.Repeat("x", 2048)+`"}`)
	}}
	srv := httptest.NewServer(fp)
	defer srv.Close()
	defer close(release)
	h := Handler(srv.URL, readers)
	if rec := get(t, h, "/api/query?name=fleet_nodes"); rec.Code != http.StatusBadGateway || !strings.Contains(errorOf(t, rec), "larger than") {
		t.Fatalf("large answer: %d %s", rec.Code, rec.Body)
	}
	if fp.last(t).URL.Query().Get("timeout") != "150ms" {
		t.Fatalf("Prometheus timeout %q", fp.last(t).URL.Query().Get("timeout"))
	}
	start := time.Now()
	rec := get(t, h, "/api/query?name=fleet_devices")
	if rec.Code != http.StatusGatewayTimeout || time.Since(start) > 5*time.Second {
		t.Fatalf("slow Prometheus: %d after %s: %s", rec.Code, time.Since(start), rec.Body)
	}
	if strings.Contains(rec.Body.String(), srv.URL) {
		t.Fatalf("error leaks the Prometheus address: %s", rec.Body)
	}
}

func TestPageAndStatic(t *testing.T) {
	h := Handler("http://127.0.0.1:1", readers)
	rec := get(t, h, "/")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("/: %d %s", rec.Code, rec.Header())
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	page := rec.Body.String()
	refs := regexp.MustCompile(`(?:src|href)="(static/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 4 {
		t.Fatalf("page references %d static files", len(refs))
	}
	for _, m := range refs {
		rec := get(t, h, "/"+m[1])
		if rec.Code != 200 || rec.Body.Len() == 0 {
			t.Errorf("%s: %d", m[1], rec.Code)
		}
	}
	for _, name := range []string{"uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE"} {
		if _, err := fs.Stat(staticFiles, "static/"+name); err != nil {
			t.Errorf("vendored %s missing (run internal/webui/vendor.sh): %v", name, err)
		}
	}
	for _, bad := range []string{"/nope", "/static/../webui.go", "/webui.go", "/index.html/x"} {
		if rec := get(t, h, bad); rec.Code == 200 {
			t.Errorf("%s served", bad)
		}
	}
	// The page uses uPlot and no other library.
	js := get(t, h, "/static/app.js").Body.String()
	if !strings.Contains(js, "new uPlot(") {
		t.Error("app.js does not draw with uPlot")
	}
	scripts := regexp.MustCompile(`<script src="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(scripts) != 2 || scripts[0][1] != "static/uPlot.iife.min.js" || scripts[1][1] != "static/app.js" {
		t.Errorf("scripts %v, want uPlot and app.js only", scripts)
	}
}

func TestServerStartStops(t *testing.T) {
	s := &Server{Addr: "127.0.0.1:0", PrometheusURL: "http://127.0.0.1:9090", Access: readers}
	if s.NeedLeaderElection() {
		t.Fatal("the page must run on every replica")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
}
