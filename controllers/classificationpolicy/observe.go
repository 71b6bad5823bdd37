package classificationpolicy

import (
	"context"
	"maps"

	"github.com/prism-storage/prism/internal/advisor"
)

// observe feeds the write-back caches of the policy's nodes to its tracker; a window closes
// once the open one is at least Window old.
func (r *Reconciler) observe(_ context.Context, s *scope) error {
	if !s.listed {
		return nil
	}
	samples := map[string]advisor.Sample{}
	for i := range s.nodes {
		if advisor.WritesBack(s.nodes[i].Spec.Plan.Cache.Mode) {
			maps.Copy(samples, advisor.Samples(&s.nodes[i]))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trackers == nil {
		r.trackers = map[string]*advisor.Tracker{}
	}
	t := r.trackers[s.policy.Name]
	if t == nil {
		t = &advisor.Tracker{}
		r.trackers[s.policy.Name] = t
	}
	t.Observe(s.now, samples, r.window())
	s.window = t.Last
	s.since, s.observing = t.Since()
	return nil
}

// advise runs the advisor on the last complete window against the spec as it is now, so
// an edit gets fresh recommendations without waiting for a window.
func (r *Reconciler) advise(_ context.Context, s *scope) error {
	if s.compileErr != nil || s.window == nil {
		return nil
	}
	res := advisor.Advise(advisor.Input{Classes: advisor.ClassesOf(&s.policy.Spec), Caches: s.window.Caches, Params: r.params()})
	s.advice = &res
	return nil
}

// forget drops a deleted policy's observations.
func (r *Reconciler) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.trackers, name)
}
