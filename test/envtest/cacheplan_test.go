package envtest

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
)

// TestCachePlanCarriesCompiledClasses: with the cache on, every planned node's spec carries
// the cache settings and the ClassificationPolicy compiled to Open CAS's CSV, and every fast
// device with a cache partition a cache id. A missing ClassificationPolicy writes no plan and
// says which field names it; creating it lets the plans through.
func TestCachePlanCarriesCompiledClasses(t *testing.T) {
	ctx := context.Background()
	label := unique("cacheplan")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	classes := ioclass.DefaultCephOSD()
	classes.Name = unique("ceph-osd")
	policy := newPolicy(label, prismv1.ModeApply)
	policy.Spec.Cache = prismv1.CacheSpec{Mode: prismv1.CacheWriteBack, LineSizeKiB: 16, ClassificationPolicyName: classes.Name,
		CacheSettings: prismv1.CacheSettings{SequentialCutoff: &prismv1.SequentialCutoff{Policy: prismv1.SequentialCutoffAlways}}}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}

	p := reconcile(t, policy.Name)
	planned := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionPlanned)
	if planned == nil || planned.Status != "False" || !strings.Contains(planned.Message, "spec.cache.classificationPolicyName") || !strings.Contains(planned.Message, classes.Name) {
		t.Fatalf("Planned without the ClassificationPolicy: %+v", planned)
	}
	a := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: nodes["optane-qlc-a"].name}, a); err != nil {
		t.Fatal(err)
	}
	if a.Spec.Plan != nil {
		t.Fatalf("a plan was written without its classes: %+v", a.Spec.Plan)
	}

	if err := env.Client.Create(ctx, classes); err != nil {
		t.Fatal(err)
	}
	p = reconcile(t, policy.Name)
	if planned := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionPlanned); planned == nil || planned.Status != "True" {
		t.Fatalf("Planned with the ClassificationPolicy: %+v", planned)
	}
	cfg, err := ioclass.Compile(&classes.Spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"optane-qlc-a", "optane-qlc-b"} {
		sn := &prismv1.StorageNode{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: nodes[key].name}, sn); err != nil {
			t.Fatal(err)
		}
		pl := sn.Spec.Plan
		if pl == nil || pl.Cache == nil {
			t.Fatalf("%s: no cache plan: %+v", key, pl)
		}
		c := pl.Cache
		if c.Mode != prismv1.CacheWriteBack || c.LineSizeKiB != 16 || c.IOClassCSV != cfg.CSV() || c.DirtyData != prismv1.DirtyDataPreserve ||
			c.SequentialCutoff == nil || c.SequentialCutoff.Policy != prismv1.SequentialCutoffAlways {
			t.Errorf("%s: cache plan %+v", key, c)
		}
		ids := map[int32]bool{}
		for _, f := range pl.FastDevices {
			if f.Cache == nil || f.CacheID < 1 || ids[f.CacheID] {
				t.Errorf("%s: fast device %s: cache partition %+v, id %d", key, f.StablePath, f.Cache, f.CacheID)
			}
			ids[f.CacheID] = true
		}
	}
}

// TestCachePlanCarriesAppliedRecommendations: a ClassificationPolicy that opts in
// (spec.advisor.apply: Automatic) reaches the nodes with its recommendations applied — the
// spec stays as the user wrote it.
func TestCachePlanCarriesAppliedRecommendations(t *testing.T) {
	ctx := context.Background()
	label := unique("cacheadvice")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	classes := ioclass.DefaultCephOSD()
	classes.Name = unique("ceph-osd")
	classes.Spec.Advisor = &prismv1.AdvisorSpec{Apply: prismv1.AdvisorApplyAutomatic}
	if err := env.Client.Create(ctx, classes); err != nil {
		t.Fatal(err)
	}
	target := classes.Spec.Classes[len(classes.Spec.Classes)-1]
	if target.Pinned {
		t.Fatalf("class %d is pinned already; pick another", target.ID)
	}
	// What the ClassificationPolicy controller writes after a window.
	classes.Status.Advice = &prismv1.AdvisorStatus{SpecGeneration: classes.Generation}
	classes.Status.Recommendations = []prismv1.ClassRecommendation{{ClassID: target.ID, Action: prismv1.RecommendPin, Pinned: true, Allocation: "0.05", Reason: "test"}}
	if err := env.Client.Status().Update(ctx, classes); err != nil {
		t.Fatal(err)
	}
	policy := newPolicy(label, prismv1.ModeApply)
	policy.Spec.Cache = prismv1.CacheSpec{Mode: prismv1.CacheWriteBack, ClassificationPolicyName: classes.Name}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcile(t, policy.Name)
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: nodes["optane-qlc-a"].name}, sn); err != nil {
		t.Fatal(err)
	}
	if sn.Spec.Plan == nil || sn.Spec.Plan.Cache == nil {
		t.Fatalf("no cache plan: %+v", sn.Spec.Plan)
	}
	cfg, err := ioclass.ParseCSV(strings.NewReader(sn.Spec.Plan.Cache.IOClassCSV))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := cfg.Class(int(target.ID))
	if !ok || !c.Pinned() || c.Allocation != "0.05" {
		t.Errorf("class %d in the nodes' file: %+v (want pinned, allocation 0.05)", target.ID, c)
	}
	stored := &prismv1.ClassificationPolicy{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: classes.Name}, stored); err != nil {
		t.Fatal(err)
	}
	if last := stored.Spec.Classes[len(stored.Spec.Classes)-1]; last.Pinned || last.Allocation != target.Allocation {
		t.Errorf("the user's spec changed: %+v", last)
	}
}
