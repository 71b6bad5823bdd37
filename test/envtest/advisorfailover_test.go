package envtest

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/classificationpolicy"
	"github.com/prism-storage/prism/internal/ioclass"
)

// TestAdvisorWindowSurvivesAFailover: a new operator leader, with nothing in memory, closes
// the window the old leader opened and advises exactly what the old leader would have,
// instead of starting a new window (issue 31 item 3).
func TestAdvisorWindowSurvivesAFailover(t *testing.T) {
	ctx := context.Background()
	ns := unique("prism-system")
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	p := newClassification(t)
	cfg, err := ioclass.Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	node := cacheNode(t, p.Name, cfg.CSV())
	clk := &clock{now: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)}
	leader := func() *classificationpolicy.Reconciler {
		return &classificationpolicy.Reconciler{Client: env.Client, APIReader: env.Client, Namespace: ns, Now: clk.Now}
	}
	old, control := leader(), &classificationpolicy.Reconciler{Client: env.Client, Now: clk.Now}

	occupancy := map[int32]int64{0: 20, 10: 4, 11: 30}
	report(t, node, cfg, 100, 90, map[int32]int64{0: 50, 10: 20, 11: 30}, occupancy)
	if c := policyCondition(reconcileClassification(t, old, p.Name), prismv1.ConditionAdvised); c.Reason != classificationpolicy.ReasonObserving {
		t.Fatalf("Advised after one observation: %+v", c)
	}
	reconcileClassification(t, control, p.Name) // the same window, in a reconciler that never fails over
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prism-advisor-" + p.Name}, &cm); err != nil {
		t.Fatalf("the open window was not kept: %v", err)
	}
	if refs := cm.OwnerReferences; len(refs) != 1 || refs[0].UID != p.UID || refs[0].Kind != "ClassificationPolicy" {
		t.Errorf("the kept window's owner %+v, want the policy", refs)
	}

	// The old leader is gone; eleven minutes later its successor observes.
	clk.now = clk.now.Add(11 * time.Minute)
	report(t, node, cfg, 165, 140, map[int32]int64{0: 60, 10: 60, 11: 45}, occupancy)
	got := reconcileClassification(t, leader(), p.Name)
	c := policyCondition(got, prismv1.ConditionAdvised)
	if c.Status != metav1.ConditionTrue || c.Reason != classificationpolicy.ReasonAdvised {
		t.Fatalf("the new leader did not resume the window: Advised = %+v", c)
	}
	want := reconcileClassification(t, control, p.Name)
	if !reflect.DeepEqual(got.Status.Advice, want.Status.Advice) || !reflect.DeepEqual(got.Status.Recommendations, want.Status.Recommendations) {
		t.Errorf("after the failover: advice %+v, recommendations %+v; without one: %+v, %+v",
			got.Status.Advice, got.Status.Recommendations, want.Status.Advice, want.Status.Recommendations)
	}
	if !got.Status.Advice.WindowStart.Time.Equal(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("window start %s, want the old leader's 10:00", got.Status.Advice.WindowStart)
	}
}
