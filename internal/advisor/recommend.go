package advisor

import (
	"fmt"
	"strconv"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// maxReason is the API's limit on a recommendation's reason.
const maxReason = 1024

// recommend decides one class's target from its window statistics and the pin plan.
func recommend(c Class, st classStats, seen bool, pins pinPlan, p Params) v1alpha1.ClassRecommendation {
	rec := v1alpha1.ClassRecommendation{ClassID: c.ID, Name: c.Name}
	beta, defined := st.beta()
	if defined {
		rec.WriteInvalidation = decimal(beta)
	}
	target := func(action v1alpha1.RecommendationAction, pinned bool, priority int32, alloc int, reason string) v1alpha1.ClassRecommendation {
		rec.Action, rec.Pinned, rec.Allocation = action, pinned, allocationText(alloc)
		if !pinned {
			rec.EvictionPriority = &priority
		}
		rec.Reason = truncate(reason)
		return rec
	}
	keep := func(reason string) v1alpha1.ClassRecommendation {
		return target(v1alpha1.RecommendKeep, c.Pinned, c.Priority, c.Allocation, reason)
	}
	switch {
	case c.ID == 0:
		return keep(fmt.Sprintf("class 0 takes every IO no rule matched, so the advisor neither pins nor demotes it; "+
			"give IO worth pinning a class of its own (%s)", usage(st, seen)))
	case !seen:
		return keep("no cache reported this class in the window")
	case !defined && st.written == 0:
		return keep("the class held no cache space and wrote nothing in the window")
	case !defined:
		return keep(fmt.Sprintf("wrote %s but held no cache space (allocation %s; 0 sends the class to pass-through): β is undefined",
			bytes(st.written), allocationText(c.Allocation)))
	}
	if alloc, ok := pins.alloc[c.ID]; ok {
		action := v1alpha1.RecommendKeep
		switch {
		case !c.Pinned:
			action = v1alpha1.RecommendPin
		case c.Allocation != alloc:
			action = v1alpha1.RecommendSetAllocation
		}
		return target(action, true, 0, alloc, pinReason(c, st, beta, pins, p))
	}
	if st.written > 0 && beta < p.DemoteBelowBeta {
		alloc := min(c.Allocation, p.DemoteAllocation)
		why := fmt.Sprintf("β %s < %s: %s — written about once and not rewritten within the window; caching it only delays "+
			"the same write to the capacity device, so it is evicted first (priority %d) with allocation at most %s",
			decimal(beta), decimal(p.DemoteBelowBeta), usage(st, seen), p.DemotePriority, allocationText(alloc))
		if !c.Pinned && c.Priority >= p.DemotePriority && c.Allocation <= alloc {
			return keep(why + "; it already is")
		}
		return target(v1alpha1.RecommendDemote, false, p.DemotePriority, alloc, why)
	}
	notPinned := notPinnedReason(c, st, beta, pins, p)
	if c.Pinned {
		return target(v1alpha1.RecommendUnpin, false, p.UnpinPriority, c.Allocation,
			fmt.Sprintf("%s (%s); unpinned it gets eviction priority %d", notPinned, usage(st, seen), p.UnpinPriority))
	}
	return keep(fmt.Sprintf("%s (%s)", notPinned, usage(st, seen)))
}

func pinReason(c Class, st classStats, beta float64, pins pinPlan, p Params) string {
	alloc, need := pins.alloc[c.ID], pins.need[c.ID]
	saved := float64(st.written) - p.WritebacksPerWindow*float64(st.occupancy)
	why := fmt.Sprintf("β %s ≥ %s: %s; pinned whole, it keeps W − %s·O = %s of the window's writes off the capacity devices. "+
		"Its largest share of a cache was %s",
		decimal(beta), decimal(p.PinMinBeta), usage(st, true), decimal(p.WritebacksPerWindow), bytes(int64(saved)), decimal(st.share))
	if st.capped {
		why += " (at its allocation: its demand may be larger)"
	}
	switch {
	case pins.partial[c.ID]:
		why += fmt.Sprintf("; it needs %s (share × %s headroom) but only %s of the %s pin budget is left, so it is pinned with %s and part of its footprint stays unpinned",
			allocationText(need), decimal(p.Headroom), allocationText(pins.left[c.ID]), allocationText(p.PinBudget), allocationText(alloc))
	case c.Pinned && alloc == c.Allocation && alloc != need:
		why += fmt.Sprintf("; its allocation %s is within %s of the %s it needs, so it stays", allocationText(alloc), allocationText(p.Slack), allocationText(need))
	default:
		why += fmt.Sprintf(", so allocation %s (share × %s headroom)", allocationText(alloc), decimal(p.Headroom))
	}
	return why
}

func notPinnedReason(c Class, st classStats, beta float64, pins pinPlan, p Params) string {
	switch {
	case beta < p.PinMinBeta:
		return fmt.Sprintf("β %s < %s: rewritten too few times per window to be worth pinning; eviction priority decides", decimal(beta), decimal(p.PinMinBeta))
	case !c.Pinned && st.capped:
		return fmt.Sprintf("β %s looks worth pinning, but the class fills its allocation %s on some cache, so it holds less than its "+
			"footprint and β is overstated; raise its allocation to measure it", decimal(beta), allocationText(c.Allocation))
	}
	return fmt.Sprintf("β %s would pay to pin, but it needs %s and only %s of the %s pin budget was left after the classes with higher β",
		decimal(beta), allocationText(pins.need[c.ID]), allocationText(pins.left[c.ID]), allocationText(p.PinBudget))
}

// usage states a class's window in numbers.
func usage(st classStats, seen bool) string {
	if !seen {
		return "no statistics in the window"
	}
	s := fmt.Sprintf("%s written over a mean %s held", bytes(st.written), bytes(st.occupancy))
	if st.dirty > 0 {
		s += fmt.Sprintf(" (%s dirty at the end)", bytes(st.dirty))
	}
	if st.caches == 1 {
		return s + " on 1 cache"
	}
	return s + fmt.Sprintf(" on %d caches", st.caches)
}

// allocationText writes hundredths as the spec does: "0", "0.05", "0.5" is "0.50", "1".
// Always at most 4 characters and within the API's pattern.
func allocationText(n int) string {
	switch {
	case n <= 0:
		return "0"
	case n >= 100:
		return "1"
	}
	return fmt.Sprintf("0.%02d", n)
}

func decimal(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func percent(v float64) string { return strconv.FormatFloat(v*100, 'f', -1, 64) + "%" }

// bytes prints a size in binary units.
func bytes(n int64) string {
	const mib, gib = 1 << 20, 1 << 30
	switch {
	case n >= gib || n <= -gib:
		return strconv.FormatFloat(float64(n)/gib, 'f', 1, 64) + " GiB"
	case n >= mib || n <= -mib:
		return strconv.FormatFloat(float64(n)/mib, 'f', 1, 64) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

func truncate(s string) string { return v1alpha1.Truncate(s, maxReason) }
