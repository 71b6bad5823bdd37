package defaults

import (
	"os"
	"strings"
	"testing"

	"github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/ioclass"
)

const traceFile = "testdata/ceph-osd-trace.json"

func loadTrace(t *testing.T) *blktrace.Summary {
	t.Helper()
	s, err := blktrace.LoadSummary(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func classNames(p *v1alpha1.ClassificationPolicy) map[int]string {
	names := map[int]string{}
	for _, c := range p.Spec.Classes {
		names[int(c.ID)] = c.Name
	}
	return names
}

func compile(t *testing.T, spec *v1alpha1.ClassificationPolicySpec) ioclass.Config {
	t.Helper()
	cfg, err := ioclass.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCommittedTraceHoldsTheFacts: the committed trace of a real OSD shows what the
// default policy assumes (see CheckCephOSDFacts).
func TestCommittedTraceHoldsTheFacts(t *testing.T) {
	s := loadTrace(t)
	for _, err := range CheckCephOSDFacts(s) {
		t.Error(err)
	}
	if !strings.HasPrefix(s.Host.Ceph, "ceph version 16.2.15") || s.Host.Kernel == "" || s.Host.Config["bluestore_min_alloc_size"] != "65536" {
		t.Errorf("host %+v: want the Ceph 16.2.15 OSD with a 64 KiB min_alloc_size the docs describe", s.Host)
	}
}

// TestReplayDefaultPolicy replays the committed trace through the shipped policy with
// the kernel-exact evaluator: each workload's bytes go where the policy means them to.
func TestReplayDefaultPolicy(t *testing.T) {
	s := loadTrace(t)
	p := ioclass.DefaultCephOSD()
	shares, errs := CheckIntent(s, compile(t, &p.Spec), CephOSDIntent)
	for _, err := range errs {
		t.Error(err)
	}
	names := classNames(p)
	t.Log("\n" + ReplayMarkdown(shares, names))
	// Every class but unclassified takes some of the trace's bytes: none is dead weight.
	used := map[int]bool{}
	for _, sh := range shares {
		used[sh.Class] = true
	}
	for _, c := range p.Spec.Classes {
		if !used[int(c.ID)] {
			t.Errorf("class %d %s receives no byte of the trace", c.ID, c.Name)
		}
	}
}

// TestReplayRejectsTheProvisionalPolicy: the policy shipped before the trace passed
// writes of 1 MiB and more through, but BlueStore never sends the device a bio that
// large, so it would have cached every byte of the 4 MiB writes and had no spill class.
func TestReplayRejectsTheProvisionalPolicy(t *testing.T) {
	write := v1alpha1.IOCondition{Type: v1alpha1.ConditionIODirection, Value: "write"}
	read := v1alpha1.IOCondition{Type: v1alpha1.ConditionIODirection, Value: "read"}
	ge1M := v1alpha1.IOCondition{Type: v1alpha1.ConditionRequestSize, Comparison: v1alpha1.CompareGe, Value: "1048576"}
	le64K := v1alpha1.IOCondition{Type: v1alpha1.ConditionRequestSize, Comparison: v1alpha1.CompareLe, Value: "65536"}
	term := func(c ...v1alpha1.IOCondition) v1alpha1.MatchTerm { return v1alpha1.MatchTerm{AnyOf: c} }
	prio := func(p int32) *int32 { return &p }
	provisional := &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
		{ID: 0, Name: "unclassified", EvictionPriority: prio(22), Allocation: "1"},
		{ID: 1, Name: "large-writes", AllOf: []v1alpha1.MatchTerm{term(write), term(ge1M)}, Done: true, EvictionPriority: prio(255), Allocation: "0"},
		{ID: 2, Name: "large-reads", AllOf: []v1alpha1.MatchTerm{term(read), term(ge1M)}, Done: true, EvictionPriority: prio(255), Allocation: "0"},
		{ID: 11, Name: "small-writes", AllOf: []v1alpha1.MatchTerm{term(write), term(le64K)}, Done: true, EvictionPriority: prio(5), Allocation: "1"},
	}}
	_, errs := CheckIntent(loadTrace(t), compile(t, provisional), CephOSDIntent)
	failed := map[string]bool{}
	for _, err := range errs {
		failed[strings.SplitN(err.Error(), ":", 2)[0]] = true
	}
	for _, w := range []string{Rados4MWrite, Rados4MRead, Compaction} {
		if !failed[w] {
			t.Errorf("the provisional policy meets the intent for %s; errors: %v", w, errs)
		}
	}
	if failed[RBD4KRandWrite] || failed[Rados4KWrite] {
		t.Errorf("the provisional policy did cache small writes; errors: %v", errs)
	}
}

// TestCheckCephOSDFactsFails: each fact can fail.
func TestCheckCephOSDFactsFails(t *testing.T) {
	for name, breakIt := range map[string]func(s *blktrace.Summary){
		"no spill": func(s *blktrace.Summary) {
			w, _ := s.Workload(Compaction)
			w.BlueFS.SlowUsedAfter = 0
		},
		"spill before the compaction": func(s *blktrace.Summary) {
			w, _ := s.Workload(Rados4KWrite)
			w.BlueFS.SlowUsedAfter = 4096
		},
		"large writes as 4 KiB bios": func(s *blktrace.Summary) {
			w, _ := s.Workload(Rados4MWrite)
			for i := range w.Data.Groups {
				w.Data.Groups[i].Count *= w.Data.Groups[i].Size / 4096
				w.Data.Groups[i].Size = 4096
			}
		},
		"small writes from a kworker": func(s *blktrace.Summary) {
			w, _ := s.Workload(RBD4KRandWrite)
			for i := range w.Data.Groups {
				w.Data.Groups[i].Comm = "kworker/u8:1"
			}
		},
		"writes from another process": func(s *blktrace.Summary) {
			w, _ := s.Workload(Rados4KWrite)
			w.Data.Others = append(w.Data.Others, blktrace.Row{Key: "dd", Dir: blktrace.Write, Count: 1, Bytes: 1 << 30})
		},
		"trace disagrees with BlueFS": func(s *blktrace.Summary) {
			w, _ := s.Workload(Compaction)
			w.BlueFS.WrittenSlowAfter *= 2
		},
		"trace sees more than BlueFS wrote and its page rewrites": func(s *blktrace.Summary) {
			w, _ := s.Workload(Compaction)
			w.BlueFS.WrittenSlowAfter = w.BlueFS.WrittenSlowBefore + (w.BlueFS.WrittenSlowAfter-w.BlueFS.WrittenSlowBefore)*100/106
		},
		"a workload missing": func(s *blktrace.Summary) { s.Workloads = s.Workloads[1:] },
	} {
		s := loadTrace(t)
		breakIt(s)
		if errs := CheckCephOSDFacts(s); len(errs) == 0 {
			t.Errorf("%s: no fact failed", name)
		}
	}
}

// TestDocsShowTheCommittedTrace: docs/ioclass-default-policy.md carries the tables of
// the committed trace and its replay, as Markdown and ReplayMarkdown render them.
func TestDocsShowTheCommittedTrace(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/ioclass-default-policy.md")
	if err != nil {
		t.Fatal(err)
	}
	s := loadTrace(t)
	p := ioclass.DefaultCephOSD()
	shares, err := Replay(s, compile(t, &p.Spec))
	if err != nil {
		t.Fatal(err)
	}
	names := classNames(p)
	for what, text := range map[string]string{"trace tables (blktrace.Markdown)": blktrace.Markdown(s), "replay table (ReplayMarkdown)": ReplayMarkdown(shares, names)} {
		if !strings.Contains(string(doc), text) {
			t.Errorf("docs/ioclass-default-policy.md lacks the %s of %s; paste this:\n%s", what, traceFile, text)
		}
	}
}

// TestCheckCephOSDFactsAllowsPageRewrites: a compaction whose trace shows 3 % more bytes
// than BlueFS counted, as pages written again do, still meets the facts.
func TestCheckCephOSDFactsAllowsPageRewrites(t *testing.T) {
	s := loadTrace(t)
	w, _ := s.Workload(Compaction)
	w.BlueFS.WrittenSlowAfter = w.BlueFS.WrittenSlowBefore + (w.BlueFS.WrittenSlowAfter-w.BlueFS.WrittenSlowBefore)*100/103
	if errs := CheckCephOSDFacts(s); len(errs) != 0 {
		t.Errorf("facts failed on a trace with 3 %% page rewrites: %v", errs)
	}
}
