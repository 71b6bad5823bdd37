package hybridstoragepolicy

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// A StorageNode event requeues the policy that claims the node, and only it; a node no policy
// claims, or one whose claim changed, requeues every policy that might claim it.
func TestStorageNodeEventsRequeueTheirClaimant(t *testing.T) {
	s := runtime.NewScheme()
	if err := prismv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, n := range []string{"a", "b", "c"} {
		objs = append(objs, &prismv1.HybridStoragePolicy{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()}
	sn := func(policy string) *prismv1.StorageNode {
		return &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: prismv1.StorageNodeSpec{PolicyName: policy}}
	}
	for _, tc := range []struct {
		name string
		objs []client.Object
		want []string
	}{
		{"claimed by b", []client.Object{sn("b")}, []string{"b"}},
		{"an inventory update of a node b claims", []client.Object{sn("b"), sn("b")}, []string{"b"}},
		{"unclaimed", []client.Object{sn("")}, []string{"a", "b", "c"}},
		{"released by b", []client.Object{sn("b"), sn("")}, []string{"a", "b", "c"}},
		{"moved from a to c", []client.Object{sn("a"), sn("c")}, []string{"a", "c"}},
	} {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		r.enqueue(context.Background(), q, tc.objs...)
		var got []string
		for q.Len() > 0 {
			req, _ := q.Get()
			got = append(got, req.Name)
			q.Done(req)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: requeued %q, want %q", tc.name, got, tc.want)
		}
		q.ShutDown()
	}
}

// A probe pod requeues the policy that started it, by its label, even for a name too long
// for a label value; any other pod requeues nothing.
func TestProbePodsRequeueTheirPolicy(t *testing.T) {
	s := runtime.NewScheme()
	if err := prismv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("p", 80)
	var objs []client.Object
	for _, n := range []string{"a", "b", long} {
		objs = append(objs, &prismv1.HybridStoragePolicy{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()}
	for _, tc := range []struct {
		labels map[string]string
		want   []string
	}{
		{map[string]string{rook.LabelProbePolicy: "b"}, []string{"b"}},
		{map[string]string{rook.LabelProbePolicy: rook.LabelValue(long)}, []string{long}},
		{map[string]string{"app": "b"}, nil},
	} {
		var got []string
		for _, req := range r.probeOwner(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}) {
			got = append(got, req.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("labels %v: requeued %q, want %q", tc.labels, got, tc.want)
		}
	}
}
