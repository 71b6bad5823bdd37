package agent

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/opencas"
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
