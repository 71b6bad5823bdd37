package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/cachesim"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/test/support/ioclasstest"
)

// parity drives the emulator's model and internal/cachesim (the simulator's
// model) with the same requests and fails on the first counter, occupancy
// or dirty count that differs. Both keep a request's own lines from
// eviction while it maps them, as OCF does; requests of several lines
// against a class at its cap or a full cache of 100 lines exercise that.
// It returns how many requests both ran.
func parity(t *testing.T, name string, cfg ioclass.Config, mode string, lineKiB int, lines uint64, ios []ioclass.IO) int {
	t.Helper()
	ca := newCache(1, &Device{Path: "/dev/disk/by-id/fast", SizeBytes: 64 * gib}, mode, lineKiB, false)
	ca.Lines = lines
	var classes []Class
	var simClasses []cachesim.Class
	if _, listed := cfg.Class(0); !listed {
		classes = append(classes, *ca.class(0))
	}
	for _, cl := range cfg.Classes {
		prio := -1
		if cl.Priority != nil {
			prio = *cl.Priority
		}
		classes = append(classes, Class{ID: cl.ID, Name: cl.Rule, Priority: prio, MaxSize: cl.MaxSizePercent()})
		simClasses = append(simClasses, cachesim.Class{ID: cl.ID, Priority: prio, MaxSize: cl.MaxSizePercent()})
	}
	ca.Classes = classes
	k := newCore(1, "/dev/disk/by-id/qlc")
	ca.Cores = []*Core{k}
	ev, err := ioclass.NewEvaluator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := cachesim.New(cachesim.Config{Lines: lines, LineBytes: uint64(lineKiB) * kib, Mode: cachesim.Mode(mode),
		Classes: simClasses, SeqCutoffBytes: k.SeqCutoffBytes, SeqCutoffPolicy: cachesim.SeqCutoff(k.SeqCutoffPolicy)})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(ca, 0)
	every := 1 + len(ios)/64 // compare the lines about 64 times per run, and at the end
	for i, io := range ios {
		io.CoreID = 1
		m.submit(k, ev, io)
		sim.Submit(cachesim.Request{Write: io.Write, Offset: io.LBA * 512, Size: io.Size, Class: ev.Classify(io)})
		for _, cl := range ca.Classes {
			want := k.stats(cl.ID)
			got := sim.Stats(cl.ID)
			if diff := counterDiff(want, &got); diff != "" {
				t.Fatalf("%s: after request %d (%s), class %d: %s", name, i, io, cl.ID, diff)
			}
			if n, _ := sim.Lines(cl.ID); n != m.perClass[cl.ID] {
				t.Fatalf("%s: after request %d, class %d holds %d lines in cachesim, %d in the emulator", name, i, cl.ID, n, m.perClass[cl.ID])
			}
		}
		if i%every != 0 && i != len(ios)-1 {
			continue
		}
		// Same number of lines per class, and each of the emulator's lines is
		// in cachesim, in the same class, equally dirty: the same lines.
		wantDirty := map[int]uint64{}
		for _, l := range m.all {
			if l.Dirty {
				wantDirty[l.Class]++
			}
			class, dirty, ok := sim.Cached(l.Addr)
			if !ok || class != l.Class || dirty != l.Dirty {
				t.Fatalf("%s: after request %d, line %d: emulator class %d dirty %v; cachesim cached %v class %d dirty %v",
					name, i, l.Addr, l.Class, l.Dirty, ok, class, dirty)
			}
		}
		for _, cl := range ca.Classes {
			if _, dirty := sim.Lines(cl.ID); dirty != wantDirty[cl.ID] {
				t.Fatalf("%s: after request %d, class %d has %d dirty lines in cachesim, %d in the emulator", name, i, cl.ID, dirty, wantDirty[cl.ID])
			}
		}
	}
	return len(ios)
}

func counterDiff(e *Counters, s *cachesim.Counters) string {
	pairs := []struct {
		name string
		a, b uint64
	}{
		{"RdTotal", e.RdTotal, s.RdTotal}, {"RdPartialMiss", e.RdPartialMiss, s.RdPartialMiss}, {"RdFullMiss", e.RdFullMiss, s.RdFullMiss},
		{"RdPT", e.RdPT, s.RdPT}, {"WrTotal", e.WrTotal, s.WrTotal}, {"WrPartialMiss", e.WrPartialMiss, s.WrPartialMiss},
		{"WrFullMiss", e.WrFullMiss, s.WrFullMiss}, {"WrPT", e.WrPT, s.WrPT}, {"CleanerReqs", e.CleanerReqs, s.CleanerReqs},
		{"ExpRd", e.ExpRd, s.ExpRd}, {"ExpWr", e.ExpWr, s.ExpWr}, {"CoreRd", e.CoreRd, s.CoreRd}, {"CoreWr", e.CoreWr, s.CoreWr},
		{"CacheRd", e.CacheRd, s.CacheRd}, {"CacheWr", e.CacheWr, s.CacheWr}, {"PTRd", e.PTRd, s.PTRd}, {"PTWr", e.PTWr, s.PTWr},
		{"CleanerCacheRd", e.CleanerCacheRd, s.CleanerCacheRd}, {"CleanerCoreWr", e.CleanerCoreWr, s.CleanerCoreWr},
	}
	for _, p := range pairs {
		if p.a != p.b {
			return fmt.Sprintf("%s: emulator %d, cachesim %d", p.name, p.a, p.b)
		}
	}
	return ""
}

// randomIOs mixes the OSD's tasks, sizes from 4 KiB to 16 KiB (some not
// 4 KiB aligned), both directions, sequential runs (cut-off) and a skewed
// choice of addresses over a volume a few times the cache.
func randomIOs(n int, seed uint64, volumeSectors uint64) []ioclass.IO {
	rng := rand.New(rand.NewPCG(seed, 7))
	comms := []string{"tp_osd_tp", "bstore_kv_sync", "bstore_kv_final", "rocksdb:low0", "ms_dispatch"}
	sizes := []uint64{4096, 4096, 4096, 4096, 8192, 12288, 16384}
	var ios []ioclass.IO
	for len(ios) < n {
		io := ioclass.IO{Size: sizes[rng.IntN(len(sizes))], Write: rng.IntN(3) != 0, Comm: comms[rng.IntN(len(comms))]}
		hot := rng.IntN(4) != 0
		span := volumeSectors
		if hot {
			span = volumeSectors / 16
		}
		io.LBA = rng.Uint64N(span) &^ 7
		if rng.IntN(10) == 0 {
			io.LBA |= 1 // 512-byte aligned only
		}
		run := 1
		if rng.IntN(20) == 0 {
			run = 300 // a sequential stream: 300 × 4 KiB crosses the 1 MiB cut-off
		}
		for j := 0; j < run && len(ios) < n; j++ {
			ios = append(ios, io)
			io.LBA += io.Size / 512
		}
	}
	return ios
}

// TestSimulatorParity: the simulator's cache model gives the emulator's
// counters and occupancy after every request, and holds the same lines,
// equally dirty, at about 64 points of each run, on random mixes, on the
// committed Ceph trace and on a zipf overwrite trace, for several policies,
// modes, line sizes and cache sizes.
func TestSimulatorParity(t *testing.T) {
	policies := map[string]ioclass.Config{}
	for name, spec := range map[string]func() (ioclass.Config, error){
		"ceph-osd": func() (ioclass.Config, error) { return ioclass.Compile(&ioclass.DefaultCephOSD().Spec) },
		"five":     func() (ioclass.Config, error) { return ioclass.Compile(&ioclasstest.FiveClasses().Spec) },
	} {
		cfg, err := spec()
		if err != nil {
			t.Fatal(err)
		}
		policies[name] = cfg
	}
	// A policy of pinned and prioritised classes with small caps, so caps,
	// recycling and pinned eviction all happen.
	prio := func(p int) *int { return &p }
	policies["caps"] = ioclass.Config{Classes: []ioclass.Class{
		{ID: 0, Rule: "unclassified", Priority: prio(22), Allocation: "0.5"},
		{ID: 1, Rule: "process_name:bstore_kv_sync&done", Priority: nil, Allocation: "0.1"},
		{ID: 2, Rule: "process_name:rocksdb:low0&done", Priority: prio(1), Allocation: "0.2"},
		{ID: 3, Rule: "request_size:ge:65536&io_direction:read&done", Priority: prio(255), Allocation: "0"},
		{ID: 4, Rule: "io_direction:write&done", Priority: prio(100), Allocation: "0.3"},
	}}
	data, err := os.ReadFile("../../internal/ioclass/defaults/testdata/ceph-osd-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var sum blktrace.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	traceIOs, err := cachesim.ExpandSummary(&sum)
	if err != nil {
		t.Fatal(err)
	}
	compared, total := 0, 0
	for pname, cfg := range policies {
		for _, mode := range []string{"wb", "wt"} {
			for _, lineKiB := range []int{4, 16} {
				for _, lines := range []uint64{100, 1000} {
					for seed := range uint64(4) {
						name := fmt.Sprintf("%s/%s/%dKiB/%d-lines/random-%d", pname, mode, lineKiB, lines, seed)
						ios := randomIOs(1500, seed<<16+lines+uint64(lineKiB), lines*uint64(lineKiB)*2*4)
						compared += parity(t, name, cfg, mode, lineKiB, lines, ios)
						total += len(ios)
					}
				}
			}
		}
		// The committed trace through write-back caches of 4 KiB lines, 0.2 % and 0.5 % of its
		// 10 GiB data device (the emulator scans every line per eviction: larger is slow).
		permilles := []uint64{2, 5}
		if testing.Short() {
			permilles = permilles[:1]
		}
		for _, permille := range permilles {
			lines := uint64(sum.Host.DataBytes) * permille / 1000 / (4 * kib)
			name := fmt.Sprintf("%s/wb/4KiB/%d‰/ceph-osd-trace", pname, permille)
			compared += parity(t, name, cfg, "wb", 4, lines, traceIOs)
			total += len(traceIOs)
		}
	}
	// Zipf overwrites over 20 times a 1024-line write-back cache: nearly every
	// line dirty, so clean-only eviction, pass-through and cleaning all the
	// time (the pyocf comparison's workload, smaller).
	z := &cachesim.Zipf{VolumeBytes: 20 * 1024 * 4096, BlockBytes: 4096, Theta: 0.99, Count: 30000, Comm: "tp_osd_tp", Seed: 1}
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	var zipfIOs []ioclass.IO
	for io := (ioclass.IO{}); z.Next(&io); {
		zipfIOs = append(zipfIOs, io)
	}
	compared += parity(t, "ceph-osd/wb/4KiB/1024-lines/zipf", policies["ceph-osd"], "wb", 4, 1024, zipfIOs)
	total += len(zipfIOs)
	t.Logf("compared %d of %d requests", compared, total)
}
