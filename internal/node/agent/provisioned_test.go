package agent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/internal/node/provision"
)

const fastPath = "/dev/disk/by-id/nvme-OPTANE"

func parts(states ...prismv1.PartitionState) []prismv1.PartitionStatus {
	var out []prismv1.PartitionStatus
	for i, s := range states {
		out = append(out, prismv1.PartitionStatus{Device: fastPath, Number: int32(i + 1), Label: "prism-db-0" + string(rune('0'+i)), State: s, Message: "msg " + string(s)})
	}
	return out
}

// withVolumes gives partition i (0-based) a DB volume in each state given, in order.
func withVolumes(ps []prismv1.PartitionStatus, states ...prismv1.DBVolumeState) []prismv1.PartitionStatus {
	for i, s := range states {
		ps[i].Volume = &prismv1.DBVolumeStatus{Path: "/dev/prism-db-x/prism-db-0" + string(rune('0'+i)), State: s, Message: "lvm " + string(s)}
	}
	return ps
}

func TestProvisionedCondition(t *testing.T) {
	const (
		R = prismv1.PartitionReady
		P = prismv1.PartitionPending
		X = prismv1.PartitionRefused
		F = prismv1.PartitionFailed
	)
	for _, tc := range []struct {
		name   string
		parts  []prismv1.PartitionStatus
		mode   prismv1.PolicyMode
		status metav1.ConditionStatus
		reason string
		msg    string
	}{
		{"all ready", parts(R, R, R), prismv1.ModeApply, metav1.ConditionTrue, ReasonPartitionsReady, "3 of 3 partitions on 1 fast devices ready"},
		{"all ready in dry run", parts(R, R), prismv1.ModeDryRun, metav1.ConditionTrue, ReasonPartitionsReady, "2 of 2"},
		{"pending", parts(R, P), prismv1.ModeApply, metav1.ConditionFalse, ReasonPartitionsPending, "1 Pending, first: " + fastPath + " partition 2 (prism-db-01): msg Pending"},
		{"dry run", parts(R, P, P), prismv1.ModeDryRun, metav1.ConditionFalse, ReasonDryRun, "2 would be created"},
		{"refused beats dry run", parts(P, X), prismv1.ModeDryRun, metav1.ConditionFalse, ReasonPartitionsRefused, "msg Refused"},
		{"failed beats refused", parts(X, F, P), prismv1.ModeApply, metav1.ConditionFalse, ReasonPartitionsFailed, "1 Failed, first: " + fastPath + " partition 2"},
		{"no mode is a dry run", parts(P), "", metav1.ConditionFalse, ReasonDryRun, `spec.mode ""`},
		{"volumes ready, or the partition an OSD's DB", withVolumes(parts(R, R, R), prismv1.DBVolumeReady, prismv1.DBVolumePartitionInUse), prismv1.ModeApply, metav1.ConditionTrue, ReasonPartitionsReady, "3 of 3"},
		{"a volume pending", withVolumes(parts(R, R), prismv1.DBVolumeReady, prismv1.DBVolumePending), prismv1.ModeApply, metav1.ConditionFalse, ReasonPartitionsPending,
			"1 of 2 partitions on 1 fast devices ready; 1 Pending, first: " + fastPath + " partition 2 (prism-db-01): volume /dev/prism-db-x/prism-db-01: lvm Pending"},
		{"a volume refused", withVolumes(parts(R, R), prismv1.DBVolumeRefused), prismv1.ModeApply, metav1.ConditionFalse, ReasonPartitionsRefused, "partition 1 (prism-db-00): volume /dev/prism-db-x/prism-db-00: lvm Refused"},
		{"a volume failed", withVolumes(parts(R), prismv1.DBVolumeFailed), prismv1.ModeApply, metav1.ConditionFalse, ReasonPartitionsFailed, "lvm Failed"},
		{"volumes to make in a dry run", withVolumes(parts(R, R), prismv1.DBVolumePending, prismv1.DBVolumePending), prismv1.ModeDryRun, metav1.ConditionFalse, ReasonDryRun, "2 would be created"},
	} {
		c := provisionedCondition(tc.parts, tc.mode)
		if c.Type != prismv1.ConditionProvisioned || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.msg) {
			t.Errorf("%s: %+v, want %s %s with %q", tc.name, c, tc.status, tc.reason, tc.msg)
		}
	}
}

func TestWithPartitionsAndWithoutPlan(t *testing.T) {
	st := nodeStatus(prismv1.StorageNodeStatus{}, report(), nil, t0, "v1")
	st = withPartitions(st, parts(prismv1.PartitionReady), 7, prismv1.ModeApply)
	c := meta.FindStatusCondition(st.Conditions, prismv1.ConditionProvisioned)
	if st.ObservedPlanGeneration != 7 || len(st.Partitions) != 1 || c == nil || c.ObservedGeneration != 7 || c.Status != metav1.ConditionTrue {
		t.Fatalf("withPartitions: %+v", st)
	}
	if meta.FindStatusCondition(st.Conditions, prismv1.ConditionInventoried) == nil {
		t.Fatal("withPartitions dropped the Inventoried condition")
	}
	many := make([]prismv1.PartitionStatus, 1030)
	for i := range many {
		many[i] = prismv1.PartitionStatus{State: prismv1.PartitionReady}
	}
	if big := withPartitions(st, many, 8, prismv1.ModeApply); len(big.Partitions) != maxPartitionStatuses {
		t.Fatalf("%d partitions kept, the API allows %d", len(big.Partitions), maxPartitionStatuses)
	}
	cleared := withoutPlan(st)
	if cleared.Partitions != nil || cleared.ObservedPlanGeneration != 0 || meta.FindStatusCondition(cleared.Conditions, prismv1.ConditionProvisioned) != nil ||
		meta.FindStatusCondition(cleared.Conditions, prismv1.ConditionInventoried) == nil {
		t.Fatalf("withoutPlan: %+v", cleared)
	}
}

func TestPlanOutdated(t *testing.T) {
	plan := &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: fastPath}}}
	for _, tc := range []struct {
		name string
		sn   prismv1.StorageNode
		want bool
	}{
		{"new plan", prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: prismv1.StorageNodeSpec{Plan: plan}}, true},
		{"plan carried out", prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: prismv1.StorageNodeSpec{Plan: plan}, Status: prismv1.StorageNodeStatus{ObservedPlanGeneration: 2}}, false},
		{"never had a plan", prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, false},
		{"plan removed", prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: prismv1.StorageNodeStatus{ObservedPlanGeneration: 2, Partitions: parts(prismv1.PartitionReady)}}, true},
	} {
		if got := planOutdated(&tc.sn); got != tc.want {
			t.Errorf("%s: planOutdated = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// agentFixture is a Publisher on a fake API server whose StorageNode carries a plan.
type agentFixture struct {
	p            *Publisher
	c            client.Client
	patches      atomic.Int32
	inventories  atomic.Int32
	provisions   atomic.Int32
	provisionOut provision.Result
	invErr       error
}

func newAgentFixture(t *testing.T, sn *prismv1.StorageNode) *agentFixture {
	f := &agentFixture{}
	f.c = fake.NewClientBuilder().WithScheme(fakeScheme()).WithObjects(sn).WithStatusSubresource(&prismv1.StorageNode{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			f.patches.Add(1)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	f.p = &Publisher{
		Client: clientAPI{f.c}, NodeName: sn.Name, Version: "test", Period: time.Hour, Heartbeat: time.Hour,
		Now: func() time.Time { return t0 },
		Inventory: func(context.Context) (inventory.Report, error) {
			f.inventories.Add(1)
			return report(), f.invErr
		},
		Actuator: &Actuator{Provision: func(_ context.Context, plan *prismv1.NodePlan, devices []prismv1.Device, mode prismv1.PolicyMode) provision.Result {
			f.provisions.Add(1)
			if plan == nil || len(devices) != 4 {
				t.Errorf("Provision got plan %v and %d devices", plan, len(devices))
			}
			return f.provisionOut
		}},
	}
	return f
}

func (f *agentFixture) get(t *testing.T) *prismv1.StorageNode {
	t.Helper()
	sn := &prismv1.StorageNode{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Name: f.p.NodeName}, sn); err != nil {
		t.Fatal(err)
	}
	return sn
}

func storageNode(generation int64, mode prismv1.PolicyMode) *prismv1.StorageNode {
	return &prismv1.StorageNode{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", Generation: generation},
		Spec: prismv1.StorageNodeSpec{PolicyName: "p", Mode: mode, Plan: &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{
			StablePath: fastPath, SlotSizeBytes: 1 << 31,
			Slots: []prismv1.DBSlot{{Index: 0, Partition: prismv1.PlannedPartition{Number: 1, Label: "prism-db-00", StartBytes: 1 << 20, SizeBytes: 1 << 31}}},
		}}}},
	}
}

func TestSyncProvisionsAndWritesOnePatch(t *testing.T) {
	ctx := context.Background()
	f := newAgentFixture(t, storageNode(3, prismv1.ModeApply))
	f.provisionOut = provision.Result{Partitions: parts(prismv1.PartitionReady), Changed: true}
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sn := f.get(t)
	c := meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionProvisioned)
	if f.patches.Load() != 1 || sn.Status.ObservedPlanGeneration != 3 || len(sn.Status.Partitions) != 1 || sn.Status.Partitions[0].State != prismv1.PartitionReady ||
		c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonPartitionsReady || len(sn.Status.Devices) != 4 {
		t.Fatalf("after one sync: %d patches, status %+v", f.patches.Load(), sn.Status)
	}
	// The provisioner changed the host: the devices are inventoried again before the write.
	if f.inventories.Load() != 2 {
		t.Errorf("%d inventories, want 2 (before and after the partitions were made)", f.inventories.Load())
	}

	// Nothing changed: no write, and the poll sees nothing to do.
	f.provisionOut.Changed = false
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if f.patches.Load() != 1 {
		t.Errorf("an unchanged status was written again (%d patches)", f.patches.Load())
	}
	if f.p.planOutdated(ctx) {
		t.Error("planOutdated after the plan was carried out")
	}
}

func TestSyncSkipsProvisioningWhenTheInventoryFails(t *testing.T) {
	f := newAgentFixture(t, storageNode(1, prismv1.ModeApply))
	f.invErr = errors.New("listing block devices: permission denied")
	if err := f.p.Sync(context.Background()); err == nil {
		t.Fatal("want the inventory error")
	}
	if f.provisions.Load() != 0 {
		t.Fatal("provisioned from a failed inventory")
	}
	if sn := f.get(t); sn.Status.ObservedPlanGeneration != 0 || sn.Status.Partitions != nil {
		t.Fatalf("status %+v", sn.Status)
	}
}

func TestSyncDryRunAndPlanRemoval(t *testing.T) {
	ctx := context.Background()
	f := newAgentFixture(t, storageNode(1, prismv1.ModeDryRun))
	f.provisionOut = provision.Result{Partitions: parts(prismv1.PartitionPending)}
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sn := f.get(t)
	if c := meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionProvisioned); c == nil || c.Reason != ReasonDryRun || c.Status != metav1.ConditionFalse {
		t.Fatalf("dry run condition %+v", c)
	}

	// The operator removes the plan: the poll notices, the next sync clears what it left.
	sn.Spec.Plan, sn.Generation = nil, 2
	if err := f.c.Update(ctx, sn); err != nil {
		t.Fatal(err)
	}
	if !f.p.planOutdated(ctx) {
		t.Fatal("planOutdated = false after the plan was removed")
	}
	before := f.provisions.Load()
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sn = f.get(t)
	if f.provisions.Load() != before || sn.Status.Partitions != nil || sn.Status.ObservedPlanGeneration != 0 ||
		meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionProvisioned) != nil {
		t.Fatalf("after removing the plan: status %+v", sn.Status)
	}
	if f.p.planOutdated(ctx) {
		t.Fatal("planOutdated still true")
	}
}

// The poll wakes Run when, and only when, the spec has a generation the status has not seen.
func TestWaitWakesOnSpecChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newAgentFixture(t, storageNode(1, prismv1.ModeApply))
	f.provisionOut = provision.Result{Partitions: parts(prismv1.PartitionReady)}
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	poll := make(chan time.Time)
	woke := make(chan bool, 1)
	go func() { woke <- f.p.wait(ctx, nil, poll) }()
	poll <- time.Now() // generation 1 is carried out: keep waiting
	select {
	case <-woke:
		t.Fatal("woke without a spec change")
	case <-time.After(100 * time.Millisecond):
	}
	sn := f.get(t)
	sn.Spec.Mode, sn.Generation = prismv1.ModeDryRun, 2
	if err := f.c.Update(ctx, sn); err != nil {
		t.Fatal(err)
	}
	poll <- time.Now()
	select {
	case ok := <-woke:
		if !ok {
			t.Fatal("wait returned false")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not wake after the spec changed")
	}
	go func() { woke <- f.p.wait(ctx, nil, nil) }()
	cancel()
	if <-woke {
		t.Fatal("wait returned true after the context ended")
	}
}
