package envtest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
)

// metadataDevices is node → data device → metadataDevice in the CephCluster.
func metadataDevices(t *testing.T, c *unstructured.Unstructured, node string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entry := storageNodes(t, c)[node]
	devs, _ := entry["devices"].([]any)
	for _, d := range devs {
		m := d.(map[string]any)
		cfg, _ := m["config"].(map[string]any)
		out[m["name"].(string)], _ = cfg["metadataDevice"].(string)
	}
	return out
}

// setCephHealth writes the CephCluster's status.ceph as Rook would.
func setCephHealth(t *testing.T, ref *unstructured.Unstructured, health string, lastChanged time.Time) {
	t.Helper()
	c := getCephCluster(t, ref)
	_ = unstructured.SetNestedField(c.Object, health, "status", "ceph", "health")
	_ = unstructured.SetNestedField(c.Object, lastChanged.UTC().Format(time.RFC3339), "status", "ceph", "lastChanged")
	if err := env.Client.Status().Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// replaceFastDevice has node's agent report its planned fast device replaced: same slot, new
// serial and stable path, which it returns.
func replaceFastDevice(t *testing.T, node string) string {
	t.Helper()
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: node}, sn); err != nil {
		t.Fatal(err)
	}
	oldFast := sn.Spec.Plan.FastDevices[0].StablePath
	newFast := oldFast + "NEW"
	for i := range sn.Status.Devices {
		if sn.Status.Devices[i].StablePath == oldFast {
			sn.Status.Devices[i].StablePath, sn.Status.Devices[i].Serial = newFast, sn.Status.Devices[i].Serial+"NEW"
		}
	}
	if err := env.Client.Status().Update(context.Background(), sn); err != nil {
		t.Fatal(err)
	}
	return newFast
}

// TestFastDeviceReplacementRecreatesOSDsOneAtATime: node a's Optane is replaced (new serial,
// new stable path). The operator plans the slots on the new device; once the agent reports
// them, the OSDs whose DB moved are handed to Rook one at a time, each only when Ceph's answers
// (read by the operator's probe pods, which the test answers as the kubelet with states
// recorded on Ceph 16) say the old OSD may go, and after the previous one settled; the
// others keep their entries as they were.
func TestFastDeviceReplacementRecreatesOSDsOneAtATime(t *testing.T) {
	ctx := context.Background()
	label := unique("replace")
	nodes, cluster, policy := policyOnItsOwnCluster(t, label)
	ns := cluster.GetNamespace()
	now := time.Now().UTC().Truncate(time.Second)
	r := &hybridstoragepolicy.Reconciler{Client: env.Client, Now: func() time.Time { return now }}
	run := func() (*prismv1.HybridStoragePolicy, ctrl.Result) {
		t.Helper()
		var res ctrl.Result
		for i := 0; i < 2; i++ {
			var err error
			if res, err = r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: policy.Name}}); err != nil {
				t.Fatal(err)
			}
		}
		p := &prismv1.HybridStoragePolicy{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: policy.Name}, p); err != nil {
			t.Fatal(err)
		}
		return p, res
	}
	// answer is the kubelet: the pending probe answers with Ceph's state, then the operator
	// looks again.
	answer := func(state string) (*prismv1.HybridStoragePolicy, ctrl.Result) {
		t.Helper()
		for _, p := range probePods(t, ns, policy.Name) {
			if p.Status.Phase == corev1.PodPending {
				finishProbe(t, &p, now, cephRecording(t, state))
			}
		}
		return run()
	}
	a := nodes["optane-qlc-a"].name
	run()
	markProvisioned(t, a)
	run()
	before := metadataDevices(t, getCephCluster(t, cluster), a)
	if len(before) < 3 {
		t.Fatalf("node a's OSDs before the replacement: %v", before)
	}

	newFast := replaceFastDevice(t, a)
	run()
	markProvisioned(t, a)

	// No answer from Ceph yet: every moved OSD waits with its old entry.
	p, res := run()
	cond := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured)
	if cond == nil || cond.Reason != hybridstoragepolicy.ReasonReplacingOSDs || !strings.Contains(cond.Message, "no answers from Ceph for "+a) || res.RequeueAfter == 0 {
		t.Fatalf("without answers: RookConfigured %+v, requeue %v", cond, res.RequeueAfter)
	}
	moved := func() (newer, older int) {
		for dev, m := range metadataDevices(t, getCephCluster(t, cluster), a) {
			switch {
			case strings.HasPrefix(m, newFast):
				newer++
			case m == before[dev]:
				older++
			default:
				t.Errorf("%s: metadataDevice %s is neither old nor new", dev, m)
			}
		}
		return newer, older
	}
	if n, o := moved(); n != 0 || o != len(before) {
		t.Fatalf("without answers: %d moved, %d kept", n, o)
	}
	rookMadeProbeKey(t, ns)
	run()

	// Ceph says the old OSD is down with its PGs degraded: it may not go yet, and says why.
	p, _ = answer("degraded")
	if cond := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured); cond == nil || !strings.Contains(cond.Message, "osd.0 not safe to destroy") {
		t.Fatalf("degraded: RookConfigured %+v", cond)
	}
	if n, _ := moved(); n != 0 {
		t.Fatalf("degraded: %d moved", n)
	}

	// The old OSD destroyed, its id kept: none goes, and the admin is told to purge it
	// (decision 0058).
	setCephHealth(t, cluster, "HEALTH_WARN", now.Add(-time.Hour))
	now = now.Add(2 * time.Minute)
	run()
	p, _ = answer("destroyed")
	if cond := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured); cond == nil ||
		!strings.Contains(cond.Message, "Ceph has osd.0 destroyed under "+a+"'s CRUSH host") || !strings.Contains(cond.Message, "ceph osd purge 0") {
		t.Fatalf("destroyed: RookConfigured %+v", cond)
	}
	if n, _ := moved(); n != 0 {
		t.Fatalf("destroyed: %d moved", n)
	}
	// The old OSD purged (the runbook's step): exactly one goes; right after, none more.
	now = now.Add(2 * time.Minute)
	run()
	answer("purged")
	if n, o := moved(); n != 1 || o != len(before)-1 {
		t.Fatalf("first release: %d moved, %d kept", n, o)
	}
	now = now.Add(30 * time.Second)
	run()
	if n, _ := moved(); n != 1 {
		t.Fatalf("30 s later: %d moved", n)
	}
	// The backfill of the new OSD changed Ceph's health: once Ceph answers again, the next goes.
	now = now.Add(3 * time.Minute)
	setCephHealth(t, cluster, "HEALTH_WARN", now.Add(-10*time.Second))
	run()
	answer("purged")
	if n, _ := moved(); n != 2 {
		t.Fatalf("after the first settled: %d moved", n)
	}
	for i := 0; i < len(before); i++ {
		now = now.Add(20 * time.Minute)
		run()
		answer("purged")
	}
	p, res = run()
	if n, o := moved(); n != len(before) || o != 0 {
		t.Fatalf("at the end: %d moved, %d kept", n, o)
	}
	if pods := probePods(t, ns, policy.Name); len(pods) != 0 {
		t.Errorf("at the end: %d probe pods left", len(pods))
	}
	// Only the other nodes' partitions remain to wait for.
	if cond := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured); cond == nil || cond.Reason != hybridstoragepolicy.ReasonWaitingForPartitions || res.RequeueAfter != 0 {
		t.Errorf("at the end: RookConfigured %+v, requeue %v", cond, res.RequeueAfter)
	}
	// Foreign entries survived every apply.
	if _, ok := storageNodes(t, getCephCluster(t, cluster))["hdd-node-1"]; !ok {
		t.Error("the admin's hdd-node-1 entry is gone")
	}
}

// policyOnItsOwnCluster publishes the fixture nodes under label and creates an Apply policy
// selecting them, writing into a CephCluster of its own namespace (whose default service
// account the probe pods run as).
func policyOnItsOwnCluster(t *testing.T, label string) (map[string]*simNode, *unstructured.Unstructured, *prismv1.HybridStoragePolicy) {
	t.Helper()
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	cluster := newCephCluster(t)
	withDefaultServiceAccount(t, cluster.GetNamespace())
	policy := newPolicy(label, prismv1.ModeApply)
	policy.Spec.CephCluster = prismv1.ObjectRef{Namespace: cluster.GetNamespace(), Name: cluster.GetName()}
	if err := env.Client.Create(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	return nodes, cluster, policy
}
