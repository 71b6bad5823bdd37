package opencas

import (
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/casadm"
)

// BenchmarkStatsPoll is the agent's own CPU for one statistics poll of a node with one cache
// of 12 cores: parsing the cache, IO class and per-core CSVs casadm printed (recorded
// outputs) and building the metrics. casadm's own run time is not included (it is the
// kernel's and casadm's, and the same for any exporter).
func BenchmarkStatsPoll(b *testing.B) {
	cacheCSV, classCSV, coreCSV := readTranscript(b, "casadm_P_i_1_o_csv.txt"), readTranscript(b, "casadm_P_i_1_d_o_csv.txt"), readTranscript(b, "casadm_P_i_1_j_1_o_csv_b.txt")
	list := casadm.List{Caches: []casadm.Cache{{ID: 1, Disk: "/dev/disk/by-id/nvme-A-part3", Status: casadm.Status{State: casadm.StateRunning}, Mode: "wb"}}}
	for k := 1; k <= 12; k++ {
		list.Caches[0].Cores = append(list.Caches[0].Cores, casadm.Core{ID: k, Status: casadm.Status{State: casadm.StateActive}})
	}
	b.ReportAllocs()
	for b.Loop() {
		snap := Snapshot{List: list, Cores: map[int][]casadm.Stats{}}
		for _, text := range []string{cacheCSV, classCSV} {
			s, err := casadm.ParseStats(strings.NewReader(text))
			if err != nil {
				b.Fatal(err)
			}
			snap.Stats = append(snap.Stats, s...)
		}
		for k := 0; k < 12; k++ {
			s, err := casadm.ParseStats(strings.NewReader(coreCSV))
			if err != nil {
				b.Fatal(err)
			}
			snap.Cores[1] = append(snap.Cores[1], s...)
		}
		if len(Metrics("n1", snap)) == 0 {
			b.Fatal("no metrics")
		}
	}
}
