package cachesim

import (
	"cmp"
	"slices"
)

// Where the lines of a request come from, as OCF v26.03.x (ocf d54f2fc9)
// decides it: src/ocf_space.c and src/engine/engine_common.c, read there and
// written again here, not copied. Both cache models (this package's Cache and
// the casadm emulator's) call MapLines, so they take lines from the same
// classes in the same order; how each finds and moves a line is its own.

// EvictionCleanLines is how many dirty lines of each class OCF cleans when a
// request could not be mapped (OCF_EVICTION_CLEAN_SIZE): eviction takes only
// clean lines, so without them the request goes pass-through and the next
// ones find the lines cleaned for them.
const EvictionCleanLines = 32

// minEvictQuota is the smallest eviction quota a class holding lines gets on
// a refill (OCF's MIN_EVICT_QUOTA); the smallest class gets exactly this.
const minEvictQuota = 256

// Part is one IO class as eviction sees it.
type Part struct {
	ID int
	// Priority is 0 (evicted last) to 255; -1 is pinned. A removed class
	// still holding lines counts as 255.
	Priority int
	// Removed: no longer configured but still holding lines. It is evicted
	// before every configured class and is never over its cap.
	Removed bool
	// Cap is the most lines the class may hold (its allocation).
	Cap uint64
}

// Space is a cache model as MapLines uses it. Lines must change as soon as
// TakeFree or Evict maps a line.
type Space interface {
	// Lines is how many lines class id holds now.
	Lines(id int) uint64
	// Free is how many lines hold nothing.
	Free() uint64
	// TakeFree maps up to n of the request's missing lines to free lines
	// and says how many.
	TakeFree(n uint64) uint64
	// Evict evicts up to n clean lines of class id, least recently used
	// first, none of them a line of the request, maps the request's missing
	// lines to them and says how many. Dirty lines are never evicted.
	Evict(id int, n uint64) uint64
	// Quota is class id's eviction quota (OCF's evict counter); it lives as
	// long as the cache.
	Quota(id int) *int64
}

// EvictionOrder sorts parts as OCF walks them when it evicts: removed
// classes first, then by priority value, highest (evicted first) to lowest,
// pinned last; equal priorities by id, highest first.
func EvictionOrder(parts []Part) {
	key := func(p Part) int {
		if p.Removed {
			return 1 << 16
		}
		return p.Priority
	}
	slices.SortStableFunc(parts, func(a, b Part) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), cmp.Compare(b.ID, a.ID))
	})
}

// MapLines finds lines for the need missing lines of a request of class
// target (repart of whose mapped lines belong to other classes), given the
// classes in EvictionOrder. It reports whether every missing line got one;
// when not, the caller unmaps what was mapped, sends the request
// pass-through and cleans EvictionCleanLines dirty lines of every class.
//
//   - A class that would go over its cap with this request takes the lines
//     from itself, all of them or none.
//   - Otherwise free lines first, then lines of classes over their cap, in
//     order, then the quota round: among the classes evictable by target
//     (priority value at least target's, not pinned), in order, each takes
//     lines while its quota lasts; when no class has quota left, every such
//     class holding lines gets a new quota in proportion to its lines (the
//     smallest 256) and the round runs once more. So eviction is spread
//     over the classes by size, the lowest priorities first in each round.
//   - A pinned target never refills the quotas: OCF passes the requester's
//     priority to the refill (ocf_evict_counters_update) as an unsigned
//     16-bit number, so a pinned class's -1 is 65535, above every class,
//     and the refill stops before the first one. A pinned class takes lines
//     only while quota other classes' refills gave is left; then its
//     requests go pass-through.
func MapLines(s Space, order []Part, target Part, need, repart uint64) bool {
	if need == 0 {
		return true
	}
	if s.Lines(target.ID)+repart+need > target.Cap {
		if s.Lines(target.ID) < need {
			return false
		}
		return s.Evict(target.ID, need) >= need
	}
	got := s.TakeFree(min(need, s.Free()))
	if got >= need {
		return true
	}
	got += evictOverflown(s, order, need-got)
	if got >= need {
		return true
	}
	for range 2 {
		n, quotaLeft := evictByQuota(s, order, target.Priority, need-got)
		got += n
		if got >= need {
			return true
		}
		if !quotaLeft && target.Priority >= 0 {
			refillQuotas(s, order, target.Priority)
		}
	}
	return false
}

func evictOverflown(s Space, order []Part, need uint64) uint64 {
	got := uint64(0)
	for _, p := range order {
		lines := s.Lines(p.ID)
		if p.Removed || lines <= p.Cap {
			continue
		}
		got += s.Evict(p.ID, min(need-got, lines-p.Cap))
		if got >= need {
			break
		}
	}
	return got
}

// evictByQuota is one quota round; quotaLeft says some class still had
// quota (then the quotas are not refilled).
func evictByQuota(s Space, order []Part, prio int, need uint64) (got uint64, quotaLeft bool) {
	for _, p := range order {
		if p.Priority < prio || (p.Priority < 0 && !p.Removed) {
			break
		}
		lines := s.Lines(p.ID)
		if lines == 0 {
			continue
		}
		want := min(need-got, lines)
		q := s.Quota(p.ID)
		if *q > 0 {
			n := s.Evict(p.ID, want)
			got += n
			// The quota is spent by what was asked for, less what could
			// not be had.
			*q -= int64(n)
		}
		if *q > 0 {
			quotaLeft = true
		}
		if got >= need {
			break
		}
	}
	return got, quotaLeft
}

func refillQuotas(s Space, order []Part, prio int) {
	smallest := uint64(0)
	for _, p := range order {
		if p.Priority < prio {
			break
		}
		if n := s.Lines(p.ID); n > 0 && (smallest == 0 || n < smallest) {
			smallest = n
		}
	}
	smallest = max(smallest, minEvictQuota)
	for _, p := range order {
		if p.Priority < prio {
			break
		}
		if n := s.Lines(p.ID); n > 0 {
			*s.Quota(p.ID) += int64(n * minEvictQuota / smallest)
		}
	}
}
