package v1alpha1

import (
	"slices"
	"strconv"
)

// The node agent and the operator both read a plan with these; they live beside the types so
// that the agent follows the plan without importing the planner.

// PartitionSuffix comes between a device's by-id link and a partition number in the
// partition's link (udev's rule).
const PartitionSuffix = "-part"

// PartitionPath is the udev by-id link of partition number on a device named by its by-id path.
func PartitionPath(stablePath string, number int32) string {
	return stablePath + PartitionSuffix + strconv.Itoa(int(number))
}

// CacheCores are the capacity devices a fast device's cache fronts: the data devices of its
// slots, in slot order (so core ids follow slot indexes as devices are added).
func (f FastDevicePlan) CacheCores() []string {
	var cores []string
	slots := slices.Clone(f.Slots)
	slices.SortFunc(slots, func(a, b DBSlot) int { return int(a.Index - b.Index) })
	for _, s := range slots {
		if s.DataDevice != "" {
			cores = append(cores, s.DataDevice)
		}
	}
	return cores
}
