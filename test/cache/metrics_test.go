package cache

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/node/opencas"
)

// gathered is every sample of a registry, by metric name, as "label=value,..." → value.
func gathered(t *testing.T, reg *prometheus.Registry) map[string]map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, f := range fams {
		out[f.GetName()] = map[string]float64{}
		for _, m := range f.GetMetric() {
			var l []string
			for _, p := range m.GetLabel() {
				if p.GetName() != "node" {
					l = append(l, p.GetName()+"="+p.GetValue())
				}
			}
			out[f.GetName()][strings.Join(l, ",")] = sampleValue(m)
		}
	}
	return out
}

func sampleValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestCacheMetrics: after writes through an exported object, the collector's metrics agree
// with the emulator's own statistics, read with casadm directly.
func TestCacheMetrics(t *testing.T) { forEachRelease(t, testCacheMetrics) }

func testCacheMetrics(t *testing.T) {
	h := newHost(t)
	mustOK(t, h.reconcile(desired(t), nil))
	h.io(1, "size=4096,dir=write", 64)
	h.io(2, "size=1048576,dir=write", 4)

	col := &opencas.Collector{Node: "n1", Exec: hostexec.Local{}}
	if err := col.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	got := gathered(t, reg)

	s := h.stats()
	if v := got["prism_cache_info"]["cache=1,device="+part+",line_size_bytes=4096,mode=wb,state=Running"]; v != 1 {
		t.Errorf("prism_cache_info: %v", got["prism_cache_info"])
	}
	exported := float64(s.Blocks.ExportedWrites.Value * 4096)
	if v := got["prism_cache_exported_written_bytes_total"]["cache=1"]; v != exported || v == 0 {
		t.Errorf("exported writes %v, casadm says %v", v, exported)
	}
	qlc := float64((s.Blocks.CoreWrites.Value + valueOf(s.Blocks.CleanerCoreWrites)) * 4096)
	if v := got["prism_cache_qlc_written_bytes_total"]["cache=1"]; v != qlc {
		t.Errorf("QLC writes %v, casadm says %v", v, qlc)
	}
	if v, want := got["prism_cache_write_reduction_ratio"]["cache=1"], 1-qlc/exported; v != want {
		t.Errorf("α %v, want %v", v, want)
	}
	if v, want := got["prism_cache_occupancy_ratio"]["cache=1"], float64(s.Usage.Occupancy.Value)/float64(s.Cache.SizeBlocks); v != want || v == 0 {
		t.Errorf("occupancy ratio %v, want %v", v, want)
	}
	// Per class: the written bytes add up to the cache's; per core: each core's own record.
	var classWrites float64
	for _, v := range got["prism_cache_class_written_bytes_total"] {
		classWrites += v
	}
	if classWrites != exported {
		t.Errorf("per-class writes add up to %v, exported %v", classWrites, exported)
	}
	for _, core := range []string{"1", "2"} {
		rec := h.stats("-j", core)
		want := float64(rec.Blocks.CoreWrites.Value * 4096)
		found := false
		for k, v := range got["prism_cache_core_written_bytes_total"] {
			if strings.HasPrefix(k, "cache=1,core="+core+",") {
				found = true
				if v != want {
					t.Errorf("core %s writes %v, casadm says %v", core, v, want)
				}
			}
		}
		if !found {
			t.Errorf("no prism_cache_core_written_bytes_total for core %s: %v", core, got["prism_cache_core_written_bytes_total"])
		}
	}
	if got["prism_cache_failed"]["cache=1"] != 0 {
		t.Error("a running cache is reported failed")
	}

	// The cache device fails; the next IO meets the errors, and the metric says so.
	h.casadm("--emulator-fail-cache", "1")
	h.ioFails(1, "size=4096,dir=write", 1)
	if err := col.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := gathered(t, reg); got["prism_cache_failed"]["cache=1"] != 1 {
		t.Errorf("after a cache failure: prism_cache_failed %v", got["prism_cache_failed"])
	}
}
