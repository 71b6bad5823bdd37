package envtest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
)

// addCapacityDrive has node's agent report one more QLC drive, a copy of its first capacity
// drive with a new serial and stable path, which it returns.
func addCapacityDrive(t *testing.T, node string) string {
	t.Helper()
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: node}, sn); err != nil {
		t.Fatal(err)
	}
	for _, d := range sn.Status.Devices {
		if d.Tier != prismv1.TierCapacity {
			continue
		}
		d.Name, d.Path, d.StablePath, d.Serial = "zz-new", "/dev/zz-new", d.StablePath+"NEW", d.Serial+"NEW"
		if d.Identity != nil {
			id := *d.Identity
			id.WWID, id.Serial, id.DiskSeq = "", id.Serial+"NEW", 0
			d.Identity = &id
		}
		// The API keeps the list sorted by name, each once: "zz-new" sorts last.
		sn.Status.Devices = append(sn.Status.Devices, d)
		sn.Status.CapacityDevices++
		sn.Status.EligibleDevices++
		if err := env.Client.Status().Update(context.Background(), sn); err != nil {
			t.Fatal(err)
		}
		return d.StablePath
	}
	t.Fatalf("node %s reports no capacity drive", node)
	return ""
}

// TestNewDriveWaitsWhileAnOSDOfItsNodeIsDestroyed: a drive added to node a, which has OSD
// entries, is written to the CephCluster only once the operator's probe (the test answers as
// the kubelet, with states recorded on Ceph 16) says no OSD is destroyed under a's CRUSH host:
// Rook v1.21 would prepare it as the destroyed id (decision 0061). Without answers and while
// osd.0 is destroyed it waits, with the RookConfigured condition NewOSDsHeld, and a Warning
// Event naming the purge while osd.0 is destroyed; node a's other entries stay as they are.
func TestNewDriveWaitsWhileAnOSDOfItsNodeIsDestroyed(t *testing.T) {
	ctx := context.Background()
	nodes, cluster, policy := policyOnItsOwnCluster(t, unique("newdrive"))
	ns := cluster.GetNamespace()
	now := time.Now().UTC().Truncate(time.Second)
	r := &hybridstoragepolicy.Reconciler{Client: env.Client, Now: func() time.Time { return now }, Recorder: operatorRecorder(t)}
	run := func() *prismv1.HybridStoragePolicy {
		t.Helper()
		for i := 0; i < 2; i++ {
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: policy.Name}}); err != nil {
				t.Fatal(err)
			}
		}
		p := &prismv1.HybridStoragePolicy{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: policy.Name}, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	answer := func(state string) *prismv1.HybridStoragePolicy {
		t.Helper()
		for _, p := range probePods(t, ns, policy.Name) {
			if p.Status.Phase == corev1.PodPending {
				finishProbe(t, &p, now, cephRecording(t, state))
			}
		}
		return run()
	}
	rookConfigured := func(p *prismv1.HybridStoragePolicy) string {
		c := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured)
		if c == nil {
			return "none"
		}
		return c.Reason + ": " + c.Message
	}
	a := nodes["optane-qlc-a"].name
	run()
	markProvisioned(t, a)
	run()
	before := metadataDevices(t, getCephCluster(t, cluster), a)
	if len(before) < 3 {
		t.Fatalf("node a's OSDs before the new drive: %v", before)
	}

	added := addCapacityDrive(t, a)
	run()
	markProvisioned(t, a)
	p := run()
	entries := metadataDevices(t, getCephCluster(t, cluster), a)
	if _, in := entries[added]; in || len(entries) != len(before) || !strings.HasPrefix(rookConfigured(p), hybridstoragepolicy.ReasonNewOSDsHeld+": ") ||
		!strings.Contains(rookConfigured(p), a+" "+added+": a new drive; waiting: no answers from Ceph for "+a+" yet") {
		t.Fatalf("without answers: entries %v; RookConfigured %s", entries, rookConfigured(p))
	}
	rookMadeProbeKey(t, ns)
	run()
	if pods := probePods(t, ns, policy.Name); len(pods) != 1 {
		t.Fatalf("without answers: %d probe pods, want one for node a", len(pods))
	}

	p = answer("destroyed")
	entries = metadataDevices(t, getCephCluster(t, cluster), a)
	purge := "Ceph has osd.0 destroyed under " + a + "'s CRUSH host"
	if _, in := entries[added]; in || !strings.Contains(rookConfigured(p), purge) || !strings.Contains(rookConfigured(p), "ceph osd purge 0 --yes-i-really-mean-it") {
		t.Fatalf("osd.0 destroyed: entries %v; RookConfigured %s", entries, rookConfigured(p))
	}
	for dev, m := range before {
		if entries[dev] != m {
			t.Errorf("osd.0 destroyed: %s's entry changed from %s to %s", dev, m, entries[dev])
		}
	}
	wantEvent(t, policy.Name, hybridstoragepolicy.EventNewOSDsHeld, "new drives of node "+a+" not written: "+purge)

	// The admin purged osd.0: the next probe says so, and the drive is written.
	now = now.Add(2 * time.Minute)
	run()
	p = answer("purged")
	entries = metadataDevices(t, getCephCluster(t, cluster), a)
	if _, in := entries[added]; !in || strings.HasPrefix(rookConfigured(p), hybridstoragepolicy.ReasonNewOSDsHeld) {
		t.Fatalf("osd.0 purged: entries %v; RookConfigured %s", entries, rookConfigured(p))
	}
	p = run()
	if pods := probePods(t, ns, policy.Name); len(pods) != 0 {
		t.Errorf("once nothing waits: %d probe pods left (RookConfigured %s)", len(pods), rookConfigured(p))
	}
}
