package classificationpolicy

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/advisor"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/test/support/ioclasstest"
)

const gib = int64(1) << 30

var t0 = time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)

// policy is Prism's default Ceph policy at generation 2.
func policy() *prismv1.ClassificationPolicy {
	p := ioclasstest.FiveClasses()
	p.Generation = 2
	return p
}

func writtenCSV(t *testing.T, p *prismv1.ClassificationPolicy) ioclass.Config {
	t.Helper()
	cfg, err := ioclass.Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// node is a StorageNode whose plan names the policy with the given mode and IO class file;
// each cache runs with the classes of cfg (nil: reports no cache).
func node(name string, mode prismv1.CacheMode, csv string, cfg *ioclass.Config, state prismv1.CacheState) prismv1.StorageNode {
	sn := prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	sn.Spec.Plan = &prismv1.NodePlan{
		FastDevices: []prismv1.FastDevicePlan{{StablePath: "/dev/disk/by-id/nvme-A", Cache: &prismv1.PlannedPartition{SizeBytes: 100 * gib}}},
		Cache:       &prismv1.NodeCachePlan{Mode: mode, LineSizeKiB: 4, ClassificationPolicyName: "ceph-osd", IOClassCSV: csv},
	}
	if cfg != nil {
		c := prismv1.CacheStatus{FastDevice: "/dev/disk/by-id/nvme-A", CacheID: 1, State: state}
		for _, cl := range cfg.Classes {
			c.IOClasses = append(c.IOClasses, prismv1.IOClassUsage{ID: int32(cl.ID), Name: cl.Rule})
		}
		sn.Status.Caches = []prismv1.CacheStatus{c}
	}
	return sn
}

func cond(st prismv1.ClassificationPolicyStatus, typ string) metav1.Condition {
	c := meta.FindStatusCondition(st.Conditions, typ)
	if c == nil {
		return metav1.Condition{Type: typ, Reason: "<absent>"}
	}
	return *c
}

func wantCond(t *testing.T, st prismv1.ClassificationPolicyStatus, typ string, status metav1.ConditionStatus, reason string, msg ...string) {
	t.Helper()
	c := cond(st, typ)
	if c.Status != status || c.Reason != reason || c.ObservedGeneration != 2 {
		t.Errorf("%s = %s/%s (gen %d), want %s/%s: %s", typ, c.Status, c.Reason, c.ObservedGeneration, status, reason, c.Message)
	}
	for _, m := range msg {
		if !strings.Contains(c.Message, m) {
			t.Errorf("%s message %q lacks %q", typ, c.Message, m)
		}
	}
}

func TestCompiledStatus(t *testing.T) {
	p := policy()
	cfg := writtenCSV(t, p)
	st := computeStatus(&scope{policy: p, compiled: cfg, listed: true}, DefaultWindow, nil)
	csv := cfg.CSV()
	if st.CompiledHash != advisor.CSVHash(csv) || st.CompiledClasses != 5 || st.CompiledBytes != int32(len(csv)) || st.ObservedGeneration != 2 {
		t.Errorf("hash %s classes %d bytes %d gen %d", st.CompiledHash, st.CompiledClasses, st.CompiledBytes, st.ObservedGeneration)
	}
	wantCond(t, st, prismv1.ConditionCompiled, metav1.ConditionTrue, ReasonCompiled, "5 classes compile to a "+strconv.Itoa(len(csv))+"-byte IO class file, sha256:")
	wantCond(t, st, prismv1.ConditionLoaded, metav1.ConditionFalse, ReasonNoNodes, "no StorageNode's cache plan names this policy")
	wantCond(t, st, prismv1.ConditionAdvised, metav1.ConditionFalse, ReasonNoNodes)
	if st.Warnings != nil {
		t.Errorf("warnings %v", st.Warnings)
	}
}

func TestInvalidAndFilesystemPolicies(t *testing.T) {
	p := policy()
	p.Spec.Classes[1].Allocation = "0.125"
	_, err := ioclass.Compile(&p.Spec)
	st := computeStatus(&scope{policy: p, compileErr: err, listed: true}, DefaultWindow, nil)
	wantCond(t, st, prismv1.ConditionCompiled, metav1.ConditionFalse, ReasonInvalid, "spec.classes[1].allocation", "at most 4 characters")
	wantCond(t, st, prismv1.ConditionLoaded, metav1.ConditionFalse, ReasonNotCompiled)
	wantCond(t, st, prismv1.ConditionAdvised, metav1.ConditionFalse, ReasonNotCompiled)
	if st.CompiledHash != "" || st.CompiledClasses != 0 {
		t.Errorf("an invalid policy has hash %q", st.CompiledHash)
	}

	fs := policy()
	fs.Spec.Classes = append(fs.Spec.Classes, prismv1.IOClass{ID: 20, Name: "logs", EvictionPriority: ptr(100), Allocation: "0.1",
		AllOf: []prismv1.MatchTerm{{AnyOf: []prismv1.IOCondition{{Type: prismv1.ConditionExtension, Value: "log"}}}}, Done: true})
	cfg := writtenCSV(t, fs)
	st = computeStatus(&scope{policy: fs, compiled: cfg, listed: true}, DefaultWindow, nil)
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], `class 20 "logs" uses Extension`) || !strings.Contains(st.Warnings[0], "can never match") {
		t.Errorf("warnings %q", st.Warnings)
	}
	wantCond(t, st, prismv1.ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
}

func ptr(v int32) *int32 { return &v }

func TestLoadedCountsOnlyNodesRunningTheFile(t *testing.T) {
	p := policy()
	cfg := writtenCSV(t, p)
	csv := cfg.CSV()
	older := policy()
	older.Spec.Classes[4].Allocation = "0.5"
	oldCfg := writtenCSV(t, older)
	missing := ioclass.Config{Classes: cfg.Classes[:3]}
	nodes := []prismv1.StorageNode{
		node("a", prismv1.CacheWriteBack, csv, &cfg, prismv1.CacheRunning),
		node("b", prismv1.CacheWriteBack, csv, nil, ""),
		node("c", prismv1.CacheWriteBack, csv, &cfg, prismv1.CachePending),
		node("d", prismv1.CacheWriteBack, oldCfg.CSV(), &oldCfg, prismv1.CacheRunning),
		node("e", prismv1.CacheWriteBack, "", nil, ""),
		node("f", prismv1.CacheWriteBack, csv, &missing, prismv1.CacheRunning),
	}
	nodes[2].Status.Caches[0].Message = "DryRun"
	st := computeStatus(&scope{policy: p, compiled: cfg, listed: true, nodes: nodes}, DefaultWindow, nil)
	if st.Nodes != 6 || st.LoadedNodes != 1 {
		t.Errorf("nodes %d loaded %d", st.Nodes, st.LoadedNodes)
	}
	wantCond(t, st, prismv1.ConditionLoaded, metav1.ConditionFalse, ReasonNodesNotLoaded,
		"1 of 6 nodes report every cache Running",
		"b: reports no cache yet",
		"c: cache on /dev/disk/by-id/nvme-A is Pending (DryRun)",
		"d: its plan carries another IO class file than sha256:",
		"e: its plan carries no IO class file yet",
		"f: cache on /dev/disk/by-id/nvme-A reports no statistics for classes 10, 11: they are not loaded")
	all := computeStatus(&scope{policy: p, compiled: cfg, listed: true, nodes: nodes[:1]}, DefaultWindow, nil)
	wantCond(t, all, prismv1.ConditionLoaded, metav1.ConditionTrue, ReasonAllNodesLoaded, "1 of 1 nodes")
}

func TestClassesDiffer(t *testing.T) {
	want := map[int32]string{0: "unclassified", 3: "io_direction:write&done"}
	for _, tc := range []struct {
		got  []prismv1.IOClassUsage
		want string
	}{
		{[]prismv1.IOClassUsage{{ID: 0, Name: "unclassified"}, {ID: 3, Name: "io_direction:write&done"}}, ""},
		{[]prismv1.IOClassUsage{{ID: 0}, {ID: 3}}, ""}, // no names: ids only
		{[]prismv1.IOClassUsage{{ID: 0}}, "reports no statistics for classes 3"},
		{[]prismv1.IOClassUsage{{ID: 0}, {ID: 3}, {ID: 4}}, "reports class 4, which the file does not have"},
		{[]prismv1.IOClassUsage{{ID: 0}, {ID: 3, Name: "io_direction:read&done"}}, `runs class 3 as "io_direction:read&done"`},
	} {
		if got := classesDiffer(tc.got, want); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("classesDiffer(%v) = %q, want %q", tc.got, got, tc.want)
		}
	}
}

// window is one 100 GiB cache on node a over ten minutes: class 10 rewrote 40 GiB over 4 GiB
// (β 10), class 11 wrote 15 GiB over 30 GiB (β 0.5).
func window() *advisor.Window {
	return &advisor.Window{Start: t0, End: t0.Add(10*time.Minute + 500*time.Millisecond), Caches: []advisor.CacheWindow{{
		Key: "a//dev/disk/by-id/nvme-A", SizeBytes: 100 * gib, ExportedWritten: 55 * gib, CoreWritten: 50 * gib,
		Classes: []advisor.ClassWindow{{ID: 10, Written: 40 * gib, Occupancy: 4 * gib}, {ID: 11, Written: 15 * gib, Occupancy: 30 * gib}},
	}}, Skipped: []string{"b//dev/disk/by-id/nvme-A: its write counters went down: the cache restarted or its statistics were reset"}}
}

func advised(p *prismv1.ClassificationPolicy, w *advisor.Window) *scope {
	cfg, _ := ioclass.Compile(&p.Spec)
	res := advisor.Advise(advisor.Input{Classes: advisor.ClassesOf(&p.Spec), Caches: w.Caches, Params: advisor.Defaults()})
	return &scope{policy: p, compiled: cfg, listed: true, window: w, advice: &res,
		nodes: []prismv1.StorageNode{node("a", prismv1.CacheWriteBack, cfg.CSV(), &cfg, prismv1.CacheRunning)}}
}

func TestAdvisedStatus(t *testing.T) {
	p := policy()
	st := computeStatus(advised(p, window()), DefaultWindow, nil)
	wantCond(t, st, prismv1.ConditionAdvised, metav1.ConditionTrue, ReasonAdvised,
		"5 recommendations (1 Pin, 1 Demote, 3 Keep) from the window 2026-07-01T10:00:00Z–2026-07-01T10:10:00Z over 1 cache on 1 node",
		"skipped b//dev/disk/by-id/nvme-A: its write counters went down",
		"modelled α_cache 0.00 as the nodes run now, 0.65 with them", // (40 − 4)/55
		"measured α_cache 0.09", // 1 − 50/55
		"applying them is up to you (spec.advisor.apply: Never)")
	a := st.Advice
	if a == nil || a.Caches != 1 || a.Nodes != 1 || a.SkippedCaches != 1 || a.WrittenBytes != 55*gib || a.SpecGeneration != 2 || a.Applied ||
		a.ExpectedWriteReduction != "0.65" || a.MeasuredWriteReduction != "0.09" || !a.WindowEnd.Time.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("advice %+v", a)
	}
	if len(st.Recommendations) != 5 || st.Recommendations[0].ClassID != 10 || st.Recommendations[0].Action != prismv1.RecommendPin {
		t.Fatalf("recommendations %+v", st.Recommendations)
	}
	// Never: the nodes load the spec as written.
	if st.CompiledHash != advisor.CSVHash(writtenCSV(t, p).CSV()) || st.LoadedNodes != 1 {
		t.Errorf("hash %s, loaded %d", st.CompiledHash, st.LoadedNodes)
	}
}

func TestAutomaticChangesTheFileNodesLoad(t *testing.T) {
	p := policy()
	p.Spec.Advisor = &prismv1.AdvisorSpec{Apply: prismv1.AdvisorApplyAutomatic}
	s := advised(p, window())
	st := computeStatus(s, DefaultWindow, nil)
	applied := advisor.Apply(p.Spec, st.Recommendations)
	cfg, err := ioclass.Compile(&applied)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Advice.Applied || st.CompiledHash != advisor.CSVHash(cfg.CSV()) || st.CompiledHash == advisor.CSVHash(writtenCSV(t, p).CSV()) {
		t.Fatalf("applied %v hash %s", st.Advice.Applied, st.CompiledHash)
	}
	if c, _ := cfg.Class(10); !c.Pinned() || c.Allocation != "0.05" {
		t.Errorf("class 10 in the nodes' file: %+v", c)
	}
	wantCond(t, st, prismv1.ConditionCompiled, metav1.ConditionTrue, ReasonCompiled, "with the advisor's recommendations applied")
	wantCond(t, st, prismv1.ConditionAdvised, metav1.ConditionTrue, ReasonAdvised, "the nodes load them (spec.advisor.apply: Automatic)")
	// Node a's plan still carries the file as written: it no longer counts as loaded.
	wantCond(t, st, prismv1.ConditionLoaded, metav1.ConditionFalse, ReasonNodesNotLoaded, "a: its plan carries another IO class file")
}

func TestAdviceWithoutAWindow(t *testing.T) {
	p := policy()
	cfg := writtenCSV(t, p)
	wb := []prismv1.StorageNode{node("a", prismv1.CacheWriteBack, cfg.CSV(), &cfg, prismv1.CacheRunning)}

	st := computeStatus(&scope{policy: p, compiled: cfg, listed: true, nodes: wb, since: t0, observing: 3}, DefaultWindow, nil)
	wantCond(t, st, prismv1.ConditionAdvised, metav1.ConditionFalse, ReasonObserving, "observing 3 caches since 2026-07-01T10:00:00Z", "window of 10m0s")

	wt := []prismv1.StorageNode{node("a", prismv1.CacheWriteThrough, "", nil, ""), node("b", prismv1.CacheWriteAround, "", nil, "")}
	st = computeStatus(&scope{policy: p, compiled: cfg, listed: true, nodes: wt}, DefaultWindow, nil)
	wantCond(t, st, prismv1.ConditionAdvised, metav1.ConditionFalse, ReasonNoWriteBackCache, "the caches of the 2 nodes run WriteAround, WriteThrough")

	// After an operator restart the recorded advice stays while it matches the generation...
	prev := computeStatus(advised(p, window()), DefaultWindow, nil)
	p.Status = prev
	st = computeStatus(&scope{policy: p, compiled: cfg, listed: true, nodes: wb, since: t0, observing: 1}, DefaultWindow, nil)
	if st.Advice == nil || len(st.Recommendations) != 5 || cond(st, prismv1.ConditionAdvised).Reason != ReasonAdvised {
		t.Errorf("advice not carried over: %+v", st.Advice)
	}
	// ...and so does a failed list.
	st = computeStatus(&scope{policy: p, compiled: cfg}, DefaultWindow, []error{errors.New("listing storage nodes: boom")})
	if len(st.Recommendations) != 5 {
		t.Error("a failed list dropped the recommendations")
	}
	wantCond(t, st, prismv1.ConditionLoaded, metav1.ConditionFalse, ReasonReconcileError, "boom")
	// An edited spec drops advice about the old one.
	p.Generation = 3
	st = computeStatus(&scope{policy: p, compiled: cfg, listed: true, nodes: wb, since: t0, observing: 1}, DefaultWindow, nil)
	if st.Advice != nil || st.Recommendations != nil || cond(st, prismv1.ConditionAdvised).Reason != ReasonObserving {
		t.Errorf("stale advice kept: %+v", st.Advice)
	}
}

func TestTooLittleData(t *testing.T) {
	w := window()
	for i := range w.Caches[0].Classes {
		w.Caches[0].Classes[i].Written = 1 << 20
	}
	st := computeStatus(advised(policy(), w), DefaultWindow, nil)
	wantCond(t, st, prismv1.ConditionAdvised, metav1.ConditionFalse, ReasonTooLittleData, "2.0 MiB written in the window, less than 1% of the 100.0 GiB of cache")
	if st.Advice == nil || st.Advice.WrittenBytes != 2<<20 || st.Recommendations != nil {
		t.Errorf("advice %+v, %d recommendations", st.Advice, len(st.Recommendations))
	}
}
