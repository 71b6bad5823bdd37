// Package webui serves Prism's own endurance page: a per-node table sorted by
// soonest wear-out (worst device, wear, wear-out date, DWPD spent vs rated,
// WAF, α_tier) with paging, and a wear-over-time chart drawn with uPlot, for
// clusters without Grafana. The page's JavaScript queries Prometheus through
// /api/query, a narrow proxy that only forwards instant and range queries
// (GET /api/v1/query and /api/v1/query_range) to the one configured Prometheus.
//
// Routes (relative, so the handler can be mounted under a prefix with
// http.StripPrefix):
//
//	/                 the page
//	/static/…         app.js, app.css, uPlot (vendored by vendor.sh), embedded
//	/api/query        ?name=…[&k=…|&nodes=…|&osds=…][&time=…]          instant query
//	                  ?kind=range&name=…&nodes=…&start=…&end=…&step=…  range query
//	/signin, /signout POST: keep or forget the bearer token in an HttpOnly cookie
//
// Every route but the sign-in form asks the API server who calls (a bearer token,
// or the cookie the form sets) and whether they may get StorageNodes (decision 0049);
// the proxy answers only the page's own named queries (queries.go), never PromQL
// sent by the caller.
package webui

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prism-storage/prism/internal/kube/serving"
)

//go:embed static
var staticFiles embed.FS

// Limits of the query proxy (variables so that tests can shrink them).
var (
	// queryTimeout bounds one proxied query end to end; Prometheus is asked
	// (timeout=) to give up 5 s earlier so that its own error reaches the page.
	queryTimeout = 30 * time.Second
	// maxQueryBytes bounds the PromQL text a page may send.
	maxQueryBytes = 16 << 10
	// maxResponseBytes bounds a proxied answer (1000 nodes × a few devices of
	// instant results are a few hundred KiB; a range over a page of nodes less).
	maxResponseBytes = 32 << 20
)

// Handler serves the endurance page and proxies its queries to the Prometheus
// at promURL (e.g. "http://prometheus-operated.monitoring:9090", a path prefix
// such as "/prometheus" is kept), to the callers access lets through; the others
// get the sign-in form. With an empty or invalid promURL the page still loads and
// says that no Prometheus is configured.
func Handler(promURL string, access Checker) http.Handler {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	p := newProxy(promURL)
	mux := http.NewServeMux()
	mux.Handle("POST /signin", signin(access))
	mux.HandleFunc("POST /signout", signout)
	mux.Handle("GET /static/", http.StripPrefix("/static/", cacheFor(time.Hour, http.FileServerFS(sub))))
	mux.Handle("GET /api/query", p)
	mux.HandleFunc("/api/query", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, HEAD")
		apiError(w, http.StatusMethodNotAllowed, "bad_data", "only GET is allowed")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		data, err := fs.ReadFile(sub, "index.html")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(data))
	})
	return securityHeaders(openOrGated(access, mux))
}

// openOrGated sends sign-in and sign-out straight to mux, every other request through
// the access check.
func openOrGated(access Checker, mux http.Handler) http.Handler {
	g := gated(access, mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/signin") || strings.HasSuffix(r.URL.Path, "/signout")) {
			mux.ServeHTTP(w, r)
			return
		}
		g.ServeHTTP(w, r)
	})
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(d.Seconds())))
		h.ServeHTTP(w, r)
	})
}

// securityHeaders: scripts, styles and requests only from this origin, no framing.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}

type proxy struct {
	base   *url.URL // nil: not configured
	reason string   // why base is nil
	client *http.Client
}

func newProxy(promURL string) *proxy {
	p := &proxy{client: &http.Client{
		Timeout: queryTimeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: queryTimeout,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   16,
			ForceAttemptHTTP2:     true,
		},
		// Never follow a redirect: the proxy talks to the configured URL only.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	u, err := url.Parse(strings.TrimSpace(promURL))
	switch {
	case promURL == "":
		p.reason = "no Prometheus URL is configured"
	case err != nil:
		p.reason = "the Prometheus URL is invalid: " + err.Error()
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		p.reason = fmt.Sprintf("the Prometheus URL %q is not an absolute http(s) URL", promURL)
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		p.reason = "the Prometheus URL must not carry credentials, a query or a fragment"
	default:
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = ""
		p.base = u
	}
	return p
}

// allowed lists, per kind, the only parameters forwarded besides the query, and which are
// required; the query itself is built from the page's named templates (queries.go).
var allowed = map[string]struct {
	path     string
	params   []string
	required []string
}{
	"instant": {"/api/v1/query", []string{"time"}, nil},
	"range":   {"/api/v1/query_range", []string{"start", "end", "step"}, []string{"start", "end", "step"}},
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.base == nil {
		apiError(w, http.StatusServiceUnavailable, "unavailable", p.reason)
		return
	}
	in := r.URL.Query()
	kind := in.Get("kind")
	if kind == "" {
		kind = "instant"
	}
	spec, ok := allowed[kind]
	if !ok {
		apiError(w, http.StatusBadRequest, "bad_data", `kind must be "instant" or "range"`)
		return
	}
	query, err := promQL(kind, in)
	if err != nil {
		apiError(w, http.StatusBadRequest, "bad_data", err.Error())
		return
	}
	out := url.Values{}
	for _, name := range spec.params {
		v := in.Get(name)
		if v == "" {
			continue
		}
		if !validTime(v) {
			apiError(w, http.StatusBadRequest, "bad_data", fmt.Sprintf("%s: %q is not a number, duration or RFC 3339 time", name, v))
			return
		}
		out.Set(name, v)
	}
	for _, name := range spec.required {
		if out.Get(name) == "" {
			apiError(w, http.StatusBadRequest, "bad_data", "missing parameter "+name)
			return
		}
	}
	if len(query) > maxQueryBytes {
		apiError(w, http.StatusRequestEntityTooLarge, "bad_data", fmt.Sprintf("query longer than %d bytes: ask for fewer nodes", maxQueryBytes))
		return
	}
	out.Set("query", query)
	out.Set("timeout", promTimeout().String())

	target := *p.base
	target.Path = p.base.Path + spec.path
	target.RawQuery = out.Encode()
	ctx, cancel := context.WithTimeout(r.Context(), queryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		status := http.StatusBadGateway
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			status = http.StatusGatewayTimeout
		}
		apiError(w, status, "unavailable", "Prometheus did not answer: "+scrub(err.Error(), p.base))
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxResponseBytes)+1))
	if err != nil {
		apiError(w, http.StatusBadGateway, "unavailable", "reading Prometheus' answer: "+scrub(err.Error(), p.base))
		return
	}
	if len(body) > maxResponseBytes {
		apiError(w, http.StatusBadGateway, "too_large", fmt.Sprintf("Prometheus' answer is larger than %d bytes: narrow the query", maxResponseBytes))
		return
	}
	// Prometheus answers JSON for success and for its own errors (400, 422, 503);
	// anything else (a login page, a redirect) is not passed through.
	if !json.Valid(body) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		apiError(w, http.StatusBadGateway, "unavailable", fmt.Sprintf("Prometheus answered %s without a JSON body", resp.Status))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// promTimeout is the evaluation timeout Prometheus is given: 5 s less than ours.
func promTimeout() time.Duration {
	if queryTimeout > 10*time.Second {
		return queryTimeout - 5*time.Second
	}
	return queryTimeout / 2
}

// validTime accepts what Prometheus accepts for time, start, end and step:
// a float, an RFC 3339 time or a duration; anything else never leaves here.
func validTime(v string) bool {
	if len(v) > 40 {
		return false
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune(".:+-", c)) {
			return false
		}
	}
	return true
}

// scrub keeps the Prometheus address out of error messages shown in the page.
func scrub(msg string, base *url.URL) string {
	return strings.ReplaceAll(msg, base.String(), "prometheus")
}

// apiError answers in Prometheus' own error format, which the page reads.
func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": typ, "error": msg})
}

// Server runs Handler on Addr until its context ends. It implements
// controller-runtime's manager.Runnable (Start) and runs on every replica,
// leader or not (NeedLeaderElection).
type Server struct {
	Addr          string // e.g. ":8082"
	PrometheusURL string
	Access        Checker // who may read; required
	// CertDir holds tls.crt and tls.key to serve HTTPS; empty serves HTTP (reached
	// through kubectl port-forward, whose tunnel is the API server's TLS).
	CertDir string
}

// Start serves until ctx is done, then shuts down gracefully.
func (s *Server) Start(ctx context.Context) error {
	if s.Access == nil {
		return errors.New("the endurance page needs an access check: it never serves anonymous readers")
	}
	srv := &http.Server{
		Addr:              s.Addr,
		Handler:           Handler(s.PrometheusURL, s.Access),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      queryTimeout + 15*time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	if s.CertDir != "" {
		tlsCfg, err := serving.TLSConfig(s.CertDir)
		if err != nil {
			return err
		}
		srv.TLSConfig = tlsCfg
		go func() { errc <- srv.ListenAndServeTLS("", "") }()
	} else {
		go func() { errc <- srv.ListenAndServe() }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// NeedLeaderElection tells controller-runtime to serve on every replica.
func (s *Server) NeedLeaderElection() bool { return false }
