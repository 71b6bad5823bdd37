package main

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/cache"
	"github.com/prism-storage/prism/internal/exporter"
	"github.com/prism-storage/prism/internal/inventory"
)

// latestDevices remembers the last inventory so that the health poll reads the same devices.
type latestDevices struct {
	mu      sync.Mutex
	devices []prismv1.Device
}

func (l *latestDevices) set(rep inventory.Report) {
	l.mu.Lock()
	l.devices = rep.Devices
	l.mu.Unlock()
}

func (l *latestDevices) get() []prismv1.Device {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.devices
}

// serveMetrics polls the devices' wear counters every period (a runnable loop in the agent,
// since SMART pages cannot be watched) and serves them on addr until ctx ends.
// caches, when set, reads Open CAS's statistics on the same period.
func serveMetrics(ctx context.Context, addr string, period time.Duration, e *exporter.Exporter, devices *latestDevices, caches *cache.Collector) error {
	log := logf.FromContext(ctx).WithName("metrics")
	reg := prometheus.NewRegistry()
	reg.MustRegister(e, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if caches != nil {
		reg.MustRegister(caches)
	}
	srv := &http.Server{Addr: addr, Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	go func() {
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		for {
			if d := devices.get(); d != nil {
				if err := e.Poll(ctx, d); err != nil {
					log.Error(err, "Saving the wear history")
				}
			}
			if caches != nil {
				if err := caches.Poll(ctx); err != nil {
					// No casadm (Open CAS not installed) is normal where no policy asks for a cache.
					log.V(1).Info("Cache statistics not read", "error", err.Error())
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	log.Info("Serving metrics", "address", addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
