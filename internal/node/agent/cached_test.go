package agent

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/internal/node/opencas"
	"github.com/prism-storage/prism/internal/node/provision"
	"github.com/prism-storage/prism/internal/plan/rook"
)

func TestCachedCondition(t *testing.T) {
	c := func(dev string, s prismv1.CacheState, msg string) prismv1.CacheStatus {
		return prismv1.CacheStatus{FastDevice: dev, State: s, Message: msg}
	}
	tests := []struct {
		name   string
		caches []prismv1.CacheStatus
		mode   prismv1.PolicyMode
		status metav1.ConditionStatus
		reason string
		msg    string
	}{
		{"all running", []prismv1.CacheStatus{c("a", prismv1.CacheRunning, ""), c("b", prismv1.CacheRunning, "")}, prismv1.ModeApply,
			metav1.ConditionTrue, ReasonCachesRunning, "2 of 2 caches running"},
		{"failure outranks the rest", []prismv1.CacheStatus{c("a", prismv1.CacheRefused, "xfs"), c("b", prismv1.CacheFailed, "cache device error")}, prismv1.ModeApply,
			metav1.ConditionFalse, ReasonCacheFailed, "0 of 2 caches running; 1 Failed, first: b: cache device error"},
		{"refused", []prismv1.CacheStatus{c("a", prismv1.CacheRunning, ""), c("b", prismv1.CacheRefused, "holds xfs")}, prismv1.ModeApply,
			metav1.ConditionFalse, ReasonCachesRefused, "1 of 2 caches running; 1 Refused, first: b: holds xfs"},
		{"incomplete", []prismv1.CacheStatus{c("a", prismv1.CacheIncomplete, "core gone")}, prismv1.ModeApply,
			metav1.ConditionFalse, ReasonCacheIncomplete, "0 of 1 caches running; 1 Incomplete, first: a: core gone"},
		{"dry run", []prismv1.CacheStatus{c("a", prismv1.CachePending, "dry run: 9 steps")}, prismv1.ModeDryRun,
			metav1.ConditionFalse, ReasonDryRun, `dry run (spec.mode "DryRun"), nothing changed: 0 of 1 caches running`},
		{"pending", []prismv1.CacheStatus{c("a", prismv1.CachePending, "waiting for cache partition 3 (Pending)")}, prismv1.ModeApply,
			metav1.ConditionFalse, ReasonCachesPending, "0 of 1 caches running; 1 Pending, first: a: waiting for cache partition 3 (Pending)"},
		{"no cache partition", nil, prismv1.ModeApply, metav1.ConditionFalse, ReasonCachesPending, "no fast device of the plan has a cache partition"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := cachedCondition(tc.caches, tc.mode)
			if got.Type != prismv1.ConditionCached || got.Status != tc.status || got.Reason != tc.reason || got.Message != tc.msg {
				t.Errorf("got %s %s %q, want %s %s %q", got.Status, got.Reason, got.Message, tc.status, tc.reason, tc.msg)
			}
		})
	}
}

func TestWithCaches(t *testing.T) {
	res := opencas.NodeResult{Caches: []prismv1.CacheStatus{{FastDevice: "a", CacheID: 1, State: prismv1.CacheRunning, WriteReduction: "0.5000"}}, WriteReduction: "0.5000"}
	st := withCaches(prismv1.StorageNodeStatus{}, res, true, 4, prismv1.ModeApply)
	cond := meta.FindStatusCondition(st.Conditions, prismv1.ConditionCached)
	if len(st.Caches) != 1 || st.CacheWriteReduction != "0.5000" || cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != 4 {
		t.Fatalf("status: %+v", st)
	}
	// The plan drops its cache: the caches and the condition go.
	cleared := withCaches(st, opencas.NodeResult{}, false, 5, prismv1.ModeApply)
	if len(cleared.Caches) != 0 || cleared.CacheWriteReduction != "" || meta.FindStatusCondition(cleared.Conditions, prismv1.ConditionCached) != nil {
		t.Errorf("after the cache left the plan: %+v", cleared)
	}
	if len(st.Caches) != 1 {
		t.Error("withCaches changed its input")
	}
}

// casadmDown fails every casadm call, as a casadm that times out or a module being reloaded.
type casadmDown struct{}

func (casadmDown) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	return nil, &hostexec.ExitError{Argv: argv, ExitCode: 1, Stderr: "Error: timeout while waiting for the cache manager"}
}

// A pass that cannot observe a cache (casadm -L fails) knows nothing of it: the status keeps
// the cores last seen, as it keeps the devices of the last good inventory, so the operator
// neither withdraws the device sets of Ready cores nor deletes their volumes. Before, the
// status lost its cores, and ClaimOSDsOf held every OSD of the cache ("not a core of its
// cache yet"): the operator dropped the unclaimed sets and deleted their volumes.
func TestActKeepsTheCoresWhenTheCacheCannotBeObserved(t *testing.T) {
	const q1 = "/dev/disk/by-id/wwn-0x5000000000000001"
	sn := storageNode(2, prismv1.ModeApply)
	f := &sn.Spec.Plan.FastDevices[0]
	f.CacheID, f.Cache = 1, &prismv1.PlannedPartition{Number: 2, Label: "prism-cache", StartBytes: 1<<31 + 1<<20, SizeBytes: 1 << 30}
	f.Slots[0].DataDevice = q1
	sn.Spec.Plan.Cache = &prismv1.NodeCachePlan{Mode: prismv1.CacheWriteBack, LineSizeKiB: 4}
	sn.Status = prismv1.StorageNodeStatus{
		Devices: []prismv1.Device{{Name: "sda", StablePath: q1, SizeBytes: 8 << 40}},
		Caches: []prismv1.CacheStatus{{FastDevice: fastPath, CacheID: 1, State: prismv1.CacheRunning,
			Cores: []prismv1.CacheCoreStatus{{Device: q1, CoreID: 1, ExportedObject: "/dev/cas1-1", State: prismv1.CoreReady}}}},
	}
	ready := []prismv1.PartitionStatus{
		{Device: fastPath, Number: 1, Label: "prism-db-00", Path: fastPath + "-part1", State: prismv1.PartitionReady},
		{Device: fastPath, Number: 2, Label: "prism-cache", Path: fastPath + "-part2", State: prismv1.PartitionReady},
	}
	a := &Actuator{
		Provision: func(context.Context, *prismv1.NodePlan, []prismv1.Device, prismv1.PolicyMode) provision.Result {
			return provision.Result{Partitions: ready}
		},
		Cache: opencas.Runner{Exec: casadmDown{}, HostRoot: t.TempDir()}.ReconcileNode,
	}
	rep := inventory.Report{Devices: sn.Status.Devices}
	next, _ := a.Act(context.Background(), sn, rep, *sn.Status.DeepCopy(), nil, nil)
	if len(next.Caches) != 1 || len(next.Caches[0].Cores) != 1 || next.Caches[0].Cores[0].State != prismv1.CoreReady ||
		!strings.Contains(next.Caches[0].Message, "timeout while waiting for the cache manager") {
		t.Fatalf("after a pass that could not observe the cache: %+v", next.Caches)
	}
	if osds := rook.ClaimOSDsOf(sn.Name, *sn.Spec.Plan, next); len(osds.Ready) != 1 || len(osds.Held) != 0 {
		t.Errorf("the operator reads OSDs ready %+v, held %+v: want the Ready core's OSD kept", osds.Ready, osds.Held)
	}
}
