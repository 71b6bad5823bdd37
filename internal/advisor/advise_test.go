package advisor

import (
	"strconv"
	"strings"
	"testing"

	"github.com/prism-storage/prism/api/v1alpha1"
)

const gib = int64(1) << 30

// scenario is one 100 GiB cache over one window. By hand (GiB):
//
//	class               W    O   β     share  need (share × 1.2)
//	0  unclassified     10   20  0.5   0.20   -
//	1  large-writes     50   0   -     0      - (allocation 0: pass-through)
//	10 deferred         40   4   10    0.04   ceil(4.8)  = 0.05
//	11 small-writes     60   20  3     0.20   ceil(24)   = 0.24
//	12 logs             6    4   1.5   0.04   -
//	13 bulk             15   30  0.5   0.30   -
//
// Σ W = 181 GiB. Pinning 10 and 11 saves (40 − 4) + (60 − 20) = 76 GiB: α_model = 76/181 = 0.42.
func scenario() Input {
	classes := []Class{
		{ID: 0, Name: "unclassified", Priority: 22, Allocation: 100},
		{ID: 1, Name: "large-writes", Priority: 255, Allocation: 0},
		{ID: 10, Name: "deferred", Priority: 1, Allocation: 100},
		{ID: 11, Name: "small-writes", Priority: 5, Allocation: 100},
		{ID: 12, Name: "logs", Priority: 10, Allocation: 100},
		{ID: 13, Name: "bulk", Priority: 10, Allocation: 100},
	}
	cache := CacheWindow{Key: "n1/dev", SizeBytes: 100 * gib, ExportedWritten: 181 * gib, CoreWritten: 150 * gib,
		Classes: []ClassWindow{
			{ID: 0, Written: 10 * gib, Occupancy: 20 * gib},
			{ID: 1, Written: 50 * gib},
			{ID: 10, Written: 40 * gib, Occupancy: 4 * gib, Dirty: 3 * gib},
			{ID: 11, Written: 60 * gib, Occupancy: 20 * gib},
			{ID: 12, Written: 6 * gib, Occupancy: 4 * gib},
			{ID: 13, Written: 15 * gib, Occupancy: 30 * gib},
		}}
	return Input{Classes: classes, Caches: []CacheWindow{cache}, Params: Defaults()}
}

// target is a recommendation's action and target, written compactly.
func target(r v1alpha1.ClassRecommendation) string {
	s := string(r.Action) + " "
	if r.Pinned {
		s += "pinned"
	} else if r.EvictionPriority != nil {
		s += "prio " + strconv.Itoa(int(*r.EvictionPriority))
	}
	return s + " alloc " + r.Allocation
}

func TestAdviseScenario(t *testing.T) {
	cases := []struct {
		name     string
		edit     func(in *Input)
		want     map[int32]string // class id → target
		order    []int32
		modelled string
		expected string
	}{
		{
			name: "nothing pinned: pin the two rewriting classes, demote the write-once one",
			want: map[int32]string{
				0: "Keep prio 22 alloc 1", 1: "Keep prio 255 alloc 0", 10: "Pin pinned alloc 0.05",
				11: "Pin pinned alloc 0.24", 12: "Keep prio 10 alloc 1", 13: "Demote prio 255 alloc 0.10",
			},
			order:    []int32{10, 11, 12, 0, 13, 1},
			modelled: "0.00", expected: "0.42",
		},
		{
			name: "a small budget pins the last class partially: 0.05 + 0.15 of 0.20",
			edit: func(in *Input) { in.Params.PinBudget = 20 },
			want: map[int32]string{10: "Pin pinned alloc 0.05", 11: "Pin pinned alloc 0.15"},
			// class 11 covers 15 of its 20 GiB: 36 + 0.75 × 40 = 66 GiB of 181.
			modelled: "0.00", expected: "0.36",
		},
		{
			name:     "too little budget left for a partial pin: keep, and say why",
			edit:     func(in *Input) { in.Params.PinBudget = 6 },
			want:     map[int32]string{10: "Pin pinned alloc 0.05", 11: "Keep prio 5 alloc 1"},
			modelled: "0.00", expected: "0.20", // 36/181
		},
		{
			name: "already pinned within the slack: keep its allocation",
			edit: func(in *Input) { in.Classes[3].Pinned, in.Classes[3].Allocation = true, 30 },
			want: map[int32]string{11: "Keep pinned alloc 0.30"},
			// as written class 11 pinned at 0.30 covers its 20 GiB: 40/181.
			modelled: "0.22", expected: "0.42",
		},
		{
			name:     "pinned far above its need: shrink to what it needs",
			edit:     func(in *Input) { in.Classes[3].Pinned, in.Classes[3].Allocation = true, 50 },
			want:     map[int32]string{11: "SetAllocation pinned alloc 0.24"},
			modelled: "0.22", expected: "0.42",
		},
		{
			name: "pinned class that rewrites too little is unpinned, a write-once pinned class demoted",
			edit: func(in *Input) {
				in.Classes[4].Pinned, in.Classes[4].Allocation = true, 100
				in.Classes[5].Pinned, in.Classes[5].Allocation = true, 40
			},
			want: map[int32]string{12: "Unpin prio 22 alloc 1", 13: "Demote prio 255 alloc 0.10"},
			// as written: logs saves 6 − 4 = 2 GiB (bulk saves nothing): 2/181.
			modelled: "0.01", expected: "0.42",
		},
		{
			name:     "a class already demoted stays",
			edit:     func(in *Input) { in.Classes[5].Priority, in.Classes[5].Allocation = 255, 5 },
			want:     map[int32]string{13: "Keep prio 255 alloc 0.05"},
			modelled: "0.00", expected: "0.42",
		},
		{
			name: "two write-backs per window halve what pinning saves",
			edit: func(in *Input) { in.Params.WritebacksPerWindow = 2 },
			// (40 − 8) + (60 − 40) = 52 GiB of 181.
			want:     map[int32]string{10: "Pin pinned alloc 0.05", 11: "Pin pinned alloc 0.24"},
			modelled: "0.00", expected: "0.29",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := scenario()
			if tc.edit != nil {
				tc.edit(&in)
			}
			res := Advise(in)
			if res.Refusal != "" {
				t.Fatalf("refused: %s", res.Refusal)
			}
			got := map[int32]v1alpha1.ClassRecommendation{}
			var order []int32
			for _, r := range res.Recommendations {
				got[r.ClassID] = r
				order = append(order, r.ClassID)
				if r.Reason == "" {
					t.Errorf("class %d has no reason", r.ClassID)
				}
			}
			for id, want := range tc.want {
				if g := target(got[id]); g != want {
					t.Errorf("class %d: %s, want %s (reason: %s)", id, g, want, got[id].Reason)
				}
			}
			if tc.order != nil && !equal(order, tc.order) {
				t.Errorf("order %v, want %v", order, tc.order)
			}
			if m, e := decimal(res.Modelled), decimal(res.Expected); m != tc.modelled || e != tc.expected {
				t.Errorf("modelled/expected α = %s/%s, want %s/%s", m, e, tc.modelled, tc.expected)
			}
			if res.Written != 181*gib || !res.MeasuredOK || decimal(res.Measured) != "0.17" { // 1 − 150/181
				t.Errorf("written %d, measured %v %s", res.Written, res.MeasuredOK, decimal(res.Measured))
			}
		})
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReasonsCarryTheNumbers(t *testing.T) {
	res := Advise(scenario())
	reasons := map[int32]string{}
	for _, r := range res.Recommendations {
		reasons[r.ClassID] = r.Reason
	}
	for id, want := range map[int32][]string{
		10: {"β 10.00 ≥ 2.00", "40.0 GiB written over a mean 4.0 GiB held", "3.0 GiB dirty", "on 1 cache;", "keeps W − 1.00·O = 36.0 GiB of the window's writes off", "largest share of a cache was 0.04", "allocation 0.05"},
		11: {"β 3.00", "60.0 GiB written over a mean 20.0 GiB held", "allocation 0.24 (share × 1.20 headroom)"},
		12: {"β 1.50 < 2.00", "rewritten too few times"},
		13: {"β 0.50 < 1.00", "only delays", "priority 255", "at most 0.10"},
		0:  {"class 0 takes every IO no rule matched", "10.0 GiB written"},
		1:  {"wrote 50.0 GiB but held no cache space", "allocation 0"},
	} {
		for _, w := range want {
			if !strings.Contains(reasons[id], w) {
				t.Errorf("class %d reason %q lacks %q", id, reasons[id], w)
			}
		}
	}
	in := scenario()
	in.Params.PinBudget = 6
	for _, r := range Advise(in).Recommendations {
		if r.ClassID == 11 && !strings.Contains(r.Reason, "β 3.00 would pay to pin, but it needs 0.24 and only 0.01 of the 0.06 pin budget") {
			t.Errorf("class 11 reason %q does not say the budget ran out", r.Reason)
		}
	}
}

func TestAdviseAcrossCaches(t *testing.T) {
	// The same class on two caches: β is Σ W ÷ Σ O, the allocation covers the larger share
	// of either cache. On cache b it fills its allocation 0.10: capped, β is overstated.
	advise := func(hot Class) (v1alpha1.ClassRecommendation, Result) {
		in := Input{Params: Defaults(), Classes: []Class{{ID: 0, Name: "unclassified", Priority: 22, Allocation: 100}, hot}}
		in.Caches = []CacheWindow{
			{Key: "a/x", SizeBytes: 100 * gib, Classes: []ClassWindow{{ID: 5, Written: 30 * gib, Occupancy: 5 * gib}}},
			{Key: "b/y", SizeBytes: 100 * gib, Classes: []ClassWindow{{ID: 5, Written: 30 * gib, Occupancy: 10 * gib}}},
		}
		res := Advise(in)
		for _, r := range res.Recommendations {
			if r.ClassID == 5 {
				return r, res
			}
		}
		t.Fatal("no recommendation for class 5")
		return v1alpha1.ClassRecommendation{}, res
	}
	// Pinned at its cap: grow it. β = 60/15 = 4; need = ceil(0.10 × 1.2 × 100) = 12.
	hot, res := advise(Class{ID: 5, Name: "hot", Pinned: true, Allocation: 10})
	if target(hot) != "SetAllocation pinned alloc 0.12" || hot.WriteInvalidation != "4.00" || !strings.Contains(hot.Reason, "at its allocation") {
		t.Errorf("pinned hot: %s β %s (%s)", target(hot), hot.WriteInvalidation, hot.Reason)
	}
	// As run: pinned at 0.10 covers both footprints, saving (30 − 5) + (30 − 10) = 45 of 60;
	// at 0.12 the same.
	if decimal(res.Modelled) != "0.75" || decimal(res.Expected) != "0.75" || res.MeasuredOK {
		t.Errorf("modelled/expected α %s/%s, measured ok %v (no cache-level counters given)", decimal(res.Modelled), decimal(res.Expected), res.MeasuredOK)
	}
	// Not pinned and at its cap: its β may only reflect the cap, so it is not newly pinned.
	hot, _ = advise(Class{ID: 5, Name: "hot", Priority: 1, Allocation: 10})
	if target(hot) != "Keep prio 1 alloc 0.10" || !strings.Contains(hot.Reason, "fills its allocation 0.10 on some cache") {
		t.Errorf("unpinned hot: %s (%s)", target(hot), hot.Reason)
	}
	// With room to spare it is pinned.
	hot, _ = advise(Class{ID: 5, Name: "hot", Priority: 1, Allocation: 50})
	if target(hot) != "Pin pinned alloc 0.12" {
		t.Errorf("hot with room: %s (%s)", target(hot), hot.Reason)
	}
}

func TestAdviseRefuses(t *testing.T) {
	few := scenario()
	for i := range few.Caches[0].Classes {
		few.Caches[0].Classes[i].Written = 100 << 20 // 600 MiB in all, < 1 % of 100 GiB
	}
	noSize := scenario()
	noSize.Caches[0].SizeBytes = 0
	for name, tc := range map[string]struct {
		in   Input
		want string
	}{
		"no cache":      {Input{Params: Defaults(), Classes: scenario().Classes}, "no cache completed the window"},
		"too few bytes": {few, "600.0 MiB written in the window, less than 1% of the 100.0 GiB of cache"},
		"no size":       {noSize, "report no size"},
	} {
		res := Advise(tc.in)
		if !strings.Contains(res.Refusal, tc.want) || len(res.Recommendations) != 0 {
			t.Errorf("%s: refusal %q, %d recommendations", name, res.Refusal, len(res.Recommendations))
		}
	}
}

func TestAllocationText(t *testing.T) {
	for n, want := range map[int]string{-3: "0", 0: "0", 1: "0.01", 5: "0.05", 50: "0.50", 99: "0.99", 100: "1", 140: "1"} {
		if got := allocationText(n); got != want {
			t.Errorf("allocationText(%d) = %q, want %q", n, got, want)
		}
	}
	for share, want := range map[float64]int{0: 1, 0.001: 1, 0.048: 5, 0.24: 24, 0.2401: 25, 3: 100} {
		if got := allocationFor(share); got != want {
			t.Errorf("allocationFor(%v) = %d, want %d", share, got, want)
		}
	}
	// 0.2 × 1.2 is 0.24000000000000002 in float64: float noise must not round up to 0.25.
	share, headroom := 0.2, 1.2
	if got := allocationFor(share * headroom); got != 24 {
		t.Errorf("allocationFor(0.2 × 1.2) = %d, want 24", got)
	}
}

func TestClassesOf(t *testing.T) {
	p := int32(7)
	got := ClassesOf(&v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
		{ID: 0, Name: "unclassified", EvictionPriority: &p, Allocation: ".5"},
		{ID: 3, Name: "hot", Pinned: true, Allocation: "1.00"},
		{ID: 4, Name: "bad", Pinned: true, Allocation: "x"},
	}})
	want := []Class{{ID: 0, Name: "unclassified", Priority: 7, Allocation: 50}, {ID: 3, Name: "hot", Pinned: true, Allocation: 100},
		{ID: 4, Name: "bad", Pinned: true, Allocation: 0}}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("class %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
