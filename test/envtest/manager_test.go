package envtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
}

// TestOperatorFollowsInventoryAndLabels runs the operator's manager and checks that the
// watches re-select when a node's inventory or labels change, without any requeue timer.
func TestOperatorFollowsInventoryAndLabels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startOperator(ctx, t)

	label := unique("watch")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	policy := newPolicy(label, prismv1.ModeApply)
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	get := func() *prismv1.HybridStoragePolicy {
		p := &prismv1.HybridStoragePolicy{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: policy.Name}, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	eventually(t, 15*time.Second, "every pairable node ready", func() bool { return get().Status.ReadyNodes == pairable(nodes) })

	// A QLC drive disappears from node a (its udev entry and sysfs directory go away).
	a := nodes["optane-qlc-a"]
	if err := os.RemoveAll(filepath.Join(a.root, "sys/block/nvme3n1")); err != nil {
		t.Fatal(err)
	}
	if err := a.publisher(agentAPI(t, env.Config)).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "node a to have two capacity devices", func() bool {
		sel := selectionOf(get(), a.name)
		return sel != nil && len(sel.Capacity) == 2
	})

	// Node b loses the storage role label: the policy lets it go and releases its claim.
	b := nodes["optane-qlc-b"]
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: b.name}, node); err != nil {
		t.Fatal(err)
	}
	delete(node.Labels, "prism.storage.io/role")
	if err := env.Client.Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "node b to leave the selection", func() bool {
		p := get()
		return p.Status.SelectedNodes == int32(len(nodes)-1) && selectionOf(p, b.name) == nil
	})
	eventually(t, 15*time.Second, "node b's claim to be released", func() bool {
		sn := &prismv1.StorageNode{}
		return env.Client.Get(ctx, client.ObjectKey{Name: b.name}, sn) == nil && sn.Spec.PolicyName == ""
	})
}

// startOperator runs the operator's manager as cmd/manager sets it up.
func startOperator(ctx context.Context, t *testing.T) ctrl.Manager {
	t.Helper()
	skip := true // several tests run a manager in this process
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: hybridstoragepolicy.CacheOptions(nil), Controller: config.Controller{SkipNameValidation: &skip}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&hybridstoragepolicy.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	return mgr
}

// The operator's cache holds Prism's local volumes only, however many others the cluster has.
func TestOperatorCachesOnlyPrismVolumes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr := startOperator(ctx, t)
	volume := func(name string, labels map[string]string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: unique(name), Labels: labels},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/x"}},
			},
		}
	}
	ours := volume("prism-vol", map[string]string{rook.LabelPolicy: "p"})
	foreign := volume("foreign-vol", map[string]string{"app": "db"})
	for _, v := range []*corev1.PersistentVolume{ours, foreign} {
		if err := env.Client.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 15*time.Second, "Prism's volume in the operator's cache", func() bool {
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ours), &corev1.PersistentVolume{}) == nil
	})
	if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(foreign), &corev1.PersistentVolume{}); !apierrors.IsNotFound(err) {
		t.Errorf("a foreign volume read through the cache: want NotFound, got %v", err)
	}
	if err := mgr.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(foreign), &corev1.PersistentVolume{}); err != nil {
		t.Errorf("the API reader must still see the foreign volume: %v", err)
	}
}

// The operator's cache holds Prism's Ceph probe pods only, not the cluster's other pods.
func TestOperatorCachesOnlyProbePods(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr := startOperator(ctx, t)
	ns := unique("pods")
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	ours := pod("prism-probe-x", map[string]string{rook.LabelProbePolicy: "p"})
	foreign := pod("db", map[string]string{"app": "db"})
	for _, p := range []*corev1.Pod{ours, foreign} {
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 15*time.Second, "Prism's probe in the operator's cache", func() bool {
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(ours), &corev1.Pod{}) == nil
	})
	if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(foreign), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("a foreign pod read through the cache: want NotFound, got %v", err)
	}
}
