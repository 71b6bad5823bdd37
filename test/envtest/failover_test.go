package envtest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
)

// electedOperator starts an operator manager that takes part in leader election (lease id in
// ns, short timings so a takeover takes seconds). From its hangAt-th write on (0: never) its
// client hangs until the manager stops: a leader that dies in the middle of a reconcile.
func electedOperator(ctx context.Context, t *testing.T, ns, id string, hangAt int64) (ctrl.Manager, *atomic.Int64) {
	t.Helper()
	writes := &atomic.Int64{}
	hang := func(ctx context.Context) error {
		if n := writes.Add(1); hangAt > 0 && n >= hangAt {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	skip, lease, renew, retry := true, 3*time.Second, 2*time.Second, 250*time.Millisecond
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: hybridstoragepolicy.CacheOptions(nil), Controller: config.Controller{SkipNameValidation: &skip},
		LeaderElection: true, LeaderElectionID: id, LeaderElectionNamespace: ns, LeaderElectionResourceLock: "leases",
		LeaseDuration: &lease, RenewDeadline: &renew, RetryPeriod: &retry,
		NewClient: func(c *rest.Config, o client.Options) (client.Client, error) {
			inner, err := client.NewWithWatch(c, o)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(inner, interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
					if err := hang(ctx); err != nil {
						return err
					}
					return c.Patch(ctx, obj, p, o...)
				},
				Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, o ...client.ApplyOption) error {
					if err := hang(ctx); err != nil {
						return err
					}
					return c.Apply(ctx, obj, o...)
				},
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.UpdateOption) error {
					if err := hang(ctx); err != nil {
						return err
					}
					return c.Update(ctx, obj, o...)
				},
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, o ...client.SubResourcePatchOption) error {
					if err := hang(ctx); err != nil {
						return err
					}
					return c.SubResource(sub).Patch(ctx, obj, p, o...)
				},
			}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&hybridstoragepolicy.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("prism-operator")}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	return mgr, writes
}

// leaseHolder is who holds the lease id in ns ("" when nobody yet).
func leaseHolder(t *testing.T, ns, id string) string {
	l := &coordinationv1.Lease{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, l); err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestLeaderDiesMidReconcile: the operator's leader hangs in the middle of a new policy's
// first reconcile (after its first claim, before the others) and dies; the standby takes the
// lease and finishes: every pairable node claimed once, each NodeClaimed Event recorded once,
// and once the nodes are provisioned one storage.nodes entry per node (issue 31 item 3).
func TestLeaderDiesMidReconcile(t *testing.T) {
	// The first write is the policy's finalizer; the claims follow, several at a time.
	for _, hangAt := range []int64{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("hangs at write %d", hangAt), func(t *testing.T) { leaderDiesAt(t, hangAt) })
	}
}

func leaderDiesAt(t *testing.T, hangAt int64) {
	ctx := context.Background()
	ns, id := unique("failover"), unique("prism-operator-lock")
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	leaderCtx, kill := context.WithCancel(ctx)
	defer kill()
	_, leaderWrites := electedOperator(leaderCtx, t, ns, id, hangAt)
	eventually(t, 20*time.Second, "the first operator to lead", func() bool { return leaseHolder(t, ns, id) != "" })
	first := leaseHolder(t, ns, id)
	standbyCtx, stop := context.WithCancel(ctx)
	defer stop()
	electedOperator(standbyCtx, t, ns, id, 0)

	cluster := newCephCluster(t)
	label := unique("failover")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	policy := createPolicy(t, label, cluster, prismv1.CacheNone)
	eventually(t, 20*time.Second, "the leader's write to hang", func() bool { return leaderWrites.Load() >= hangAt })
	// The writes before it land, with their Events; then the leader dies with its write in
	// flight, its lease not released.
	time.Sleep(500 * time.Millisecond)
	kill()
	eventually(t, 30*time.Second, "the standby to take the lease", func() bool {
		h := leaseHolder(t, ns, id)
		return h != "" && h != first
	})

	want := pairable(nodes)
	claimed := func() (n int32) {
		for _, sn := range nodes {
			s := &prismv1.StorageNode{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: sn.name}, s); err == nil && s.Spec.PolicyName == policy.Name && s.Spec.Plan != nil {
				n++
			}
		}
		return n
	}
	eventually(t, 30*time.Second, "the new leader to claim every pairable node", func() bool { return claimed() == want })

	for _, key := range []string{"optane-qlc-a", "optane-qlc-b", "optane-qlc-homelab-d"} {
		markProvisioned(t, nodes[key].name)
	}
	eventually(t, 30*time.Second, "the provisioned nodes' entries", func() bool { return len(storageNodes(t, getCephCluster(t, cluster))) >= 4 })
	entries, _, _ := unstructured.NestedSlice(getCephCluster(t, cluster).Object, "spec", "storage", "nodes")
	seen := map[string]int{}
	for _, e := range entries {
		name, _ := e.(map[string]any)["name"].(string)
		if seen[name]++; seen[name] > 1 {
			t.Errorf("storage.nodes has %s twice", name)
		}
	}

	// Each claimed node's NodeClaimed Event, once: neither lost with the old leader nor
	// recorded again by the new one.
	time.Sleep(2 * time.Second) // the recorder writes asynchronously
	list := &eventsv1.EventList{}
	if err := env.Client.List(ctx, list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
		t.Fatal(err)
	}
	count := map[string]int32{}
	for _, e := range list.Items {
		if e.Reason == hybridstoragepolicy.EventNodeClaimed && e.Related != nil && e.Related.Name == policy.Name {
			n := int32(1)
			if e.Series != nil {
				n = e.Series.Count
			}
			count[e.Regarding.Name] += n
		}
	}
	for _, sn := range nodes {
		s := &prismv1.StorageNode{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: sn.name}, s); err != nil || s.Spec.PolicyName != policy.Name {
			continue
		}
		if count[sn.name] != 1 {
			t.Errorf("node %s claimed, with %d NodeClaimed Events", sn.name, count[sn.name])
		}
	}
}
