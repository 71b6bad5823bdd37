package exporter

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// LatestDevices remembers the last inventory so that the health poll reads the same devices.
type LatestDevices struct {
	mu      sync.Mutex
	devices []prismv1.Device
	// first is closed by the first Set.
	first  chan struct{}
	wasSet bool
}

// Set records the devices of an inventory.
func (l *LatestDevices) Set(devices []prismv1.Device) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.devices = devices
	if !l.wasSet {
		l.wasSet = true
		close(l.firstLocked())
	}
}

// First is closed once the first inventory is recorded.
func (l *LatestDevices) First() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.firstLocked()
}

func (l *LatestDevices) firstLocked() chan struct{} {
	if l.first == nil {
		l.first = make(chan struct{})
	}
	return l.first
}

// Get returns the devices of the last inventory (nil before the first).
func (l *LatestDevices) Get() []prismv1.Device {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.devices
}

// Polled is a collector with its own poll (the Open CAS statistics: internal/node/opencas.Collector).
type Polled interface {
	prometheus.Collector
	Poll(ctx context.Context) error
}

// Endpoint is where and to whom the metrics are served.
type Endpoint struct {
	Addr string
	// TLS serves HTTPS; nil serves plain HTTP.
	TLS *tls.Config
	// Guard wraps the metrics handler with the check of who scrapes (metricsauth.Filter);
	// nil serves anyone.
	Guard func(http.Handler) http.Handler
}

// Serve polls the devices' wear counters every period (a runnable loop in the agent, since
// SMART pages cannot be watched) and serves e, with the Go and process collectors, on ep
// until ctx ends. Each of extra is polled on the same period and served too.
func Serve(ctx context.Context, ep Endpoint, period time.Duration, e *Exporter, devices *LatestDevices, extra ...Polled) error {
	log := logf.FromContext(ctx).WithName("metrics")
	reg := prometheus.NewRegistry()
	reg.MustRegister(e, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, x := range extra {
		reg.MustRegister(x)
	}
	var h http.Handler = &gzipOnce{next: promhttp.HandlerFor(reg, promhttp.HandlerOpts{DisableCompression: true})}
	if ep.Guard != nil {
		h = ep.Guard(h)
	}
	srv := &http.Server{Addr: ep.Addr, Handler: h, ReadHeaderTimeout: 10 * time.Second, TLSConfig: ep.TLS}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	go pollLoop(ctx, period, devices, func() {
		if d := devices.Get(); d != nil {
			if err := e.Poll(ctx, d); err != nil {
				log.Error(err, "Saving the wear history")
			}
			// Once when a source starts failing, not at every poll: the status's
			// WearCountersRead condition and the error counter say it goes on.
			for _, f := range e.NewFailures() {
				log.Info("Wear counters not read", "device", f.Device, "source", f.Source, "error", f.Message)
			}
		}
		for _, x := range extra {
			if err := x.Poll(ctx); err != nil {
				// No casadm (Open CAS not installed) is normal where no policy asks for a cache.
				log.V(1).Info("Statistics not read", "error", err.Error())
			}
		}
	})
	log.Info("Serving metrics", "address", ep.Addr, "https", ep.TLS != nil, "authorized", ep.Guard != nil)
	listen := srv.ListenAndServe
	if ep.TLS != nil {
		listen = func() error { return srv.ListenAndServeTLS("", "") }
	}
	if err := listen(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// pollLoop calls poll now, every period after, and once more as soon as the first inventory
// is recorded: the agent's first poll usually comes before its first inventory, whose devices
// would otherwise reach the metrics a whole period late.
func pollLoop(ctx context.Context, period time.Duration, devices *LatestDevices, poll func()) {
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	first := devices.First()
	for {
		poll()
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-first:
			first = nil // a nil channel never fires again
		}
	}
}
