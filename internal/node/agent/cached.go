package agent

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/opencas"
)

// Condition reasons for Cached.
const (
	// ReasonCachesRunning: every planned cache runs with all its cores ready.
	ReasonCachesRunning = "CachesRunning"
	// ReasonCachesPending: a cache or core is not there yet (its partition, a step to come, a retry).
	ReasonCachesPending = "CachesPending"
	// ReasonCacheIncomplete: a cache runs without one of its core devices.
	ReasonCacheIncomplete = "CacheIncomplete"
	// ReasonCacheFailed: a cache device failed; IO to its cores that needs it fails.
	ReasonCacheFailed = "CacheFailed"
	// ReasonCachesRefused: Prism will not start a cache (the partition holds data).
	ReasonCachesRefused = "CachesRefused"
)

// CacheFunc realises a node plan's caches after its partitions; internal/node/opencas's
// Runner.ReconcileNode is the real one.
type CacheFunc func(ctx context.Context, plan *prismv1.NodePlan, devices []prismv1.Device, partitions []prismv1.PartitionStatus, mode prismv1.PolicyMode) opencas.NodeResult

// withCaches records one cache pass in the status: the caches, the node's α_cache and the Cached
// condition. A plan without a cache clears them. Pure.
func withCaches(st prismv1.StorageNodeStatus, res opencas.NodeResult, planned bool, generation int64, mode prismv1.PolicyMode) prismv1.StorageNodeStatus {
	st = *st.DeepCopy()
	prev := st.Caches
	st.Caches, st.CacheWriteReduction = slices.Clone(res.Caches), res.WriteReduction
	for i := range st.Caches {
		c := &st.Caches[i]
		j := slices.IndexFunc(prev, func(p prismv1.CacheStatus) bool { return p.FastDevice == c.FastDevice })
		if j < 0 || !slices.Contains(res.Unobserved, c.FastDevice) {
			continue
		}
		// A cache this pass could not observe is not known to have lost its cores: keep what
		// the last pass saw of it (id, cores, statistics), as nodeStatus keeps the last good
		// devices, with why it is not known now. Otherwise the operator would take its Ready
		// cores for gone, and withdraw their device sets and delete their volumes.
		kept := prev[j]
		kept.State, kept.Message = c.State, c.Message
		*c = kept
	}
	if !planned {
		meta.RemoveStatusCondition(&st.Conditions, prismv1.ConditionCached)
		return st
	}
	c := cachedCondition(res.Caches, mode)
	c.ObservedGeneration = generation
	meta.SetStatusCondition(&st.Conditions, c)
	return st
}

// cachedCondition summarises the caches: True only when every one runs. A failure outranks
// a refusal, which outranks an incomplete cache, a dry run and waiting.
func cachedCondition(caches []prismv1.CacheStatus, mode prismv1.PolicyMode) metav1.Condition {
	count := map[prismv1.CacheState]int{}
	first := map[prismv1.CacheState]prismv1.CacheStatus{}
	for _, c := range caches {
		if count[c.State] == 0 {
			first[c.State] = c
		}
		count[c.State]++
	}
	cond := metav1.Condition{Type: prismv1.ConditionCached, Status: metav1.ConditionFalse}
	summary := fmt.Sprintf("%d of %d caches running", count[prismv1.CacheRunning], len(caches))
	example := func(s prismv1.CacheState) string {
		c := first[s]
		return fmt.Sprintf("%s; %d %s, first: %s: %s", summary, count[s], s, c.FastDevice, c.Message)
	}
	switch {
	case len(caches) > 0 && count[prismv1.CacheRunning] == len(caches):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonCachesRunning, summary
	case count[prismv1.CacheFailed] > 0:
		cond.Reason, cond.Message = ReasonCacheFailed, example(prismv1.CacheFailed)
	case count[prismv1.CacheRefused] > 0:
		cond.Reason, cond.Message = ReasonCachesRefused, example(prismv1.CacheRefused)
	case count[prismv1.CacheIncomplete] > 0:
		cond.Reason, cond.Message = ReasonCacheIncomplete, example(prismv1.CacheIncomplete)
	case mode != prismv1.ModeApply:
		cond.Reason, cond.Message = ReasonDryRun, fmt.Sprintf("dry run (spec.mode %q), nothing changed: %s", mode, summary)
	case len(caches) == 0:
		cond.Reason, cond.Message = ReasonCachesPending, "no fast device of the plan has a cache partition"
	default:
		cond.Reason, cond.Message = ReasonCachesPending, example(prismv1.CachePending)
	}
	return cond
}
