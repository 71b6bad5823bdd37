package agent

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/provision"
)

// Condition reasons for Provisioned.
const (
	// ReasonPartitionsReady: every planned partition exists as planned.
	ReasonPartitionsReady = "PartitionsReady"
	// ReasonPartitionsPending: some partitions are not made yet (a device is missing, or a
	// step limit stopped the run); the agent goes on trying.
	ReasonPartitionsPending = "PartitionsPending"
	// ReasonPartitionsRefused: a fast device holds something Prism did not create.
	ReasonPartitionsRefused = "PartitionsRefused"
	// ReasonPartitionsFailed: a host tool failed; the agent retries.
	ReasonPartitionsFailed = "PartitionsFailed"
	// ReasonDryRun: spec.mode is not Apply, so the agent only reports what it would do.
	ReasonDryRun = "DryRun"
)

// maxPartitionStatuses is the API's limit on status.partitions.
const maxPartitionStatuses = 1024

// ProvisionFunc realises a node plan on the host and reports every planned partition.
// provision.Runner.Reconcile is the real one.
type ProvisionFunc func(ctx context.Context, plan *prismv1.NodePlan, devices []prismv1.Device, mode prismv1.PolicyMode) provision.Result

// withPartitions records one provisioning run in the status: the partitions, the generation
// whose plan they reflect, and the Provisioned condition. Pure.
func withPartitions(st prismv1.StorageNodeStatus, parts []prismv1.PartitionStatus, generation int64, mode prismv1.PolicyMode) prismv1.StorageNodeStatus {
	st = *st.DeepCopy()
	cond := provisionedCondition(parts, mode)
	cond.ObservedGeneration = generation
	if len(parts) > maxPartitionStatuses {
		cond.Message = fmt.Sprintf("%s (status lists the first %d of %d partitions)", cond.Message, maxPartitionStatuses, len(parts))
		parts = parts[:maxPartitionStatuses]
	}
	st.Partitions = parts
	st.ObservedPlanGeneration = generation
	meta.SetStatusCondition(&st.Conditions, cond)
	return st
}

// withoutPlan clears what a plan left in the status once spec.plan is gone. Pure.
func withoutPlan(st prismv1.StorageNodeStatus) prismv1.StorageNodeStatus {
	st = *st.DeepCopy()
	st.Partitions = nil
	st.ObservedPlanGeneration = 0
	meta.RemoveStatusCondition(&st.Conditions, prismv1.ConditionProvisioned)
	st.Caches, st.CacheWriteReduction = nil, ""
	meta.RemoveStatusCondition(&st.Conditions, prismv1.ConditionCached)
	return st
}

// provisionedCondition summarises the partitions: True only when every one is Ready, with its
// volume when it has one (withVolumeState). A
// failure outranks a refusal, which outranks a dry run, which outranks waiting.
func provisionedCondition(parts []prismv1.PartitionStatus, mode prismv1.PolicyMode) metav1.Condition {
	count := map[prismv1.PartitionState]int{}
	first := map[prismv1.PartitionState]prismv1.PartitionStatus{}
	devices := map[string]bool{}
	for _, p := range parts {
		p = withVolumeState(p)
		if count[p.State] == 0 {
			first[p.State] = p
		}
		count[p.State]++
		devices[p.Device] = true
	}
	c := metav1.Condition{Type: prismv1.ConditionProvisioned, Status: metav1.ConditionFalse}
	summary := fmt.Sprintf("%d of %d partitions on %d fast devices ready", count[prismv1.PartitionReady], len(parts), len(devices))
	example := func(s prismv1.PartitionState) string {
		p := first[s]
		return fmt.Sprintf("%s; %d %s, first: %s partition %d (%s): %s", summary, count[s], s, p.Device, p.Number, p.Label, p.Message)
	}
	switch {
	case count[prismv1.PartitionReady] == len(parts):
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonPartitionsReady, summary
	case count[prismv1.PartitionFailed] > 0:
		c.Reason, c.Message = ReasonPartitionsFailed, example(prismv1.PartitionFailed)
	case count[prismv1.PartitionRefused] > 0:
		c.Reason, c.Message = ReasonPartitionsRefused, example(prismv1.PartitionRefused)
	case mode != prismv1.ModeApply:
		c.Reason, c.Message = ReasonDryRun, fmt.Sprintf("dry run (spec.mode %q), nothing changed: %s; %d would be created or re-read", mode, summary, count[prismv1.PartitionPending])
	default:
		c.Reason, c.Message = ReasonPartitionsPending, example(prismv1.PartitionPending)
	}
	return c
}

// withVolumeState is the partition as Provisioned counts it: a DB slot partition that is
// Ready but whose logical volume is not (decision 0036) is not ready for an OSD, and takes
// the volume's state and message. A volume Ready, or PartitionInUse (an OSD's DB on the
// partition itself), leaves the partition Ready.
func withVolumeState(p prismv1.PartitionStatus) prismv1.PartitionStatus {
	v := p.Volume
	if p.State != prismv1.PartitionReady || v == nil || v.State == prismv1.DBVolumeReady || v.State == prismv1.DBVolumePartitionInUse {
		return p
	}
	p.Message = fmt.Sprintf("volume %s: %s", v.Path, v.Message)
	switch v.State {
	case prismv1.DBVolumeRefused:
		p.State = prismv1.PartitionRefused
	case prismv1.DBVolumeFailed:
		p.State = prismv1.PartitionFailed
	default:
		p.State = prismv1.PartitionPending
	}
	return p
}

// planOutdated reports whether the status does not reflect the StorageNode's spec: a plan
// (or mode) the agent has not carried out for this generation, or leftovers of a removed
// plan. Run polls it with one GET.
func planOutdated(sn *prismv1.StorageNode) bool {
	if sn.Spec.Plan != nil {
		return sn.Generation != sn.Status.ObservedPlanGeneration
	}
	return len(sn.Status.Partitions) > 0 || sn.Status.ObservedPlanGeneration != 0 ||
		meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionProvisioned) != nil
}
