// Command convergence measures how the operator scales: N simulated nodes (StorageNodes with
// 24-device inventories) on a real kube-apiserver (envtest), one policy, then every node's
// agent reporting its partitions. It prints the time to a planned policy, the time to a
// configured CephCluster, and the API writes per kind, to show writes grow with changes,
// not with reconciles.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
	"github.com/prism-storage/prism/test/support/testenv"
)

func main() {
	n := flag.Int("nodes", 1000, "simulated nodes")
	flag.StringVar(&apiserverProfile, "apiserver-cpu-profile", "", "write a CPU profile of the kube-apiserver during the planning phase to this file")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "convergence:", err)
		os.Exit(1)
	}
}

// writes counts API writes by kind and verb.
type writes struct {
	mu sync.Mutex
	m  map[string]int
}

func (w *writes) add(obj runtime.Object, verb string) {
	kind := fmt.Sprintf("%T", obj)
	if u, ok := obj.(*unstructured.Unstructured); ok {
		kind = u.GetKind()
	}
	w.mu.Lock()
	w.m[verb+" "+kind]++
	w.mu.Unlock()
}

func (w *writes) snapshot() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.m {
		out[k] = v
	}
	return out
}

// apiserverProfile is where the planning phase's kube-apiserver CPU profile goes ("" for none).
var apiserverProfile string

// profileAPIServer records the API server's CPU for d from its /debug/pprof endpoint (on by
// default) into apiserverProfile.
func profileAPIServer(cfg *rest.Config, d time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		rc, err := rawClient(cfg)
		if err != nil {
			done <- err
			return
		}
		body, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", fmt.Sprint(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(context.Background())
		if err == nil {
			err = os.WriteFile(apiserverProfile, body, 0o644)
		}
		done <- err
	}()
	return done
}

func rawClient(cfg *rest.Config) (*rest.RESTClient, error) {
	return rest.RESTClientFor(&rest.Config{Host: cfg.Host, TLSClientConfig: cfg.TLSClientConfig, BearerToken: cfg.BearerToken,
		ContentConfig: rest.ContentConfig{NegotiatedSerializer: scheme.Codecs.WithoutConversion(), GroupVersion: &corev1.SchemeGroupVersion}})
}

// apiserverCPU is the CPU time the kube-apiserver has used (its process_cpu_seconds_total):
// on a shared machine, CPU seconds per phase compare across runs better than wall time.
func apiserverCPU(ctx context.Context, cfg *rest.Config) (float64, error) {
	rc, err := rawClient(cfg)
	if err != nil {
		return 0, err
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "process_cpu_seconds_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("kube-apiserver /metrics has no process_cpu_seconds_total")
}

func run(nodes int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000 // the simulated agents are many clients in reality
	setup, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return err
	}

	start := time.Now()
	if err := createNodes(ctx, setup, nodes); err != nil {
		return err
	}
	fmt.Printf("created %d Nodes and StorageNodes (24 devices each) in %s\n", nodes, time.Since(start).Round(time.Millisecond))
	if err := createCephCluster(ctx, setup); err != nil {
		return err
	}

	counts := &writes{m: map[string]int{}}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		NewClient: func(c *rest.Config, o client.Options) (client.Client, error) {
			inner, err := client.NewWithWatch(c, o)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(inner, interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
					counts.add(obj, "patch")
					return c.Patch(ctx, obj, p, o...)
				},
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.UpdateOption) error {
					counts.add(obj, "update")
					return c.Update(ctx, obj, o...)
				},
				Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, o ...client.ApplyOption) error {
					counts.add(&unstructured.Unstructured{Object: map[string]any{"kind": "CephCluster(apply)"}}, "apply")
					return c.Apply(ctx, obj, o...)
				},
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, o ...client.SubResourcePatchOption) error {
					counts.add(obj, "patch/"+sub)
					return c.SubResource(sub).Patch(ctx, obj, p, o...)
				},
			}), nil
		},
	})
	if err != nil {
		return err
	}
	if err := (&hybridstoragepolicy.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()

	policy := &prismv1.HybridStoragePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: prismv1.HybridStoragePolicySpec{
			Mode:         prismv1.ModeApply,
			NodeSelector: prismv1.NodeSelector{MatchLabels: map[string]prismv1.LabelValue{"bench": "true"}},
			CephCluster:  prismv1.ObjectRef{Namespace: "rook-ceph", Name: "rook-ceph"},
			DB:           prismv1.DBSizing{Size: resource.NewQuantity(60<<30, resource.BinarySI), SpareSlots: 1},
		},
	}
	var profiled <-chan error
	if apiserverProfile != "" {
		profiled = profileAPIServer(env.Config, 15*time.Second)
	}
	cpuBefore, err := apiserverCPU(ctx, env.Config)
	if err != nil {
		return err
	}
	start = time.Now()
	if err := setup.Create(ctx, policy); err != nil {
		return err
	}
	if err := waitFor(ctx, setup, 10*time.Minute, func(p *prismv1.HybridStoragePolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionPlanned)
		return c != nil && c.Status == metav1.ConditionTrue && p.Status.ReadyNodes == int32(nodes)
	}); err != nil {
		return err
	}
	planned := time.Since(start)
	afterPlan := counts.snapshot()
	cpuAfter, err := apiserverCPU(ctx, env.Config)
	if err != nil {
		return err
	}
	if profiled != nil {
		if err := <-profiled; err != nil {
			return fmt.Errorf("profiling the API server: %w", err)
		}
		fmt.Printf("kube-apiserver CPU profile of the first 15 s of planning in %s\n", apiserverProfile)
	}
	planCPU := cpuAfter - cpuBefore
	fmt.Printf("policy planned on %d nodes in %s; kube-apiserver CPU %.1f s (%.1f ms per StorageNode write); writes so far: %v\n",
		nodes, planned.Round(time.Millisecond), planCPU, 1000*planCPU/float64(max(1, afterPlan["patch *v1alpha1.StorageNode"])), sorted(afterPlan))

	start = time.Now()
	if err := markAllProvisioned(ctx, setup); err != nil {
		return err
	}
	fmt.Printf("all agents reported their partitions in %s\n", time.Since(start).Round(time.Millisecond))
	var last *metav1.Condition
	if err := waitFor(ctx, setup, 3*time.Minute, func(p *prismv1.HybridStoragePolicy) bool {
		last = meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured)
		ready := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionReady)
		if ready != nil && ready.Reason == "ReconcileError" {
			last = ready
		}
		return last != nil && last.Status == metav1.ConditionTrue
	}); err != nil {
		msg := "none"
		if last != nil {
			msg = last.Reason + ": " + last.Message
		}
		if len(msg) > 600 {
			msg = msg[:600] + "..."
		}
		fmt.Printf("RESULT nodes=%d planned_s=%.2f configured=never (%s) cephcluster_applies=%d\n", nodes, planned.Seconds(), msg, counts.snapshot()["apply CephCluster(apply)"])
		return nil
	}
	configured := time.Since(start)
	final := counts.snapshot()
	fmt.Printf("CephCluster configured for all %d nodes %s after the last report began; writes in this phase: %v\n",
		nodes, configured.Round(time.Millisecond), sorted(diff(final, afterPlan)))
	fmt.Printf("RESULT nodes=%d planned_s=%.2f plan_apiserver_cpu_s=%.1f configured_s=%.2f cephcluster_applies=%d storagenode_plan_writes=%d policy_status_writes=%d\n",
		nodes, planned.Seconds(), planCPU, configured.Seconds(), final["apply CephCluster(apply)"],
		final["patch *v1alpha1.StorageNode"], final["patch/status *v1alpha1.HybridStoragePolicy"])
	return nil
}

func createNodes(ctx context.Context, c client.Client, n int) error {
	sem := make(chan struct{}, 32)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			name := fmt.Sprintf("node-%04d", i)
			if err := c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"bench": "true"}}}); err != nil {
				errs <- err
				return
			}
			sn := &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if err := c.Create(ctx, sn); err != nil {
				errs <- err
				return
			}
			sn.Status = inventoryOf(i)
			if err := c.Status().Update(ctx, sn); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// inventoryOf is a node of 24 drives: 2 Optane P5800X 1.6 TB, 6 D5-P5316 30.72 TB and 16
// TLC drives Prism leaves alone (1000 such nodes are 6000 OSDs: a CephCluster holding many
// more entries would exceed the API server's object size limit, whatever writes it).
func inventoryOf(i int) prismv1.StorageNodeStatus {
	var devs []prismv1.Device
	for j := 0; j < 24; j++ {
		d := prismv1.Device{
			Name: fmt.Sprintf("nvme%dn1", j), Path: fmt.Sprintf("/dev/nvme%dn1", j),
			StablePath: fmt.Sprintf("/dev/disk/by-id/nvme-INTEL_SSDPF2NV307TZ_PHAC%04d%02d", i, j),
			Model:      "INTEL SSDPF2NV307TZ", SizeBytes: 30720827326464, Tier: prismv1.TierCapacity,
			TierReason: "Intel D5-P5316 (QLC)", Eligibility: prismv1.Eligibility{Eligible: true},
		}
		switch {
		case j < 2:
			d.StablePath = fmt.Sprintf("/dev/disk/by-id/nvme-INTEL_SSDPF21Q016TB_PHAL%04d%02d", i, j)
			d.Model, d.SizeBytes, d.Tier, d.TierReason = "INTEL SSDPF21Q016TB", 1600321314816, prismv1.TierFast, "Intel Optane P5800X (3DXPoint)"
		case j >= 8:
			d.StablePath = fmt.Sprintf("/dev/disk/by-id/nvme-SAMSUNG_MZQL23T8HCLS-00A07_S64H%04d%02d", i, j)
			d.Model, d.SizeBytes, d.Tier, d.TierReason = "SAMSUNG MZQL23T8HCLS-00A07", 3840755982336, prismv1.TierOther, "Samsung PM9A3 (TLC)"
		}
		devs = append(devs, d)
	}
	// The CRD wants devices sorted by name (nvme10n1 before nvme2n1), as the agent writes them.
	sort.Slice(devs, func(a, b int) bool { return devs[a].Name < devs[b].Name })
	now := metav1.Now()
	return prismv1.StorageNodeStatus{Devices: devs, LastInventoryTime: &now, FastDevices: 2, CapacityDevices: 6, EligibleDevices: 24}
}

func markAllProvisioned(ctx context.Context, c client.Client) error {
	list := &prismv1.StorageNodeList{}
	if err := c.List(ctx, list); err != nil {
		return err
	}
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := range list.Items {
		sn := &list.Items[i]
		if sn.Spec.Plan == nil {
			return fmt.Errorf("node %s has no plan", sn.Name)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sn.Status.ObservedPlanGeneration = sn.Generation
			meta.SetStatusCondition(&sn.Status.Conditions, metav1.Condition{Type: prismv1.ConditionProvisioned, Status: metav1.ConditionTrue, Reason: "PartitionsReady"})
			if err := c.Status().Update(ctx, sn); err != nil {
				failed.Store(err)
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}

func createCephCluster(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph"}}); err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`{apiVersion: ceph.rook.io/v1, kind: CephCluster, metadata: {name: rook-ceph, namespace: rook-ceph},
	  spec: {cephVersion: {image: "quay.io/ceph/ceph:v19.2.3"}, dataDirHostPath: /var/lib/rook, mon: {count: 3}, storage: {useAllNodes: false, useAllDevices: false}}}`), &u.Object); err != nil {
		return err
	}
	return c.Create(ctx, u)
}

func waitFor(ctx context.Context, c client.Client, timeout time.Duration, cond func(*prismv1.HybridStoragePolicy) bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		p := &prismv1.HybridStoragePolicy{}
		if err := c.Get(ctx, client.ObjectKey{Name: "bench"}, p); err == nil && cond(p) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("timed out after %s", timeout)
}

func diff(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func sorted(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}
