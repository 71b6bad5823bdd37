package exporter

import (
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
)

// gzipOnce compresses responses with one gzip writer, kept for the life of the process and
// used by one response at a time.
//
// Why not promhttp's own compression: it takes writers from a sync.Pool, which the garbage
// collector empties, so the agent allocated a new 0.8 MiB writer after most collections
// (a collection follows every wear poll) and held one per CPU the scrapes ran on. A scrape
// compresses 57 KB in about a millisecond, so concurrent scrapes (an HA pair of Prometheus
// servers) wait that long for each other.
type gzipOnce struct {
	next http.Handler
	mu   sync.Mutex
	w    *gzip.Writer
}

func (g *gzipOnce) ServeHTTP(rsp http.ResponseWriter, req *http.Request) {
	rsp.Header().Add("Vary", "Accept-Encoding")
	if !acceptsGzip(req.Header.Get("Accept-Encoding")) {
		g.next.ServeHTTP(rsp, req)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.w == nil {
		g.w = gzip.NewWriter(rsp)
	} else {
		g.w.Reset(rsp)
	}
	rsp.Header().Set("Content-Encoding", "gzip")
	g.next.ServeHTTP(gzipResponse{ResponseWriter: rsp, w: g.w}, req)
	_ = g.w.Close()
	g.w.Reset(nil) // do not keep the finished response alive
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip (q=0 refuses it).
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// gzipResponse sends the body through the gzip writer.
type gzipResponse struct {
	http.ResponseWriter
	w *gzip.Writer
}

func (r gzipResponse) Write(b []byte) (int, error) { return r.w.Write(b) }
