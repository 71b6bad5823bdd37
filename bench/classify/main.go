// Command classify measures the IO classifier on one core: Classify (the
// rules compiled into lookup tables) against ClassifyReference (rule by
// rule, as the kernel's classifier.c does), on the 33-class benchmark policy
// and on the default Ceph OSD policy, for a cycle of three IOs and a seeded
// random mix of 4096. Runs alternate reference and compiled, -rounds times,
// and it prints the min and median of each as a markdown table
// (docs/benchmarks.md).
//
//	go run ./bench/classify -rounds 7
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/test/support/ioclasstest"
)

// mixedIOs mirrors the package benchmark's mix (internal/ioclass/bench_test.go).
func mixedIOs(n int, seed uint64) []ioclass.IO {
	rng := rand.New(rand.NewPCG(seed, 1))
	comms := []string{"tp_osd_tp", "bstore_kv_sync", "bstore_kv_final", "rocksdb:low0", "rocksdb:high0", "ms_dispatch"}
	sizes := []uint64{4096, 8192, 12288, 16384, 65536, 131072, 1 << 20}
	ios := make([]ioclass.IO, n)
	for i := range ios {
		io := ioclass.IO{Size: sizes[rng.IntN(len(sizes))], Write: rng.IntN(2) == 0, Direct: rng.IntN(4) == 0,
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

func main() {
	rounds := flag.Int("rounds", 7, "alternating rounds per case")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	testing.Init()
	cycle := []ioclass.IO{
		{Size: 4096, Write: true, Comm: "bstore_kv_sync", LBA: 1 << 30},
		{Size: 1 << 20, Comm: "tp_osd_tp", PID: 4242, Direct: true, LBA: 77},
		{Size: 65536, Write: true, Comm: "proc-31", LBA: 1 << 40},
	}
	mixes := []struct {
		name string
		ios  []ioclass.IO
	}{{"cycle3", cycle}, {"mixed", mixedIOs(4096, 42)}}
	policies := []struct {
		name string
		spec *v1alpha1.ClassificationPolicySpec
	}{{"policy33", ioclasstest.Policy33()}, {"ceph-osd", &ioclass.DefaultCephOSD().Spec}}

	fmt.Printf("date: %s, GOMAXPROCS=1, %s, %d rounds\n\n", time.Now().UTC().Format(time.RFC3339), runtime.Version(), *rounds)
	fmt.Println("| policy (classes) | IOs | reference min / median ns | compiled min / median ns | compiled M/s (median) | speed-up (medians) |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: |")
	for _, p := range policies {
		cfg, err := ioclass.Compile(p.spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		e, err := ioclass.NewEvaluator(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, m := range mixes {
			var ref, fast []float64
			for range *rounds {
				ref = append(ref, nsPerOp(e.ClassifyReference, m.ios))
				fast = append(fast, nsPerOp(e.Classify, m.ios))
			}
			slices.Sort(ref)
			slices.Sort(fast)
			mr, mf := ref[len(ref)/2], fast[len(fast)/2]
			fmt.Printf("| %s (%d) | %s | %.1f / %.1f | %.1f / %.1f | %.1f | %.1fx |\n",
				p.name, len(cfg.Classes), m.name, ref[0], mr, fast[0], mf, 1e3/mf, mr/mf)
		}
	}
}

var sink int

func nsPerOp(f func(ioclass.IO) int, ios []ioclass.IO) float64 {
	r := testing.Benchmark(func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += f(ios[i])
			if i++; i == len(ios) {
				i = 0
			}
		}
	})
	return float64(r.T.Nanoseconds()) / float64(r.N)
}
