// Package agent keeps a node's StorageNode status current from the host's inventory.
package agent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/inventory"
)

// Condition reasons for Inventoried.
const (
	ReasonInventoryTaken  = "InventoryTaken"
	ReasonInventoryFailed = "InventoryFailed"
)

// nodeStatus computes the StorageNode status from one inventory attempt. Pure.
func nodeStatus(prev prismv1.StorageNodeStatus, rep inventory.Report, invErr error, now time.Time, version string) prismv1.StorageNodeStatus {
	st := *prev.DeepCopy()
	st.AgentVersion = version
	if invErr != nil {
		// Keep the last good devices: a transient read error must not make devices vanish.
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: prismv1.ConditionInventoried, Status: metav1.ConditionFalse,
			Reason: ReasonInventoryFailed, Message: invErr.Error(),
		})
		return st
	}
	st.Devices = rep.Devices
	st.FastDevices, st.CapacityDevices, st.EligibleDevices = 0, 0, 0
	for _, d := range rep.Devices {
		switch d.Tier {
		case prismv1.TierFast:
			st.FastDevices++
		case prismv1.TierCapacity:
			st.CapacityDevices++
		}
		if d.Eligibility.Eligible {
			st.EligibleDevices++
		}
	}
	msg := fmt.Sprintf("%d devices: %d fast, %d capacity, %d eligible", len(rep.Devices), st.FastDevices, st.CapacityDevices, st.EligibleDevices)
	if len(rep.Warnings) > 0 {
		msg += fmt.Sprintf("; %d warnings, first: %s", len(rep.Warnings), rep.Warnings[0])
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: prismv1.ConditionInventoried, Status: metav1.ConditionTrue, Reason: ReasonInventoryTaken, Message: msg,
	})
	t := metav1.NewTime(now)
	st.LastInventoryTime = &t
	return st
}

// needsWrite says whether the new status must be written: something changed other than the
// inventory time, or the last write is older than the heartbeat (so staleness is visible).
func needsWrite(prev, next prismv1.StorageNodeStatus, heartbeat time.Duration) bool {
	if prev.LastInventoryTime == nil || next.LastInventoryTime == nil {
		return true
	}
	a, b := prev.DeepCopy(), next.DeepCopy()
	a.LastInventoryTime, b.LastInventoryTime = nil, nil
	if !equality.Semantic.DeepEqual(a, b) {
		return true
	}
	return next.LastInventoryTime.Sub(prev.LastInventoryTime.Time) >= heartbeat
}

// sortLists orders the status lists by their key, as the CRD requires of these atomic lists
// (decision 0015): one order for one observation, and no duplicate keys.
func sortLists(s *prismv1.StorageNodeStatus) {
	slices.SortStableFunc(s.Devices, func(a, b prismv1.Device) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(s.Caches, func(a, b prismv1.CacheStatus) int { return strings.Compare(a.FastDevice, b.FastDevice) })
	for i := range s.Caches {
		slices.SortStableFunc(s.Caches[i].Cores, func(a, b prismv1.CacheCoreStatus) int { return strings.Compare(a.Device, b.Device) })
	}
	slices.SortStableFunc(s.OSDs, func(a, b prismv1.OSDStatus) int { return int(a.ID) - int(b.ID) })
}
