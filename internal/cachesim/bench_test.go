package cachesim

import (
	"testing"

	"github.com/prism-storage/prism/internal/ioclass"
)

// BenchmarkReplayZipf replays a zipf-0.99 4 KiB overwrite trace over 64 GiB
// through the default policy and a 5 % write-back cache (one size, no
// optimum): the simulator's speed per IO, generation and classification
// included.
func BenchmarkReplayZipf(b *testing.B) {
	cfg, err := ioclass.Compile(&ioclass.DefaultCephOSD().Spec)
	if err != nil {
		b.Fatal(err)
	}
	ev, err := ioclass.NewEvaluator(cfg)
	if err != nil {
		b.Fatal(err)
	}
	z := &Zipf{VolumeBytes: 64 << 30, BlockBytes: 4096, Theta: 0.99, Count: uint64(b.N), Comm: "tp_osd_tp", Seed: 1}
	if err := z.Start(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if _, _, err := Run(z, ev, cfg, Options{CapacityBytes: 64 << 30, Percents: []float64{5}, Workers: 1}); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "MIO/s")
}
