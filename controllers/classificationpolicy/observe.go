package classificationpolicy

import (
	"context"
	"errors"
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/advisor"
)

// observe feeds the write-back caches of the policy's nodes to its tracker; a window closes
// once the open one is at least Window old.
func (r *Reconciler) observe(ctx context.Context, s *scope) error {
	if !s.listed {
		return nil
	}
	samples := map[string]advisor.Sample{}
	for i := range s.nodes {
		if advisor.WritesBack(s.nodes[i].Spec.Plan.Cache.Mode) {
			maps.Copy(samples, advisor.Samples(&s.nodes[i]))
		}
	}
	m, err := r.memoryOf(ctx, s.policy.Name)
	if err != nil {
		return err
	}
	m.tracker.Observe(s.now, samples, r.window())
	s.window = m.tracker.Last
	s.since, s.observing = m.tracker.Since()
	return r.keep(ctx, s.policy, m)
}

// keep writes the tracker's state when its window moved (a first sample, or a window closed):
// once per window, not on every reconcile.
func (r *Reconciler) keep(ctx context.Context, policy *prismv1.ClassificationPolicy, m *memory) error {
	start, _ := m.tracker.Since()
	if r.Namespace == "" || start.Equal(m.kept) {
		return nil
	}
	err := r.saveState(ctx, policy, m.tracker.State())
	if errors.Is(err, errStateTooLarge) {
		// Not retried: the window stays in memory, as before this was kept.
		log.FromContext(ctx).Info("advisor window kept in memory only", "reason", err.Error())
		err = nil
	}
	if err == nil {
		m.kept = start
	}
	return err
}

// advise runs the advisor on the last complete window, from the classes as the nodes run
// them, when the window or the spec changed since it last did; otherwise it reuses that
// advice, so recommendations do not drift between windows.
func (r *Reconciler) advise(ctx context.Context, s *scope) error {
	if s.compileErr != nil || s.window == nil {
		return nil
	}
	m, err := r.memoryOf(ctx, s.policy.Name)
	if err != nil {
		return err
	}
	if m.advice == nil || m.window != s.window || m.generation != s.policy.Generation {
		res := advisor.Advise(advisor.Input{Classes: advisor.Current(s.policy), Caches: s.window.Caches, Params: r.params()})
		m.advice, m.window, m.generation = &res, s.window, s.policy.Generation
	}
	s.advice = m.advice
	return nil
}

func (r *Reconciler) memoryOf(ctx context.Context, policy string) (*memory, error) {
	r.mu.Lock()
	m := r.memory[policy]
	r.mu.Unlock()
	if m != nil {
		return m, nil
	}
	m = &memory{}
	if r.Namespace != "" {
		s, found, err := r.loadState(ctx, policy)
		if err != nil {
			return nil, err
		}
		if found {
			m.tracker.Restore(s)
			m.kept = s.Start
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.memory == nil {
		r.memory = map[string]*memory{}
	}
	if existing := r.memory[policy]; existing != nil {
		return existing, nil
	}
	r.memory[policy] = m
	return m, nil
}

// forget drops a deleted policy's observations.
func (r *Reconciler) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.memory, name)
}
