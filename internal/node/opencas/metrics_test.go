package opencas

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/casadm"
)

// stdout of a reference transcript ("$ command", stdout, "[rc=N]", ...).
func transcriptStats(t *testing.T, name string) []casadm.Stats {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.SplitN(string(raw), "\n", 2)[1]
	body = body[:strings.Index(body, "[rc=")]
	s, err := casadm.ParseStats(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAlphaBetaReference: α and β of the real OCF run behind the reference outputs
// (cache-level record, then the per-class records, as Stats returns them).
func TestAlphaBetaReference(t *testing.T) {
	stats := append(transcriptStats(t, "casadm_P_i_1_o_csv_b.txt"), transcriptStats(t, "casadm_P_i_1_d_o_csv.txt")...)
	// Writes to exported objects 17504; to the core 3264 (pass-through) + 8240 (cleaner).
	alpha, ok := Alpha(stats)
	if want := 1 - 11504.0/17504.0; !ok || math.Abs(alpha-want) > 1e-12 {
		t.Errorf("alpha %v, want %v", alpha, want)
	}
	want := map[int]struct {
		writes, occ uint64
		defined     bool
	}{0: {7264, 3984, true}, 1: {1024, 1024, true}, 2: {1024, 0, false}, 3: {4096, 208, true}, 4: {4096, 2048, true}}
	bs := Beta(stats)
	if len(bs) != 5 {
		t.Fatalf("%d classes", len(bs))
	}
	for _, b := range bs {
		w := want[b.ClassID]
		if b.CacheID != 1 || b.Writes != w.writes || b.Occupancy != w.occ || b.Defined != w.defined {
			t.Errorf("class %d: %+v", b.ClassID, b)
		}
		if w.defined && math.Abs(b.Beta-float64(w.writes)/float64(w.occ)) > 1e-12 {
			t.Errorf("class %d: beta %v", b.ClassID, b.Beta)
		}
	}
	if _, ok := Alpha(nil); ok {
		t.Error("alpha of nothing")
	}
}
