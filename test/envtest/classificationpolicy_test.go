package envtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/classificationpolicy"
	"github.com/prism-storage/prism/internal/advisor"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/test/support/ioclasstest"
)

const gib = int64(1) << 30

// clock is a test clock the reconciler reads.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// newClassification is Prism's default Ceph policy under a unique name.
func newClassification(t *testing.T) *prismv1.ClassificationPolicy {
	t.Helper()
	p := ioclasstest.FiveClasses()
	p.Name = unique("cpol")
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func reconcileClassification(t *testing.T, r *classificationpolicy.Reconciler, name string) *prismv1.ClassificationPolicy {
	t.Helper()
	ctx := context.Background()
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
		t.Fatalf("reconcile %s: %v", name, err)
	}
	p := &prismv1.ClassificationPolicy{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func policyCondition(p *prismv1.ClassificationPolicy, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(p.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Reason: "<absent>"}
}

func TestClassificationPolicyCompiles(t *testing.T) {
	p := newClassification(t)
	got := reconcileClassification(t, &classificationpolicy.Reconciler{Client: env.Client}, p.Name)
	cfg, err := ioclass.Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	st := got.Status
	if c := policyCondition(got, prismv1.ConditionCompiled); c.Status != metav1.ConditionTrue || c.ObservedGeneration != got.Generation {
		t.Errorf("Compiled = %+v", c)
	}
	if st.CompiledHash != advisor.CSVHash(cfg.CSV()) || st.CompiledClasses != 5 || st.CompiledBytes != int32(len(cfg.CSV())) ||
		st.ObservedGeneration != got.Generation || len(st.Warnings) != 0 {
		t.Errorf("status %+v", st)
	}
	if c := policyCondition(got, prismv1.ConditionLoaded); c.Reason != classificationpolicy.ReasonNoNodes {
		t.Errorf("Loaded = %+v", c)
	}
}

func TestClassificationPolicyWarnsAboutFilesystemConditions(t *testing.T) {
	p := ioclasstest.FiveClasses()
	p.Name = unique("cpol-fs")
	prio := int32(100)
	p.Spec.Classes = append(p.Spec.Classes, prismv1.IOClass{ID: 20, Name: "journals", EvictionPriority: &prio, Allocation: "0.10", Done: true,
		AllOf: []prismv1.MatchTerm{{AnyOf: []prismv1.IOCondition{{Type: prismv1.ConditionExtension, Value: "journal"}, {Type: prismv1.ConditionDirectory, Value: "/var/log"}}}}})
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	got := reconcileClassification(t, &classificationpolicy.Reconciler{Client: env.Client}, p.Name)
	if len(got.Status.Warnings) != 1 || !strings.Contains(got.Status.Warnings[0], `class 20 "journals" uses Extension, Directory`) ||
		!strings.Contains(got.Status.Warnings[0], "never match") {
		t.Errorf("warnings %q", got.Status.Warnings)
	}
	if c := policyCondition(got, prismv1.ConditionCompiled); c.Status != metav1.ConditionTrue {
		t.Errorf("a policy with warnings must still compile: %+v", c)
	}
}

// cacheNode creates a StorageNode whose plan runs a write-back cache of 100 GiB with the
// policy's IO class file, as the operator writes it.
func cacheNode(t *testing.T, policy, csv string) *prismv1.StorageNode {
	t.Helper()
	sn := &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: unique("cache-node")}}
	sn.Spec.PolicyName, sn.Spec.Mode = "cache-policy", prismv1.ModeApply // a plan comes with its policy (CRD rule)
	sn.Spec.Plan = &prismv1.NodePlan{
		FastDevices: []prismv1.FastDevicePlan{{StablePath: "/dev/disk/by-id/nvme-OPTANE", SlotSizeBytes: 60 * gib, CacheID: 1,
			Cache: &prismv1.PlannedPartition{Number: 4, Label: "prism-cache", StartBytes: 180 * gib, SizeBytes: 100 * gib}}},
		Cache: &prismv1.NodeCachePlan{Mode: prismv1.CacheWriteBack, LineSizeKiB: 4, ClassificationPolicyName: policy, IOClassCSV: csv},
	}
	if err := env.Client.Create(context.Background(), sn); err != nil {
		t.Fatal(err)
	}
	return sn
}

// report writes the node's cache statistics through the status subresource, as the agent
// does: cumulative written bytes per class and the current occupancy (GiB).
func report(t *testing.T, sn *prismv1.StorageNode, cfg ioclass.Config, exported, core int64, written, occupancy map[int32]int64) {
	t.Helper()
	c := prismv1.CacheStatus{FastDevice: "/dev/disk/by-id/nvme-OPTANE", CacheID: 1, State: prismv1.CacheRunning,
		ExportedWrittenBytes: exported * gib, CoreWrittenBytes: core * gib}
	for _, cl := range cfg.Classes {
		id := int32(cl.ID)
		c.IOClasses = append(c.IOClasses, prismv1.IOClassUsage{ID: id, Name: cl.Rule, WrittenBytes: written[id] * gib, OccupancyBytes: occupancy[id] * gib})
	}
	sn.Status.Caches = []prismv1.CacheStatus{c}
	if err := env.Client.Status().Update(context.Background(), sn); err != nil {
		t.Fatal(err)
	}
}

func TestAdvisorRecommendsAfterAWindow(t *testing.T) {
	p := newClassification(t)
	cfg, err := ioclass.Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	a, b := cacheNode(t, p.Name, cfg.CSV()), cacheNode(t, p.Name, cfg.CSV())
	clk := &clock{now: time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)}
	r := &classificationpolicy.Reconciler{Client: env.Client, Now: clk.Now}

	// First observation: counters since the caches started.
	occupancy := map[int32]int64{0: 20, 10: 4, 11: 30}
	report(t, a, cfg, 100, 90, map[int32]int64{0: 50, 10: 20, 11: 30}, occupancy)
	report(t, b, cfg, 100, 90, map[int32]int64{0: 50, 10: 20, 11: 30}, occupancy)
	got := reconcileClassification(t, r, p.Name)
	if c := policyCondition(got, prismv1.ConditionAdvised); c.Reason != classificationpolicy.ReasonObserving || !strings.Contains(c.Message, "observing 2 caches") {
		t.Fatalf("Advised after one observation: %+v", c)
	}
	if c := policyCondition(got, prismv1.ConditionLoaded); c.Status != metav1.ConditionTrue || got.Status.LoadedNodes != 2 || got.Status.Nodes != 2 {
		t.Errorf("Loaded = %+v (%d of %d)", c, got.Status.LoadedNodes, got.Status.Nodes)
	}

	// Eleven minutes later on each node: class 10 rewrote 40 GiB over its 4 GiB (β 10),
	// class 11 wrote 15 GiB over 30 GiB (β 0.5), class 0 wrote 10 GiB over 20 GiB.
	clk.now = clk.now.Add(11 * time.Minute)
	later := map[int32]int64{0: 60, 10: 60, 11: 45}
	report(t, a, cfg, 165, 140, later, occupancy)
	report(t, b, cfg, 165, 140, later, occupancy)
	got = reconcileClassification(t, r, p.Name)

	c := policyCondition(got, prismv1.ConditionAdvised)
	if c.Status != metav1.ConditionTrue || c.Reason != classificationpolicy.ReasonAdvised {
		t.Fatalf("Advised = %+v", c)
	}
	// Σ W = 2 × 65 GiB; pinning class 10 saves 2 × (40 − 4): α_model = 72/130 = 0.55.
	adv := got.Status.Advice
	if adv == nil || adv.Caches != 2 || adv.Nodes != 2 || adv.WrittenBytes != 130*gib || adv.ExpectedWriteReduction != "0.55" ||
		adv.ModelledWriteReduction != "0.00" || adv.MeasuredWriteReduction != "0.23" || adv.SpecGeneration != got.Generation || adv.Applied {
		t.Fatalf("advice %+v", adv)
	}
	recs := map[int32]prismv1.ClassRecommendation{}
	for _, rec := range got.Status.Recommendations {
		recs[rec.ClassID] = rec
		if rec.Reason == "" {
			t.Errorf("class %d has no reason", rec.ClassID)
		}
	}
	if r := recs[10]; r.Action != prismv1.RecommendPin || !r.Pinned || r.Allocation != "0.05" || r.WriteInvalidation != "10.00" ||
		!strings.Contains(r.Reason, "80.0 GiB written over a mean 8.0 GiB held on 2 caches") {
		t.Errorf("class 10: %+v", r)
	}
	if r := recs[11]; r.Action != prismv1.RecommendDemote || r.EvictionPriority == nil || *r.EvictionPriority != 255 || r.Allocation != "0.10" ||
		!strings.Contains(r.Reason, "β 0.50 < 1.00") {
		t.Errorf("class 11: %+v", r)
	}
	if r := recs[0]; r.Action != prismv1.RecommendKeep {
		t.Errorf("class 0: %+v", r)
	}
	if len(got.Status.Recommendations) != 5 {
		t.Errorf("%d recommendations", len(got.Status.Recommendations))
	}
}

func TestAutomaticAdviceChangesTheCompiledFileNotTheSpec(t *testing.T) {
	p := ioclasstest.FiveClasses()
	p.Name = unique("cpol-auto")
	p.Spec.Advisor = &prismv1.AdvisorSpec{Apply: prismv1.AdvisorApplyAutomatic}
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	written, err := ioclass.Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	sn := cacheNode(t, p.Name, written.CSV())
	clk := &clock{now: time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)}
	r := &classificationpolicy.Reconciler{Client: env.Client, Now: clk.Now}
	occupancy := map[int32]int64{10: 4}
	report(t, sn, written, 0, 0, map[int32]int64{10: 1}, occupancy)
	reconcileClassification(t, r, p.Name)
	clk.now = clk.now.Add(10 * time.Minute)
	report(t, sn, written, 0, 0, map[int32]int64{10: 41}, occupancy)
	got := reconcileClassification(t, r, p.Name)

	if got.Status.Advice == nil || !got.Status.Advice.Applied {
		t.Fatalf("advice %+v", got.Status.Advice)
	}
	nc, err := advisor.NodeConfig(got)
	if err != nil || !nc.Applied {
		t.Fatalf("NodeConfig applied %v, err %v", nc.Applied, err)
	}
	if c, _ := nc.Config.Class(10); !c.Pinned() || got.Status.CompiledHash != advisor.CSVHash(nc.Config.CSV()) ||
		got.Status.CompiledHash == advisor.CSVHash(written.CSV()) {
		t.Errorf("class 10 %+v, hash %s", c, got.Status.CompiledHash)
	}
	// Between windows nothing moves: no second patch, the same file.
	again := reconcileClassification(t, r, p.Name)
	if again.ResourceVersion != got.ResourceVersion {
		t.Errorf("a reconcile without a new window patched the status: %+v", again.Status.Recommendations)
	}
	if got.Spec.Classes[3].Pinned || got.Generation != 1 {
		t.Errorf("the controller edited the spec: %+v (generation %d)", got.Spec.Classes[3], got.Generation)
	}
	// The next window, with class 10 pinned as advised and rewriting as before: the advice
	// starts from what the nodes run, keeps the pin, and the nodes' file does not change.
	clk.now = clk.now.Add(10 * time.Minute)
	report(t, sn, written, 0, 0, map[int32]int64{10: 81}, occupancy)
	next := reconcileClassification(t, r, p.Name)
	var class10 prismv1.ClassRecommendation
	for _, rec := range next.Status.Recommendations {
		if rec.ClassID == 10 {
			class10 = rec
		}
	}
	if class10.Action != prismv1.RecommendKeep || !class10.Pinned || class10.Allocation != "0.05" ||
		next.Status.CompiledHash != got.Status.CompiledHash || !next.Status.Advice.WindowStart.Equal(got.Status.Advice.WindowEnd) {
		t.Errorf("second window: class 10 %+v, hash %s (was %s)", class10, next.Status.CompiledHash, got.Status.CompiledHash)
	}
	// The node's plan still carries the file as written: not loaded until the operator writes the new one.
	if c := policyCondition(got, prismv1.ConditionLoaded); c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "another IO class file") {
		t.Errorf("Loaded = %+v", c)
	}
}

// TestClassificationControllerWatchesStorageNodes runs the controller in a manager: a node
// naming the policy, and then its agent's report, update the policy's status with no timer.
func TestClassificationControllerWatchesStorageNodes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&classificationpolicy.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	p := newClassification(t)
	get := func() *prismv1.ClassificationPolicy {
		got := &prismv1.ClassificationPolicy{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: p.Name}, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	eventually(t, 15*time.Second, "the policy to compile", func() bool { return get().Status.CompiledHash != "" })
	cfg, err := ioclass.Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	sn := cacheNode(t, p.Name, cfg.CSV())
	eventually(t, 15*time.Second, "the node to count", func() bool {
		st := get().Status
		return st.Nodes == 1 && st.LoadedNodes == 0
	})
	report(t, sn, cfg, 1, 1, map[int32]int64{}, map[int32]int64{})
	eventually(t, 15*time.Second, "the node to report the classes loaded", func() bool { return get().Status.LoadedNodes == 1 })
}
