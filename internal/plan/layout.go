package plan

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Partitioning constants. GPT keeps its primary table in the first MiB and its backup in the
// last; every partition starts and ends on a MiB boundary (good for every flash page size).
const (
	MiB = prismv1.MiB
	GiB = int64(1) << 30
	// MinSlotBytes is the smallest DB slot Prism creates (the CRD's minimum of spec.db.size and
	// slotSizeBytes; see prismv1.MinDBSlotBytes for why).
	MinSlotBytes = prismv1.MinDBSlotBytes
	// MaxSlotBytes is the largest DB slot Prism creates (the CRD's maximum).
	MaxSlotBytes = prismv1.MaxDBSlotBytes
	// MinCacheBytes is the smallest cache partition worth creating.
	MinCacheBytes = 1 * GiB
	// DefaultPercentOfData is the slot size when the policy gives none: Ceph's guidance is 1-4 %
	// of the data device for RBD; 2 % keeps several QLC drives per Optane.
	DefaultPercentOfData = 2
	// WarnBelowPercent is where a slot is small enough that RocksDB will likely spill to QLC.
	WarnBelowPercent = 1.0

	slotLabelPrefix = "prism-db-"
	cacheLabel      = "prism-cache"
)

// LayoutInput is everything the planner needs for one node.
type LayoutInput struct {
	Selection prismv1.NodeSelection
	// Devices is the node's inventory, for sizes.
	Devices []prismv1.Device
	Spec    *prismv1.HybridStoragePolicySpec
	// Previous is the plan already written for the node; existing slots never move.
	Previous *prismv1.NodePlan
	// Partitions are what the node's agent reports of the previous plan's partitions (nil
	// when unknown): a slot whose data device is gone is freed only when its agent reported
	// it Empty (SlotHeld).
	Partitions []prismv1.PartitionStatus
}

// Layout is one node's plan with every decision the planner could not carry out.
type Layout struct {
	Plan prismv1.NodePlan
	// Unplaced are capacity devices left without a DB slot, with the reason.
	Unplaced []prismv1.RejectedDevice
	// Problems block applying the plan (a fast device too small for one slot, a slot below the minimum).
	Problems []string
	// Warnings do not block (a slot below 1 % of its data device).
	Warnings []string
}

// PlanLayout pairs each selected capacity device with a DB slot on a selected fast device.
// Existing slots keep their fast device, index, offset and size; new capacity devices take
// the lowest free slot on the least-loaded fast device; a removed device's slot becomes free
// (and is where its replacement goes) once its agent reports it Empty. Pure and deterministic.
func PlanLayout(in LayoutInput) Layout {
	var out Layout
	capacity := stablePaths(in.Selection.Capacity)
	fast := stablePaths(in.Selection.Fast)
	if len(fast) == 0 || len(capacity) == 0 {
		return out
	}
	sizes := sizesOf(in.Devices, capacity, fast)
	slotSize := wantedSlotSize(in.Spec, sizes.capacity)
	if slices.Contains(sizes.capacity, 0) && in.Spec.DB.Size == nil {
		// A selected device of size 0 is one whose size could not be read (a device that
		// reads as 0 is refused by MinimumSize, unless the plan keeps it because its record
		// is partial): it may be the largest, so the percentage is of an unknown size. The
		// slots keep the size the plan already has, if it has any.
		slotSize = cmp.Or(previousSlotSize(in.Previous), slotSize)
	}
	// A slot kept for a data device that is gone still takes a slot: the others are laid out as
	// if it were there.
	held := heldSlots(in.Previous, capacity, in.Partitions)
	perFast := slotsPerFast(len(capacity)+len(held), len(fast), in.Spec)

	devs := make([]fastState, len(fast))
	slots := make([]string, len(fast)*perFast) // every fast device's slots, unless a previous plan has more
	for i, path := range fast {
		prev := previousDevice(in.Previous, path)
		devs[i].init(path, sizes.fast[i], slotSize, slots[i*perFast:(i+1)*perFast:(i+1)*perFast], prev, &out)
		devs[i].identity = plannedIdentity(path, prev, in.Devices, &out)
	}
	// assigned[i]: capacity[i] has a slot (a path listed twice counts at its first index).
	assigned := make([]bool, len(capacity))
	for i := range devs {
		devs[i].keepAssignments(capacity, assigned, func(fast string, slot prismv1.DBSlot) string { return SlotHeld(in.Partitions, fast, slot) }, &out)
	}
	for i, c := range capacity {
		first := i
		if i > 0 && capacity[i-1] == c {
			first, _ = slices.BinarySearch(capacity, c)
		}
		if assigned[first] {
			continue
		}
		f := leastLoaded(devs, in.Spec.DB.MaxDataDevicesPerFastDevice)
		if f == nil {
			reason := noSlotReason(len(fast), perFast, in.Spec)
			if len(held) > 0 {
				reason += fmt.Sprintf(" (%d kept for data devices that are gone until zapped: %s)", len(held), strings.Join(held, ", "))
			}
			out.Unplaced = append(out.Unplaced, prismv1.RejectedDevice{Name: cmp.Or(nameOf(in.Devices, c), c), Reason: reason})
			continue
		}
		f.assign(c)
		assigned[first] = true
	}
	for i := range devs {
		p, ok := devs[i].finish(in.Spec, capacity, sizes.capacity, &out)
		if ok {
			if out.Plan.FastDevices == nil {
				out.Plan.FastDevices = make([]prismv1.FastDevicePlan, 0, len(devs)-i)
			}
			out.Plan.FastDevices = append(out.Plan.FastDevices, p)
		}
	}
	assignCacheIDs(out.Plan.FastDevices, in.Previous)
	for _, g := range in.Spec.AllowWipe {
		if g.Node == in.Selection.Node {
			out.Plan.AllowWipe = append(out.Plan.AllowWipe, g.Path)
		}
	}
	sort.Strings(out.Plan.AllowWipe)
	return out
}

// selectedSizes are the sizes of the selected devices, indexed like their sorted stable paths.
type selectedSizes struct {
	capacity, fast []int64
}

// sizesOf looks the selected devices up in the inventory, by stable path; where two devices
// have one path, the last listed counts.
func sizesOf(devices []prismv1.Device, capacity, fast []string) selectedSizes {
	all := make([]int64, len(capacity)+len(fast))
	s := selectedSizes{capacity: all[:len(capacity):len(capacity)], fast: all[len(capacity):]}
	for i := range devices {
		d := &devices[i]
		if d.StablePath == "" {
			continue
		}
		setSize(s.capacity, capacity, d.StablePath, d.SizeBytes)
		setSize(s.fast, fast, d.StablePath, d.SizeBytes)
	}
	return s
}

// setSize sets sizes[i] for every i where the sorted paths hold path.
func setSize(sizes []int64, paths []string, path string, size int64) {
	j, _ := slices.BinarySearch(paths, path)
	for ; j < len(paths) && paths[j] == path; j++ {
		sizes[j] = size
	}
}

// nameOf is the kernel name of the device with the stable path (the last listed), "" when
// none has it.
func nameOf(devices []prismv1.Device, path string) string {
	name := ""
	for i := range devices {
		if devices[i].StablePath == path {
			name = devices[i].Name
		}
	}
	return name
}

// wantedSlotSize is the policy's absolute size, or its percentage of the largest selected
// capacity device, rounded up to a MiB: all slots on a device are equal, so a replacement
// disk of the same model always fits its predecessor's slot.
func wantedSlotSize(spec *prismv1.HybridStoragePolicySpec, capacitySizes []int64) int64 {
	if spec.DB.Size != nil {
		return alignUp(spec.DB.Size.Value())
	}
	pct := int64(DefaultPercentOfData)
	if spec.DB.PercentOfData != nil {
		pct = int64(*spec.DB.PercentOfData)
	}
	var largest int64
	for _, size := range capacitySizes {
		largest = max(largest, size)
	}
	// largest/100*pct + the remainder's share: largest*pct would overflow int64 above 92 PB.
	return alignUp(largest/100*pct + largest%100*pct/100)
}

// slotsPerFast spreads the capacity devices evenly, adds the spares and applies the blast-radius cap.
func slotsPerFast(nCapacity, nFast int, spec *prismv1.HybridStoragePolicySpec) int {
	n := (nCapacity + nFast - 1) / nFast
	if limit := int(spec.DB.MaxDataDevicesPerFastDevice); limit > 0 && n > limit {
		n = limit
	}
	return n + int(spec.DB.SpareSlots)
}

func noSlotReason(nFast, perFast int, spec *prismv1.HybridStoragePolicySpec) string {
	if limit := spec.DB.MaxDataDevicesPerFastDevice; limit > 0 {
		return fmt.Sprintf("no DB slot: each of the %d fast devices already serves %d data devices (spec.db.maxDataDevicesPerFastDevice)", nFast, limit)
	}
	return fmt.Sprintf("no DB slot: the %d fast devices have no free slot of the planned size", nFast)
}

func stablePaths(devs []prismv1.SelectedDevice) []string {
	paths := make([]string, 0, len(devs))
	for _, d := range devs {
		if d.StablePath != "" {
			paths = append(paths, d.StablePath)
		}
	}
	sort.Strings(paths)
	return paths
}

// previousSlotSize is the largest slot size of a plan (0 for none).
func previousSlotSize(prev *prismv1.NodePlan) int64 {
	var size int64
	if prev != nil {
		for _, f := range prev.FastDevices {
			size = max(size, f.SlotSizeBytes)
		}
	}
	return size
}

func previousDevice(prev *prismv1.NodePlan, path string) *prismv1.FastDevicePlan {
	if prev == nil {
		return nil
	}
	for i := range prev.FastDevices {
		if prev.FastDevices[i].StablePath == path {
			return &prev.FastDevices[i]
		}
	}
	return nil
}

func leastLoaded(devs []fastState, limit int32) *fastState {
	var best *fastState
	for i := range devs {
		f := &devs[i]
		if !f.hasFreeSlot() || (limit > 0 && f.load() >= int(limit)) {
			continue
		}
		if best == nil || f.load() < best.load() {
			best = f
		}
	}
	return best
}

// alignUp rounds n up to a MiB; sizes above MaxSlotBytes are returned as they are (the
// planner refuses them), so the sum cannot overflow.
func alignUp(n int64) int64 {
	if n > MaxSlotBytes {
		return n
	}
	return (n + MiB - 1) / MiB * MiB
}

func slotLabel(i int) string {
	if i < len(slotLabels) {
		return slotLabels[i]
	}
	return formatSlotLabel(i)
}

// slotLabels holds the labels of the first slots, so that planning 1000 nodes does not build
// the same few strings 24 000 times.
var slotLabels = func() []string {
	l := make([]string, 128)
	for i := range l {
		l[i] = formatSlotLabel(i)
	}
	return l
}()

func formatSlotLabel(i int) string {
	if i < 10 {
		return slotLabelPrefix + "0" + strconv.Itoa(i)
	}
	return slotLabelPrefix + strconv.Itoa(i)
}

// SlotHeld says why a DB slot of the fast device may not be given to another data device, from
// what the node's agent reports of it (partitions); "" when the agent read it Empty. A slot
// the agent did not report, or could not read, is held: an OSD's DB may be on it, and a new
// OSD would be prepared over it.
func SlotHeld(partitions []prismv1.PartitionStatus, fast string, slot prismv1.DBSlot) string {
	i := slices.IndexFunc(partitions, func(p prismv1.PartitionStatus) bool {
		return p.Device == fast && p.Number == slot.Partition.Number
	})
	switch {
	case slot.Partition.Number == 0:
		return "the plan gives the slot no partition"
	case i < 0:
		return fmt.Sprintf("its agent has not reported partition %d", slot.Partition.Number)
	case partitions[i].DBContent == prismv1.DBSlotEmpty:
		return ""
	case partitions[i].DBContent == prismv1.DBSlotInUse:
		return fmt.Sprintf("partition %d holds %s (an OSD's DB, or data Prism did not write)", slot.Partition.Number, cmp.Or(partitions[i].DBFound, "a signature"))
	}
	return fmt.Sprintf("its agent could not read what partition %d holds", slot.Partition.Number)
}

// heldSlots names the previous plan's slots whose data device is no longer among capacity
// and which SlotHeld keeps for it ("<fast> slot <i>").
func heldSlots(prev *prismv1.NodePlan, capacity []string, partitions []prismv1.PartitionStatus) []string {
	if prev == nil {
		return nil
	}
	var out []string
	for _, f := range prev.FastDevices {
		for _, s := range f.Slots {
			if s.DataDevice == "" {
				continue
			}
			if _, ok := slices.BinarySearch(capacity, s.DataDevice); ok {
				continue
			}
			if SlotHeld(partitions, f.StablePath, s) != "" {
				out = append(out, fmt.Sprintf("%s slot %d", f.StablePath, s.Index))
			}
		}
	}
	return out
}
