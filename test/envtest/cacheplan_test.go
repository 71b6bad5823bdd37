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
