package advisor

import (
	"github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
)

// Params are the model's thresholds. Allocations are in hundredths of a cache, as casadm
// stores them (max_size = round(allocation × 100)).
type Params struct {
	// PinMinBeta is the β a class needs to be pinned: every byte it holds rewritten at
	// least this many times per window, so pinning saves at least half its writes (k = 1).
	PinMinBeta float64
	// PinBudget caps the sum of the pinned classes' allocations: the rest of each cache
	// stays for the unpinned classes and class 0.
	PinBudget int
	// Headroom multiplies a class's largest share of a cache into its allocation: a
	// footprint measured over one window grows.
	Headroom float64
	// Slack is how far above its need a pinned class's written allocation may stay before
	// the advisor suggests shrinking it: small changes would reload every node's classes.
	Slack int
	// MinPartial is the smallest remaining budget worth pinning a class that does not fit whole.
	MinPartial int
	// DemoteBelowBeta: a class that wrote in the window with β below it is demoted.
	DemoteBelowBeta float64
	// DemoteAllocation caps a demoted class's allocation.
	DemoteAllocation int
	// DemotePriority is a demoted class's eviction priority (255: evicted first).
	DemotePriority int32
	// UnpinPriority is the eviction priority an unpinned class gets (Open CAS's default for class 0).
	UnpinPriority int32
	// WritebacksPerWindow is k: how many times the model assumes each byte a pinned class
	// holds is written back to the capacity device per window.
	WritebacksPerWindow float64
	// MinWrittenShare: the window's writes must reach this share of the caches' total size,
	// or the advisor waits for more data.
	MinWrittenShare float64
}

// Defaults are the documented thresholds (docs/cache.md, section Advisor).
func Defaults() Params {
	return Params{
		PinMinBeta:          2,
		PinBudget:           80,
		Headroom:            1.2,
		Slack:               10,
		MinPartial:          5,
		DemoteBelowBeta:     1,
		DemoteAllocation:    10,
		DemotePriority:      ioclass.MaxPriority,
		UnpinPriority:       ioclass.DefaultUnclassifiedPri,
		WritebacksPerWindow: 1,
		MinWrittenShare:     0.01,
	}
}

// Class is one class as the nodes run it (Current).
type Class struct {
	ID       int32
	Name     string
	Pinned   bool
	Priority int32 // when not pinned
	// Allocation is in hundredths, rounded as casadm rounds it.
	Allocation int
}

// ClassesOf reads the classes of a spec. A class whose allocation does not parse (the API
// server rejects those) counts as allocation 0.
func ClassesOf(spec *v1alpha1.ClassificationPolicySpec) []Class {
	out := make([]Class, 0, len(spec.Classes))
	for _, c := range spec.Classes {
		cl := Class{ID: c.ID, Name: c.Name, Pinned: c.Pinned}
		if c.EvictionPriority != nil {
			cl.Priority = *c.EvictionPriority
		}
		cl.Allocation = max(ioclass.Class{Allocation: c.Allocation}.MaxSizePercent(), 0)
		out = append(out, cl)
	}
	return out
}

// CacheWindow is one cache over one window.
type CacheWindow struct {
	// Key names the cache for messages: node/fast device.
	Key string
	// SizeBytes is the cache size.
	SizeBytes int64
	// ExportedWritten and CoreWritten are the cache-level deltas: writes to the exported
	// objects and writes that reached the capacity devices.
	ExportedWritten, CoreWritten int64
	Classes                      []ClassWindow
}

// ClassWindow is one class on one cache over one window.
type ClassWindow struct {
	ID int32
	// Written is the delta of the class's writes to the exported objects.
	Written int64
	// Occupancy is the mean of the class's occupancy at the window's two ends.
	Occupancy int64
	// Dirty is the class's dirty data at the window's end.
	Dirty int64
}

// Input is what Advise needs.
type Input struct {
	// Classes are the classes as the nodes run them: the spec, with the previous
	// recommendations applied when the policy applies them (Current).
	Classes []Class
	Caches  []CacheWindow
	Params  Params
}

// Result is what Advise found.
type Result struct {
	// Recommendations are one per class of the spec, highest β first.
	Recommendations []v1alpha1.ClassRecommendation
	// Refusal says why there are no recommendations (empty when there are).
	Refusal string
	// Written is Σ W over every class and cache in the window.
	Written int64
	// Measured is α_cache from the caches' own counters; MeasuredOK is false when no cache reported
	// writes to its exported objects.
	Measured   float64
	MeasuredOK bool
	// Modelled is α_model for the classes as the nodes run them, Expected with the recommendations.
	Modelled, Expected float64
}
