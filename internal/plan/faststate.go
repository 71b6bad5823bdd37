package plan

import (
	"fmt"
	"slices"
	"strconv"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// fastState is one fast device while the planner fills its slots.
type fastState struct {
	path      string
	sizeBytes int64
	slotSize  int64
	// slots[i] is the data device in slot i ("" = free); its length is the slot count.
	slots []string
	// used counts the occupied slots.
	used int
	// fixed is true when the slots came from an existing plan: their size cannot change.
	fixed bool
	// prevCache is the cache partition of the existing plan, which new slots must not overlap.
	prevCache *prismv1.PlannedPartition
	// prev is the existing plan of the device (nil when none).
	prev *prismv1.FastDevicePlan
	// sizeUnknown: the device has slots in the existing plan and its size could not be read
	// (its inventory record is partial, size 0). It keeps what the plan has and gets nothing
	// more: no new slot, no new cache partition.
	sizeUnknown bool
	// identity is what the plan names as the device (plannedIdentity).
	identity *prismv1.DeviceIdentity
}

// init starts a fast device with slots (perFast free ones), or with its previous plan's.
func (f *fastState) init(path string, size, wantedSlot int64, slots []string, prev *prismv1.FastDevicePlan, out *Layout) {
	*f = fastState{path: path, sizeBytes: size, slotSize: wantedSlot, slots: slots}
	if prev == nil || len(prev.Slots) == 0 {
		return
	}
	perFast := len(slots)
	// Slots that exist keep their size and positions; more slots may be added after them.
	f.fixed = true
	f.prevCache = prev.Cache
	f.sizeUnknown = size <= 0
	if prev.SlotSizeBytes != wantedSlot {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"%s keeps its %d MiB slots although the policy now asks for %d MiB: changing slot size means re-creating the fast device's OSDs (see docs/runbooks/replace-fast-device.md)",
			path, prev.SlotSizeBytes/MiB, wantedSlot/MiB))
	}
	f.slotSize = prev.SlotSizeBytes
	// Existing slots stay. More slots are added after them only when no cache partition
	// follows: shrinking a cache would need a flush and re-creation, so with a cache the
	// spares are used up first and then new disks wait (Unplaced, with the reason).
	n := 0
	for _, s := range prev.Slots {
		n = max(n, int(s.Index)+1)
	}
	if prev.Cache == nil && !f.sizeUnknown {
		n = max(n, perFast)
	}
	if n > len(f.slots) {
		f.slots = make([]string, n)
	}
	f.slots = f.slots[:n]
	f.prev = prev
	for _, s := range prev.Slots {
		f.slots[s.Index] = s.DataDevice
	}
}

// keepAssignments keeps every previous slot whose data device is still selected. The others
// are freed (the device was removed or replaced) only when the slot holds nothing: held says
// why a slot may not be given to another data device ("" when it may), and such a slot keeps
// its data device, with a warning, until it is zapped.
// assigned is indexed like capacity (sorted), a path listed twice at its first index.
func (f *fastState) keepAssignments(capacity []string, assigned []bool, held func(fast string, slot prismv1.DBSlot) string, out *Layout) {
	for i, dev := range f.slots {
		if dev == "" {
			continue
		}
		if j, ok := slices.BinarySearch(capacity, dev); ok && !assigned[j] {
			assigned[j] = true
			f.used++
			continue
		}
		if why := held(f.path, f.prevSlot(i)); why != "" {
			f.used++
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: DB slot %d keeps %s, which is no longer selected, because %s; "+
				"to free it, remove that OSD and zap the slot (docs/runbooks/replace-data-disk.md)", f.path, i, dev, why))
			continue
		}
		f.slots[i] = ""
	}
}

// prevSlot is slot i of the existing plan (its data device came from there).
func (f *fastState) prevSlot(i int) prismv1.DBSlot {
	for _, s := range f.prev.Slots {
		if int(s.Index) == i {
			return s
		}
	}
	return prismv1.DBSlot{Index: int32(i)}
}

func (f *fastState) load() int { return f.used }

func (f *fastState) hasFreeSlot() bool { return f.used < len(f.slots) }

// assign puts dev in the lowest free slot.
func (f *fastState) assign(dev string) {
	for i, d := range f.slots {
		if d == "" {
			f.slots[i] = dev
			f.used++
			return
		}
	}
}

// finish lays the slots out on the device and checks that they fit; the rest becomes the
// cache partition when the policy enables a cache.
// capacity are the selected capacity devices' stable paths (sorted) and capacitySizes their sizes.
func (f *fastState) finish(spec *prismv1.HybridStoragePolicySpec, capacity []string, capacitySizes []int64, out *Layout) (prismv1.FastDevicePlan, bool) {
	if f.slotSize < MinSlotBytes {
		out.Problems = append(out.Problems, fmt.Sprintf("%s: DB slots of %d MiB are below the %d MiB minimum", f.path, f.slotSize/MiB, MinSlotBytes/MiB))
		return prismv1.FastDevicePlan{}, false
	}
	if f.slotSize > MaxSlotBytes {
		out.Problems = append(out.Problems, fmt.Sprintf("%s: DB slots of %d MiB are above the %d MiB maximum", f.path, f.slotSize/MiB, MaxSlotBytes/MiB))
		return prismv1.FastDevicePlan{}, false
	}
	usable := (f.sizeBytes/MiB)*MiB - MiB // the backup GPT lives in the last MiB
	end := MiB + int64(len(f.slots))*f.slotSize
	if f.sizeUnknown {
		usable = end // what the existing plan uses, which fitted when it was planned
		if f.prevCache != nil {
			usable = max(usable, f.prevCache.StartBytes+f.prevCache.SizeBytes)
		}
	}
	if end > usable {
		out.Problems = append(out.Problems, fmt.Sprintf("%s (%d GiB) is too small for %d DB slots of %d MiB",
			f.path, f.sizeBytes/GiB, len(f.slots), f.slotSize/MiB))
		return prismv1.FastDevicePlan{}, false
	}
	if f.prevCache != nil && f.prevCache.StartBytes < end {
		out.Problems = append(out.Problems, fmt.Sprintf("%s: %d DB slots would overlap its cache partition; shrinking a cache needs a flush and re-creation (docs/runbooks/add-disk.md)",
			f.path, len(f.slots)))
		return prismv1.FastDevicePlan{}, false
	}
	p := prismv1.FastDevicePlan{StablePath: f.path, Identity: f.identity, SlotSizeBytes: f.slotSize, Slots: make([]prismv1.DBSlot, 0, len(f.slots))}
	small, smallest := 0, 100.0
	for i, dev := range f.slots {
		p.Slots = append(p.Slots, prismv1.DBSlot{
			Index: int32(i),
			Partition: prismv1.PlannedPartition{
				Number: int32(i + 1), Label: slotLabel(i), StartBytes: MiB + int64(i)*f.slotSize, SizeBytes: f.slotSize,
			},
			DataDevice: dev,
		})
		if dev == "" {
			continue
		}
		if j, ok := slices.BinarySearch(capacity, dev); ok && capacitySizes[j] > 0 {
			if pct := float64(f.slotSize) * 100 / float64(capacitySizes[j]); pct < WarnBelowPercent {
				small++
				smallest = min(smallest, pct)
			}
		}
	}
	if small > 0 {
		// Concatenated rather than formatted: most nodes of a large cluster have this warning.
		out.Warnings = append(out.Warnings, f.path+": "+strconv.Itoa(small)+" DB slots of "+strconv.FormatInt(f.slotSize/MiB, 10)+
			" MiB are below 1 % of their data devices (down to "+strconv.FormatFloat(smallest, 'f', 2, 64)+" %); RocksDB may spill to QLC")
	}
	cacheOn := spec.Cache.Mode != "" && spec.Cache.Mode != prismv1.CacheNone
	switch {
	case f.prevCache != nil:
		// An existing cache partition never moves, shrinks or goes away: it may hold dirty
		// data. With the cache off, the agent flushes and stops the cache and leaves the
		// partition as it is.
		p.Cache = f.prevCache.DeepCopy()
		if !cacheOn {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: the cache is off; its partition %d stays (the agent flushes and stops the cache)", f.path, p.Cache.Number))
		}
	case cacheOn && f.sizeUnknown:
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s: its size could not be read, so no cache partition is planned until it is", f.path))
	case cacheOn:
		if rest := usable - end; rest >= MinCacheBytes {
			p.Cache = &prismv1.PlannedPartition{Number: int32(len(f.slots) + 1), Label: cacheLabel, StartBytes: end, SizeBytes: rest / MiB * MiB}
		} else {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: only %d MiB left after the DB slots, no cache partition", f.path, rest/MiB))
		}
	}
	return p, true
}
