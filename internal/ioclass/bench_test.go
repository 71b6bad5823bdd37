package ioclass

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/prism-storage/prism/test/support/ioclasstest"
)

// policy33 is ioclasstest.Policy33: 33 classes, the most Open CAS holds.
var policy33 = ioclasstest.Policy33

func BenchmarkCompile33(b *testing.B) {
	spec := policy33()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// mixedIOs are n IOs of a seeded random mix: the OSD's task names and
// policy33's, sizes and LBAs on and around the policies' constants, both
// directions, some direct; enough variety that branch prediction does not
// learn a cycle.
func mixedIOs(n int, seed uint64) []IO {
	rng := rand.New(rand.NewPCG(seed, 1))
	comms := []string{"tp_osd_tp", "bstore_kv_sync", "bstore_kv_final", "rocksdb:low0", "rocksdb:high0", "ms_dispatch"}
	sizes := []uint64{4096, 8192, 12288, 16384, 65536, 131072, 1 << 20}
	ios := make([]IO, n)
	for i := range ios {
		io := IO{Size: sizes[rng.IntN(len(sizes))], Write: rng.IntN(2) == 0, Direct: rng.IntN(4) == 0,
			Comm: comms[rng.IntN(len(comms))], PID: rng.IntN(64), LBA: rng.Uint64N(64 << 20)}
		if rng.IntN(3) == 0 {
			io.Comm = "proc-" + strconv.Itoa(1+rng.IntN(40))
		}
		if rng.IntN(4) == 0 {
			io.Size = 512 * (1 + rng.Uint64N(512))
		}
		ios[i] = io
	}
	return ios
}

// BenchmarkClassify measures Classify (the compiled tables) against
// ClassifyReference (rule by rule, as the kernel) on the 33-class policy and
// on the default Ceph OSD policy, for a cycle of three IOs (the original
// benchmark) and a random mix of 4096.
func BenchmarkClassify(b *testing.B) {
	cycle := []IO{
		{Size: 4096, Write: true, Comm: "bstore_kv_sync", LBA: 1 << 30},
		{Size: 1 << 20, Comm: "tp_osd_tp", PID: 4242, Direct: true, LBA: 77},
		{Size: 65536, Write: true, Comm: "proc-31", LBA: 1 << 40},
	}
	mixed := mixedIOs(4096, 42)
	for _, p := range []struct {
		name string
		cfg  func() (Config, error)
	}{
		{"policy33", func() (Config, error) { return Compile(policy33()) }},
		{"ceph-osd", func() (Config, error) { return Compile(&DefaultCephOSD().Spec) }},
	} {
		cfg, err := p.cfg()
		if err != nil {
			b.Fatal(err)
		}
		e, err := NewEvaluator(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range []struct {
			name string
			ios  []IO
		}{{"cycle3", cycle}, {"mixed", mixed}} {
			for _, impl := range []struct {
				name string
				f    func(IO) int
			}{{"reference", e.ClassifyReference}, {"compiled", e.Classify}} {
				b.Run(p.name+"/"+m.name+"/"+impl.name, func(b *testing.B) {
					b.ReportAllocs()
					ios, i, sink := m.ios, 0, 0
					for b.Loop() {
						sink += impl.f(ios[i])
						if i++; i == len(ios) {
							i = 0
						}
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mclass/s")
					_ = sink
				})
			}
		}
	}
}
