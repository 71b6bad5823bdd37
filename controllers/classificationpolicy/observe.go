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
	m := r.memoryOf(s.policy.Name)
	m.tracker.Observe(s.now, samples, r.window())
	s.window = m.tracker.Last
	s.since, s.observing = m.tracker.Since()
	return nil
}

// advise runs the advisor on the last complete window, from the classes as the nodes run
// them, when the window or the spec changed since it last did; otherwise it reuses that
// advice, so recommendations do not drift between windows.
func (r *Reconciler) advise(_ context.Context, s *scope) error {
	if s.compileErr != nil || s.window == nil {
		return nil
	}
	m := r.memoryOf(s.policy.Name)
	if m.advice == nil || m.window != s.window || m.generation != s.policy.Generation {
		res := advisor.Advise(advisor.Input{Classes: advisor.Current(s.policy), Caches: s.window.Caches, Params: r.params()})
		m.advice, m.window, m.generation = &res, s.window, s.policy.Generation
	}
	s.advice = m.advice
	return nil
}

func (r *Reconciler) memoryOf(policy string) *memory {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.memory == nil {
		r.memory = map[string]*memory{}
	}
	m := r.memory[policy]
	if m == nil {
		m = &memory{}
		r.memory[policy] = m
	}
	return m
}

// forget drops a deleted policy's observations.
func (r *Reconciler) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.memory, name)
}
