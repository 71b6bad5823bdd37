package advisor

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
)

// classStats is one class summed over the window's caches.
type classStats struct {
	written, occupancy, dirty int64
	// share is the class's largest occupancy ÷ cache size over the caches.
	share  float64
	caches int
	// capped: on some cache the class held about its allocation, so its demand may be larger.
	capped bool
}

func (s classStats) beta() (float64, bool) {
	if s.occupancy <= 0 {
		return 0, false
	}
	return float64(s.written) / float64(s.occupancy), true
}

// Advise recommends, for every class of in.Classes, a target (pinned or an eviction
// priority, and an allocation) that keeps the most writes off the capacity devices under
// the model of the package documentation. Every recommendation says why, with the numbers.
func Advise(in Input) Result {
	p := in.Params
	stats, size, written := aggregate(in)
	res := Result{Written: written}
	res.Measured, res.MeasuredOK = measured(in.Caches)
	switch {
	case len(in.Caches) == 0:
		res.Refusal = "no cache completed the window"
	case size <= 0:
		res.Refusal = "the caches of the window report no size"
	case float64(written) < p.MinWrittenShare*float64(size):
		res.Refusal = fmt.Sprintf("%s written in the window, less than %s of the %s of cache: too little to advise",
			bytes(written), percent(p.MinWrittenShare), bytes(size))
	}
	if res.Refusal != "" {
		return res
	}
	order := rank(in.Classes, stats)
	pins := choosePins(order, stats, p)
	for _, c := range order {
		st, seen := stats[c.ID]
		res.Recommendations = append(res.Recommendations, recommend(c, st, seen, pins, p))
	}
	k := p.WritebacksPerWindow
	res.Modelled = modelAlpha(in.Caches, pinnedAsWritten(in.Classes), k, written)
	res.Expected = modelAlpha(in.Caches, pinnedIn(res.Recommendations), k, written)
	return res
}

// aggregate sums every class over the caches; size is the caches' total size and written
// the window's writes over every class, including ids the spec does not name.
func aggregate(in Input) (stats map[int32]classStats, size, written int64) {
	alloc := map[int32]int{}
	for _, c := range in.Classes {
		alloc[c.ID] = c.Allocation
	}
	stats = map[int32]classStats{}
	for _, cw := range in.Caches {
		size += cw.SizeBytes
		for _, cl := range cw.Classes {
			written += cl.Written
			st := stats[cl.ID]
			st.written += cl.Written
			st.occupancy += cl.Occupancy
			st.dirty += cl.Dirty
			st.caches++
			if cw.SizeBytes > 0 {
				share := float64(cl.Occupancy) / float64(cw.SizeBytes)
				st.share = max(st.share, share)
				if a, ok := alloc[cl.ID]; ok && a > 0 && share >= 0.95*float64(a)/100 {
					st.capped = true
				}
			}
			stats[cl.ID] = st
		}
	}
	return stats, size, written
}

// measured is α_cache over the window from the cache-level counters.
func measured(caches []CacheWindow) (float64, bool) {
	var exported, core int64
	for _, c := range caches {
		exported += c.ExportedWritten
		core += c.CoreWritten
	}
	if exported <= 0 {
		return 0, false
	}
	return 1 - float64(core)/float64(exported), true
}

// rank orders the classes by β, highest first; classes without β last; then by id.
func rank(classes []Class, stats map[int32]classStats) []Class {
	out := slices.Clone(classes)
	slices.SortStableFunc(out, func(a, b Class) int {
		ba, oka := stats[a.ID].beta()
		bb, okb := stats[b.ID].beta()
		switch {
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		case ba != bb:
			return cmp.Compare(bb, ba)
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// pinPlan is the greedy choice of pinned classes.
type pinPlan struct {
	alloc   map[int32]int  // pinned classes and their allocation
	need    map[int32]int  // what each candidate's footprint needs
	partial map[int32]bool // pinned with less than its need
	left    map[int32]int  // budget left when the class was considered
	used    int
}

// choosePins fills the pin budget greedily by β: the fractional knapsack with value β − k
// per byte, which the greedy order solves (whole classes, the last one possibly partial).
func choosePins(order []Class, stats map[int32]classStats, p Params) pinPlan {
	plan := pinPlan{alloc: map[int32]int{}, need: map[int32]int{}, partial: map[int32]bool{}, left: map[int32]int{}}
	left := p.PinBudget
	for _, c := range order {
		beta, ok := stats[c.ID].beta()
		if c.ID == 0 || !ok || beta < p.PinMinBeta || (!c.Pinned && stats[c.ID].capped) {
			continue
		}
		need := allocationFor(stats[c.ID].share * p.Headroom)
		plan.need[c.ID], plan.left[c.ID] = need, left
		target := need
		if c.Pinned && c.Allocation >= need && c.Allocation-need <= p.Slack && c.Allocation <= left {
			target = c.Allocation // close enough: no reload for a small change
		}
		switch {
		case target <= left:
			plan.alloc[c.ID] = target
		case left >= p.MinPartial && left > 0:
			target = left
			plan.alloc[c.ID], plan.partial[c.ID] = target, true
		default:
			continue
		}
		left -= target
		plan.used += target
	}
	return plan
}

// allocationFor is the smallest allocation in hundredths covering share of a cache, 1 to 100.
func allocationFor(share float64) int {
	n := int(math.Ceil(share*100 - 1e-9))
	return min(max(n, 1), 100)
}

// modelAlpha is Σ min(1, a·C ÷ O)·max(0, W − k·O) over the pinned classes of every cache, ÷ written.
func modelAlpha(caches []CacheWindow, pinned map[int32]int, k float64, written int64) float64 {
	if written <= 0 {
		return 0
	}
	var saved float64
	for _, cw := range caches {
		for _, cl := range cw.Classes {
			a, ok := pinned[cl.ID]
			if !ok || cl.Occupancy <= 0 {
				continue
			}
			cover := min(1, float64(a)/100*float64(cw.SizeBytes)/float64(cl.Occupancy))
			if gain := float64(cl.Written) - k*float64(cl.Occupancy); gain > 0 {
				saved += cover * gain
			}
		}
	}
	return saved / float64(written)
}

func pinnedAsWritten(classes []Class) map[int32]int {
	out := map[int32]int{}
	for _, c := range classes {
		if c.Pinned {
			out[c.ID] = c.Allocation
		}
	}
	return out
}

func pinnedIn(recs []v1alpha1.ClassRecommendation) map[int32]int {
	out := map[int32]int{}
	for _, r := range recs {
		if r.Pinned {
			out[r.ClassID] = max(ioclass.Class{Allocation: r.Allocation}.MaxSizePercent(), 0)
		}
	}
	return out
}
