package envtest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
)

// operatorRecorder is an events.k8s.io recorder writing as the operator's service account
// (so the generated RBAC must allow it), as the manager's GetEventRecorder does.
func operatorRecorder(t *testing.T) events.EventRecorder {
	t.Helper()
	cs, err := kubernetes.NewForConfig(operatorConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); b.Shutdown() })
	return b.NewRecorder(env.Scheme, "prism-operator")
}

// wantEvent waits for an Event about the cluster-scoped object name (recorded in the default
// namespace) with the reason and a note containing note.
func wantEvent(t *testing.T, name, reason, note string) {
	t.Helper()
	var seen []string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		list := &eventsv1.EventList{}
		if err := env.Client.List(context.Background(), list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			t.Fatal(err)
		}
		seen = seen[:0]
		for _, e := range list.Items {
			if e.Regarding.Name != name {
				continue
			}
			seen = append(seen, e.Reason+": "+e.Note)
			if e.Reason == reason && strings.Contains(e.Note, note) && e.ReportingController == "prism-operator" {
				return
			}
		}
	}
	t.Errorf("no %s Event about %s with %q; its Events: %q", reason, name, note, seen)
}

func TestPolicyRecordsEventsAnAdminMustNotice(t *testing.T) {
	ctx := context.Background()
	label := unique("events")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	cluster := newCephCluster(t)
	policy := createPolicy(t, label, cluster, prismv1.CacheNone)
	r := &hybridstoragepolicy.Reconciler{Client: operatorClient(t), Recorder: operatorRecorder(t)}
	reconcileWith := func() {
		t.Helper()
		for i := 0; i < 2; i++ {
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: policy.Name}}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
		}
	}
	a, b := nodes["optane-qlc-a"].name, nodes["optane-qlc-b"].name

	reconcileWith()
	wantEvent(t, a, hybridstoragepolicy.EventNodeClaimed, "policy "+policy.Name+" claimed node "+a)

	markProvisioned(t, a)
	reconcileWith()
	wantEvent(t, policy.Name, hybridstoragepolicy.EventOSDEntriesApplied, "applied 1 nodes' OSD entries in CephCluster "+cluster.GetNamespace())

	// Node b leaves the selector: released, with the reason.
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: b}, node); err != nil {
		t.Fatal(err)
	}
	node.Labels["prism-test"] = "elsewhere"
	if err := env.Client.Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	reconcileWith()
	wantEvent(t, b, hybridstoragepolicy.EventNodeReleased, "released node "+b+" from policy "+policy.Name+": no Node matching spec.nodeSelector")

	// The cache's ClassificationPolicy is missing: the cache plan is refused, nothing applied.
	p := getPolicy(t, policy.Name)
	p.Spec.Cache = prismv1.CacheSpec{Mode: prismv1.CacheWriteBack, ClassificationPolicyName: "missing-classes"}
	if err := env.Client.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	reconcileWith()
	wantEvent(t, policy.Name, hybridstoragepolicy.EventCachePlanRefused, `ClassificationPolicy "missing-classes" not found`)
	wantEvent(t, policy.Name, hybridstoragepolicy.EventOSDEntriesWithheld, "PlanRefused: nothing applied while a node's plan is refused")
}
