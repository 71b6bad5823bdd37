package exporter

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func metricsHandler(t *testing.T) http.Handler {
	t.Helper()
	reg := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "prism_test_value_bytes", Help: "A test gauge."}, []string{"device"})
	for _, d := range []string{"nvme0n1", "nvme1n1", "sda"} {
		g.WithLabelValues(d).Set(float64(len(d)) * 1e9)
	}
	reg.MustRegister(g)
	return &gzipOnce{next: promhttp.HandlerFor(reg, promhttp.HandlerOpts{DisableCompression: true})}
}

func scrape(t *testing.T, h http.Handler, acceptEncoding string) (encoding string, body []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	encoding = rec.Header().Get("Content-Encoding")
	body = rec.Body.Bytes()
	if encoding == "gzip" {
		r, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	}
	return encoding, body
}

func TestGzipOnceCompressesOnlyWhenAsked(t *testing.T) {
	h := metricsHandler(t)
	_, plain := scrape(t, h, "")
	if !bytes.Contains(plain, []byte(`prism_test_value_bytes{device="nvme1n1"} 7e+09`)) {
		t.Fatalf("uncompressed body lacks the gauge:\n%s", plain)
	}
	for _, tc := range []struct {
		accept, want string
	}{
		{"", ""},
		{"gzip", "gzip"},
		{"identity", ""},
		{"br, GZIP;q=0.5", "gzip"},
		{"gzip;q=0", ""},
		{"deflate, gzip; q=0.0", ""},
	} {
		// Twice: the second response reuses the writer.
		for range 2 {
			enc, body := scrape(t, h, tc.accept)
			if enc != tc.want {
				t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", tc.accept, enc, tc.want)
			}
			if !bytes.Equal(body, plain) {
				t.Errorf("Accept-Encoding %q: body differs from the uncompressed one:\n%s", tc.accept, body)
			}
		}
	}
}

func TestGzipOnceServesConcurrentScrapes(t *testing.T) {
	h := metricsHandler(t)
	_, plain := scrape(t, h, "")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				req.Header.Set("Accept-Encoding", "gzip")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				r, err := gzip.NewReader(rec.Body)
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, plain) {
					t.Errorf("concurrent scrape: %v, body %q", err, got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0", "br, gzip;q=0.5", "*", "GZip ; q=0.000", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		if acceptsGzip(header) && !strings.Contains(strings.ToLower(header), "gzip") {
			t.Errorf("%q accepted as gzip", header)
		}
	})
}
