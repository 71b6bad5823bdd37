package envtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
)

// faultyClient counts the calls made through it and fails the failAt-th one (none when 0)
// without sending it, as a timed-out API server would.
type faultyClient struct {
	calls  atomic.Int64
	mu     sync.Mutex
	verbs  []string
	failAt int64
	client client.WithWatch
}

func newFaultyClient(t *testing.T, failAt int64) *faultyClient {
	t.Helper()
	base, err := client.NewWithWatch(operatorConfig(t), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	f := &faultyClient{failAt: failAt}
	f.client = interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return f.or("get "+fmt.Sprintf("%T", obj), func() error { return c.Get(ctx, key, obj, opts...) })
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return f.or("list "+fmt.Sprintf("%T", list), func() error { return c.List(ctx, list, opts...) })
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return f.or("create", func() error { return c.Create(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return f.or("delete", func() error { return c.Delete(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return f.or("update", func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return f.or("patch", func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return f.or("apply", func() error { return c.Apply(ctx, obj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return f.or(sub+" update", func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return f.or(sub+" patch", func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
	})
	return f
}

func (f *faultyClient) or(verb string, call func() error) error {
	f.mu.Lock()
	f.verbs = append(f.verbs, verb)
	f.mu.Unlock()
	if n := f.calls.Add(1); n == f.failAt {
		return apierrors.NewInternalError(fmt.Errorf("injected fault: call %d (%s)", n, verb))
	}
	return call()
}

// clusterState is what a reconcile may release or withdraw: the StorageNodes' specs, the
// CephCluster's storage lists and Prism's annotations on it, and the policies' local volumes.
func clusterState(t *testing.T, clusters []*unstructured.Unstructured, nodes []string, policies ...string) string {
	t.Helper()
	ctx := context.Background()
	state := map[string]any{}
	for _, n := range nodes {
		sn := &prismv1.StorageNode{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n}, sn); err != nil {
			t.Fatal(err)
		}
		state["storagenode/"+n] = sn.Spec
	}
	for _, cluster := range clusters {
		c := getCephCluster(t, cluster)
		state["cephcluster/"+c.GetNamespace()+"/storage"], _, _ = unstructured.NestedMap(c.Object, "spec", "storage")
		annotations := map[string]string{}
		for k, v := range c.GetAnnotations() {
			if strings.Contains(k, "prism.storage.io/") {
				annotations[k] = v
			}
		}
		state["cephcluster/"+c.GetNamespace()+"/annotations"] = annotations
	}
	for _, p := range policies {
		vols := policyVolumes(t, p)
		state["volumes/"+p] = sortedNames(vols)
	}
	out, err := json.MarshalIndent(state, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// claimedFixture builds a policy without a cache whose provisioned nodes have storage.nodes
// entries, and a write-back policy whose cached devices are device sets on local volumes.
// Each has its own CephCluster (TestTwoPoliciesShareACephCluster covers a shared one). It
// returns the clusters, the policies and the nodes they claim.
func claimedFixture(t *testing.T) ([]*unstructured.Unstructured, []*prismv1.HybridStoragePolicy, []string) {
	t.Helper()
	var clusters []*unstructured.Unstructured
	var policies []*prismv1.HybridStoragePolicy
	var claimed []string
	for _, cache := range []prismv1.CacheMode{prismv1.CacheNone, prismv1.CacheWriteBack} {
		cluster := newCephCluster(t)
		clusters = append(clusters, cluster)
		label := unique("faults")
		nodes := startNodes(t, env.Client, label)
		publishAll(t, nodes)
		policy := createPolicy(t, label, cluster, cache)
		reconcile(t, policy.Name)
		for _, key := range []string{"optane-qlc-a", "optane-qlc-b", "optane-qlc-homelab-d"} {
			markProvisioned(t, nodes[key].name)
			if cache != prismv1.CacheNone {
				reportCores(t, nodes[key].name, nil)
			}
		}
		reconcile(t, policy.Name)
		reconcile(t, policy.Name)
		for _, n := range nodes {
			claimed = append(claimed, n.name)
		}
		policies = append(policies, policy)
	}
	if n := len(storageNodes(t, getCephCluster(t, clusters[0]))); n != 4 {
		t.Fatalf("fixture: storage.nodes has %d entries, want the admin's and 3 of the first policy's", n)
	}
	if n := len(deviceSets(t, getCephCluster(t, clusters[1]))); n < 3 {
		t.Fatalf("fixture: %d device sets, want the second policy's", n)
	}
	if n := len(policyVolumes(t, policies[1].Name)); n < 6 {
		t.Fatalf("fixture: %d local volumes", n)
	}
	return clusters, policies, claimed
}

// TestNoFaultReleasesANodeOrWithdrawsARookEntry fails each client call of a reconcile in
// turn, from the first to the last a normal reconcile makes, on policies that claim nodes
// and have storage.nodes entries, device sets and local volumes. No such run may change
// any of them; the status names the failure; a clean reconcile converges to the state of a
// run without faults.
func TestNoFaultReleasesANodeOrWithdrawsARookEntry(t *testing.T) {
	ctx := context.Background()
	clusters, policies, claimed := claimedFixture(t)
	names := []string{policies[0].Name, policies[1].Name}
	baseline := clusterState(t, clusters, claimed, names...)

	for _, policy := range policies {
		req := ctrl.Request{NamespacedName: types.NamespacedName{Name: policy.Name}}
		readyBefore := meta.FindStatusCondition(getPolicy(t, policy.Name).Status.Conditions, prismv1.ConditionReady)

		counting := newFaultyClient(t, 0)
		if _, err := (&hybridstoragepolicy.Reconciler{Client: counting.client}).Reconcile(ctx, req); err != nil {
			t.Fatalf("%s: clean reconcile: %v", policy.Name, err)
		}
		calls := counting.calls.Load()
		// At least: get the policy, list Nodes and StorageNodes, get the CephCluster, list
		// the policy's volumes (the observation); a settled policy writes nothing.
		if calls < 5 {
			t.Fatalf("%s: a normal reconcile made only %d calls", policy.Name, calls)
		}
		if got := clusterState(t, clusters, claimed, names...); got != baseline {
			t.Fatalf("%s: the fixture is not settled: a clean reconcile changed\n%s\nto\n%s", policy.Name, baseline, got)
		}
		t.Logf("%s: a normal reconcile makes %d client calls: %s", policy.Name, calls, strings.Join(counting.verbs, ", "))

		for n := int64(1); n <= calls; n++ {
			faulty := newFaultyClient(t, n)
			_, err := (&hybridstoragepolicy.Reconciler{Client: faulty.client}).Reconcile(ctx, req)
			if err == nil || !strings.Contains(err.Error(), "injected fault") {
				t.Errorf("%s, call %d failing: the reconcile returned %v, want the injected fault", policy.Name, n, err)
			}
			if got := clusterState(t, clusters, claimed, names...); got != baseline {
				t.Fatalf("%s, call %d failing: nodes released or Rook entries withdrawn:\nbefore %s\nafter %s", policy.Name, n, baseline, got)
			}
			p := getPolicy(t, policy.Name)
			ready := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionReady)
			if n > 1 && (ready == nil || ready.Reason != hybridstoragepolicy.ReasonReconcileError || !strings.Contains(ready.Message, fmt.Sprintf("injected fault: call %d", n))) {
				t.Errorf("%s, call %d failing: Ready = %+v, want the failure named", policy.Name, n, ready)
			}
			if p.Status.SelectedNodes == 0 {
				t.Errorf("%s, call %d failing: the status says no node is selected", policy.Name, n)
			}

			clean := newFaultyClient(t, 0)
			if _, err := (&hybridstoragepolicy.Reconciler{Client: clean.client}).Reconcile(ctx, req); err != nil {
				t.Fatalf("%s, after call %d failed: clean reconcile: %v", policy.Name, n, err)
			}
			if got := clusterState(t, clusters, claimed, names...); got != baseline {
				t.Fatalf("%s, after call %d failed: a clean reconcile did not converge:\nwant %s\ngot %s", policy.Name, n, baseline, got)
			}
			ready = meta.FindStatusCondition(getPolicy(t, policy.Name).Status.Conditions, prismv1.ConditionReady)
			if ready == nil || readyBefore == nil || ready.Reason != readyBefore.Reason || ready.Message != readyBefore.Message {
				t.Errorf("%s, after call %d failed: Ready = %+v, want %+v again", policy.Name, n, ready, readyBefore)
			}
		}
	}
}

// TestUnusableNodeSelectorReleasesNothing: a selector no selector can be built from (operator
// In without values) is refused by the API server, naming the field, and the policy that was
// stored keeps its nodes and Rook entries through a reconcile. (The operator's own check of
// such a selector, for objects stored before the CRD refused them, is decide.NodeSelector's unit test.)
func TestUnusableNodeSelectorReleasesNothing(t *testing.T) {
	ctx := context.Background()
	clusters, policies, claimed := claimedFixture(t)
	names := []string{policies[0].Name, policies[1].Name}
	baseline := clusterState(t, clusters, claimed, names...)

	p := getPolicy(t, policies[0].Name)
	p.Spec.NodeSelector.MatchExpressions = []prismv1.NodeSelectorRequirement{{Key: "prism.storage.io/role", Operator: metav1.LabelSelectorOpIn}}
	err := env.Client.Update(ctx, p)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.nodeSelector.matchExpressions[0]") {
		t.Fatalf("update with operator In and no values: %v, want Invalid naming spec.nodeSelector.matchExpressions[0]", err)
	}
	r := &hybridstoragepolicy.Reconciler{Client: operatorClient(t)}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: p.Name}}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if got := clusterState(t, clusters, claimed, names...); got != baseline {
		t.Fatalf("released nodes or withdrew Rook entries:\nbefore %s\nafter %s", baseline, got)
	}
}

func getPolicy(t *testing.T, name string) *prismv1.HybridStoragePolicy {
	t.Helper()
	p := &prismv1.HybridStoragePolicy{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWriteFaultsLeaveNothingHalfDone fails, in turn, each client call of reconciles that
// have writes to make: the first one of a new policy (claims, plans, status) and the one
// that puts provisioned nodes into the CephCluster (server-side apply). Each run starts from
// a fresh fixture. No faulted run may release a node it had claimed or withdraw a Rook entry
// that was there; a clean reconcile after it reaches the state of a run without faults.
func TestWriteFaultsLeaveNothingHalfDone(t *testing.T) {
	ctx := context.Background()
	type stage struct {
		name  string
		setup func(t *testing.T) (*unstructured.Unstructured, *prismv1.HybridStoragePolicy, []string)
	}
	fresh := func(t *testing.T, provisioned bool) (*unstructured.Unstructured, *prismv1.HybridStoragePolicy, []string) {
		cluster := newCephCluster(t)
		label := unique("wfaults")
		nodes := startNodes(t, env.Client, label)
		publishAll(t, nodes)
		policy := createPolicy(t, label, cluster, prismv1.CacheNone)
		var names []string
		for _, n := range nodes {
			names = append(names, n.name)
		}
		if provisioned {
			reconcile(t, policy.Name)
			for _, key := range []string{"optane-qlc-a", "optane-qlc-b", "optane-qlc-homelab-d"} {
				markProvisioned(t, nodes[key].name)
			}
		}
		return cluster, policy, names
	}
	for _, st := range []stage{
		{"first reconcile of a new policy", func(t *testing.T) (*unstructured.Unstructured, *prismv1.HybridStoragePolicy, []string) {
			return fresh(t, false)
		}},
		{"nodes provisioned, entries to apply", func(t *testing.T) (*unstructured.Unstructured, *prismv1.HybridStoragePolicy, []string) {
			return fresh(t, true)
		}},
	} {
		t.Run(st.name, func(t *testing.T) {
			// How many calls, and the state a clean run reaches.
			cluster, policy, nodes := st.setup(t)
			req := ctrl.Request{NamespacedName: types.NamespacedName{Name: policy.Name}}
			counting := newFaultyClient(t, 0)
			if _, err := (&hybridstoragepolicy.Reconciler{Client: counting.client}).Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			calls := counting.calls.Load()
			writes := 0
			for _, v := range counting.verbs {
				if !strings.HasPrefix(v, "get ") && !strings.HasPrefix(v, "list ") {
					writes++
				}
			}
			if writes == 0 {
				t.Fatalf("the reconcile made no write (%s): the stage tests nothing", strings.Join(counting.verbs, ", "))
			}
			t.Logf("%d calls, %d of them writes: %s", calls, writes, strings.Join(counting.verbs, ", "))
			want := shape(t, []*unstructured.Unstructured{cluster}, nodes, policy.Name)

			for n := int64(1); n <= calls; n++ {
				cluster, policy, nodes := st.setup(t)
				req := ctrl.Request{NamespacedName: types.NamespacedName{Name: policy.Name}}
				before := claimsAndEntries(t, cluster, nodes, policy.Name)
				faulty := newFaultyClient(t, n)
				if _, err := (&hybridstoragepolicy.Reconciler{Client: faulty.client}).Reconcile(ctx, req); err == nil || !strings.Contains(err.Error(), "injected fault") {
					t.Errorf("call %d failing: the reconcile returned %v, want the injected fault", n, err)
				}
				after := claimsAndEntries(t, cluster, nodes, policy.Name)
				for k := range before {
					if !after[k] {
						t.Fatalf("call %d (%s) failing: %s was there before and is gone", n, faulty.verbs[n-1], k)
					}
				}
				if _, err := (&hybridstoragepolicy.Reconciler{Client: newFaultyClient(t, 0).client}).Reconcile(ctx, req); err != nil {
					t.Fatalf("after call %d failed: clean reconcile: %v", n, err)
				}
				if got := shape(t, []*unstructured.Unstructured{cluster}, nodes, policy.Name); got != want {
					t.Fatalf("after call %d (%s) failed, a clean reconcile reached\n%s\nnot\n%s", n, faulty.verbs[n-1], got, want)
				}
			}
		})
	}
}

// claimsAndEntries are the nodes the policy claims and the CephCluster's storage.nodes entries.
func claimsAndEntries(t *testing.T, cluster *unstructured.Unstructured, nodes []string, policy string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, n := range nodes {
		sn := &prismv1.StorageNode{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: n}, sn); err != nil {
			t.Fatal(err)
		}
		if sn.Spec.PolicyName == policy {
			out["claim "+n] = true
		}
	}
	for name := range storageNodes(t, getCephCluster(t, cluster)) {
		out["entry "+name] = true
	}
	return out
}

// shape is clusterState with the fixture's unique names taken out, so that states of two
// fixtures compare.
func shape(t *testing.T, clusters []*unstructured.Unstructured, nodes []string, policy string) string {
	t.Helper()
	s := clusterState(t, clusters, nodes, policy)
	for _, n := range nodes {
		s = strings.ReplaceAll(s, n, "NODE:"+n[:strings.LastIndex(n, "-")])
	}
	s = strings.ReplaceAll(s, policy, "POLICY")
	for _, c := range clusters {
		s = strings.ReplaceAll(s, c.GetNamespace(), "NS")
	}
	return s
}

// Two policies that write into one CephCluster keep each other's entries and annotations:
// each applies under its own field manager, so one's apply never drops what the other applied.
func TestTwoPoliciesShareACephCluster(t *testing.T) {
	cluster := newCephCluster(t)
	var policies []*prismv1.HybridStoragePolicy
	for range 2 {
		label := unique("shared")
		nodes := startNodes(t, env.Client, label)
		publishAll(t, nodes)
		policy := createPolicy(t, label, cluster, prismv1.CacheNone)
		reconcile(t, policy.Name)
		for _, key := range []string{"optane-qlc-a", "optane-qlc-b"} {
			markProvisioned(t, nodes[key].name)
		}
		policies = append(policies, policy)
	}
	for range 2 {
		for _, p := range policies {
			reconcile(t, p.Name)
		}
	}
	c := getCephCluster(t, cluster)
	for _, p := range policies {
		v, ok := c.GetAnnotations()["nodes.prism.storage.io/"+p.Name]
		if !ok || strings.Count(v, ",") != 1 {
			t.Errorf("policy %s: annotation %q (present %t), want its two nodes", p.Name, v, ok)
		}
	}
	if n := len(storageNodes(t, c)); n != 5 {
		t.Errorf("storage.nodes has %d entries, want the admin's and two per policy", n)
	}
}
