// Package provision carries out a node plan's GPT layout on the fast devices: a pure decision
// (Decide) from the plan and a fresh Observation of the device, and a runner (Reconcile) that
// observes, decides, holds the device exclusively while it writes, and checks the result.
//
// Safety rules, all enforced by Decide (decision 0018):
//   - Prism writes only to a device proven empty: libblkid (wipefs, blkid) and Prism's own
//     detector find nothing, nothing is mounted on it or stacked on it, and every byte Prism
//     would overwrite is zero, or belongs to a GPT of Prism's own (its disk GUID, or a complete
//     table of nothing but Prism partitions). Then it writes the planned table, keeping every
//     partition that exists.
//   - A device without a table must read zero at every sample of a sparse read of its whole
//     range (Sparse) before the first table is written.
//   - A partition Prism creates must be empty too (probes find nothing; its head, HeadSpan, and
//     last MiB are zero; a range Prism's table grows into reads zero at every sample); one that
//     is not is refused alone, unless the device is in allowWipe.
//   - An existing Prism partition is Ready only when it holds nothing, or what Prism's OSD or
//     cache puts there; anything else refuses it, and a device with such a partition is not
//     extended.
//   - Anything else is refused with what was found and where, unless the plan's allowWipe lists
//     the device; a device with holders, mounts, processes holding it open or read-only is
//     never written, and a device that carries partitions of this plan is never wiped (they
//     may hold OSD metadata).
//   - No partition that exists is ever deleted, moved or resized.
//   - Every write is safe to repeat from the state a crash at any byte of an earlier one left:
//     Decide, run on that state, recognises Prism's half-written table and writes it whole.
package provision

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/gpt"
)

// PrismLabelPrefix marks a GPT partition as Prism's.
const PrismLabelPrefix = "prism-"

// MaxMessageLength is the API's limit on a partition status message.
const MaxMessageLength = prismv1.MaxMessageLength

// truncate keeps a status message within the API's limit.
func truncate(s string) string { return prismv1.TruncateMessage(s) }

// ClearSpan is how much of a partition's head and tail must be zero before Prism creates it
// (and is zeroed on a granted device): GPT, LVM, MD, LUKS, most filesystems and BlueStore's
// first label live in the first MiB; MD 0.90/1.0 and some backup superblocks in the last.
const ClearSpan = int64(1) << 20

// HeadSpan is how much of a partition's head must be zero before Prism creates it or LVM
// writes it, and is zeroed on a granted device: ClearSpan, and the 4 KiB after it, which
// lvcreate zeroes on a DB slot (LVM puts a PV's data 1 MiB into the partition, its default
// data alignment, and zeroes a new LV's first 4 KiB), so that the proof before pvcreate
// covers every byte LVM writes.
const HeadSpan = ClearSpan + 4096

// Want is one partition a fast device plan asks for, with the type Prism gives it.
type Want struct {
	prismv1.PlannedPartition
	TypeGUID string
}

// Wanted lists a fast device plan's partitions by number: the DB slots (Ceph block.db type)
// and the cache (Linux filesystem type).
func Wanted(p prismv1.FastDevicePlan) []Want {
	var ws []Want
	for _, s := range p.Slots {
		ws = append(ws, Want{s.Partition, gpt.CephBlockDBTypeGUID})
	}
	if p.Cache != nil {
		ws = append(ws, Want{*p.Cache, gpt.LinuxFilesystemTypeGUID})
	}
	slices.SortStableFunc(ws, func(a, b Want) int { return cmp.Compare(a.Number, b.Number) })
	return ws
}

// DiskGUID is the disk GUID Prism gives the GPT it writes on the device with this stable path.
func DiskGUID(stablePath string) string { return gpt.DerivedGUID("disk", stablePath) }

// ownEntry reports whether a GPT entry is one Prism writes: a Prism label and a Prism type.
func ownEntry(e gpt.Entry) bool {
	return strings.HasPrefix(e.Name, PrismLabelPrefix) &&
		(e.TypeGUID == gpt.CephBlockDBTypeGUID || e.TypeGUID == gpt.LinuxFilesystemTypeGUID)
}

// Decision is what to do on one fast device.
type Decision struct {
	// Device is the fast device's stable path.
	Device string
	// Steps run in order; empty when nothing is to be done or the device is refused.
	Steps []Step
	// Refused says why Prism will not write the device; empty when it will.
	Refused string
	// Wipe is true when the steps start by wiping the device (allowWipe granted).
	Wipe bool
	// Partitions is each planned partition's state if no step runs: Ready (exists as
	// planned, holds what Prism expects, and the kernel sees it), Pending (a step will make
	// it), Refused.
	Partitions []prismv1.PartitionStatus
}

// Decide compares a fast device plan with a fresh observation of the device and returns the
// steps that realise the plan, or a refusal. wipeAllowed is true when the plan's allowWipe
// lists the device. Pure.
func Decide(fd prismv1.FastDevicePlan, obs Observation, wipeAllowed bool) Decision {
	dev := obs.Device
	wants := Wanted(fd)
	d := Decision{Device: fd.StablePath}
	status := make([]prismv1.PartitionStatus, len(wants))
	for i, w := range wants {
		status[i] = prismv1.PartitionStatus{Device: fd.StablePath, Number: w.Number, Label: w.Label, Path: prismv1.PartitionPath(fd.StablePath, w.Number)}
	}
	d.Partitions = status
	refuseAll := func(reason string) Decision {
		d.Refused, d.Steps, d.Wipe = truncate(reason), nil, false
		for i := range status {
			status[i].State, status[i].Message = prismv1.PartitionRefused, d.Refused
		}
		return d
	}

	if problem := checkPlan(wants); problem != "" {
		return refuseAll(fmt.Sprintf("the plan for %s is not valid: %s", fd.StablePath, problem))
	}
	if dev.StablePath != fd.StablePath {
		return refuseAll(fmt.Sprintf("the inventory device %q (%s) is not %s", dev.Name, cmp.Or(dev.StablePath, "no stable path"), fd.StablePath))
	}
	if dev.Path == "" || dev.Name == "" {
		return refuseAll(fmt.Sprintf("the inventory gives no kernel name and path for %s", fd.StablePath))
	}
	ss := obs.Disk.SectorSize
	if ss == 0 || int64(dev.LogicalBlockSizeBytes) != ss {
		return refuseAll(fmt.Sprintf("%s: the table was read with %d-byte sectors but the kernel reports %d", dev.Path, ss, dev.LogicalBlockSizeBytes))
	}

	table := obs.Disk.Table()
	foreignGPT := obs.Disk.Foreign(DiskGUID(fd.StablePath), ownEntry)
	kernel, unknownKernel := kernelNumbers(dev)
	planned := map[int]bool{}
	for _, w := range wants {
		planned[int(w.Number)] = true
	}

	// Each planned partition: as planned (ready, or waiting for the kernel or a repair), in
	// the way, or missing; and what its byte range holds.
	var blockers, missing []int
	var inWay, foreignInside []string
	asPlanned := map[int]bool{}
	dirty := map[int]string{} // missing partitions whose range is not empty
	for i, w := range wants {
		n := int(w.Number)
		p, ok := table.Partition(n)
		content := obs.Content[n]
		switch {
		case !ok:
			missing = append(missing, i)
			if !content.Empty() {
				dirty[n] = fmt.Sprintf("the range of partition %d (%q at %s) is not empty: it holds %s", n, w.Label, gpt.FormatBytes(w.StartBytes), content)
			}
		case matches(w, p):
			asPlanned[n] = true
			if f := foreignContent(w, content); len(f) > 0 {
				msg := fmt.Sprintf("partition %d (%q) holds %s, which Prism's %s would not have put there", n, w.Label, strings.Join(f, ", "), role(w))
				foreignInside = append(foreignInside, msg)
				status[i].State, status[i].Message = prismv1.PartitionRefused, truncate(msg+"; Prism leaves it alone (remove it by hand if it is not wanted)")
			}
			if hs := obs.PartitionHolders[n]; len(hs) > 0 && len(content.Found) == 0 {
				msg := fmt.Sprintf("partition %d (%q) is held by %s but holds nothing Prism's %s would write", n, w.Label, strings.Join(hs, ", "), role(w))
				foreignInside = append(foreignInside, msg)
				status[i].State, status[i].Message = prismv1.PartitionRefused, truncate(msg)
			}
		default:
			blockers = append(blockers, i)
			owner := "foreign"
			if strings.HasPrefix(p.Name, PrismLabelPrefix) {
				owner = "Prism"
			}
			inWay = append(inWay, fmt.Sprintf("%s %s where the plan wants %q at %s, size %s, type %s", owner, p, w.Label, gpt.FormatBytes(w.StartBytes), gpt.FormatBytes(w.SizeBytes), w.TypeGUID))
		}
	}
	for _, p := range table.Partitions {
		if planned[p.Number] {
			continue
		}
		if strings.HasPrefix(p.Name, PrismLabelPrefix) {
			inWay = append(inWay, fmt.Sprintf("Prism %s is not in the plan", p))
		} else {
			inWay = append(inWay, fmt.Sprintf("foreign %s", p))
		}
	}
	inWay = append(inWay, foreignGPT...)
	if obs.Whole != nil && !obs.Whole.Empty() && !wipeAllowed {
		// Only Prism's sparse read sees it, so no wipe removes it: a grant lets Prism write
		// its table over it, which is all a wipe would have allowed.
		inWay = append(inWay, obs.Whole.String()+" (Prism's sparse read)")
	}
	if obs.Disk.Blank() {
		// A device without a table is written only when proven empty whole: data where a
		// partition would go refuses the device, not just that partition.
		for _, n := range slices.Sorted(maps.Keys(dirty)) {
			inWay = append(inWay, dirty[n])
			delete(dirty, n)
		}
	}
	// GPT structures are judged above, from Prism's own reading of them; the probes' names
	// for them (gpt, PMBR) add nothing but noise.
	_, anyCopy := obs.Disk.Best()
	gptJudged := anyCopy || len(foreignGPT) == 0 && !obs.Disk.Blank()
	for _, s := range obs.Probe {
		if gptJudged && (s.Type == gpt.LabelGPT || s.Type == "PMBR") {
			continue
		}
		inWay = append(inWay, fmt.Sprintf("%s (libblkid)", s))
	}
	for _, s := range dev.Signatures {
		if gptJudged && s.Kind == prismv1.SignaturePartitionTable && (s.Name == gpt.LabelGPT || s.Name == "PMBR") {
			continue
		}
		if insideAsPlanned(s.OffsetBytes, wants, asPlanned) {
			continue // the content of a Prism partition, checked above
		}
		inWay = append(inWay, fmt.Sprintf("%s (%s) at byte %d (Prism's detector)", s.Name, s.Kind, s.OffsetBytes))
	}
	for _, n := range sortedKeys(kernel) {
		if _, ok := table.Partition(n); !ok {
			inWay = append(inWay, fmt.Sprintf("the kernel lists partition %s, which the partition table lacks", partitionName(dev.Name, n)))
		}
	}
	for _, name := range unknownKernel {
		inWay = append(inWay, fmt.Sprintf("the kernel lists partition %s", name))
	}

	// What is to be done, if Prism may: partitions to create, a table to write or repair,
	// the kernel to tell.
	creatable := slices.DeleteFunc(slices.Clone(missing), func(i int) bool { return dirty[int(wants[i].Number)] != "" && !wipeAllowed })
	repair := !obs.Disk.Blank() && !obs.Disk.Complete()
	needReread := false
	for n := range asPlanned {
		if !kernel[n] {
			needReread = true
		}
	}
	for i, w := range wants {
		n := int(w.Number)
		switch {
		case asPlanned[n] && kernel[n] && obs.Disk.Complete() && status[i].State == "":
			// Ready whatever else is found on the device: it holds what Prism expects, and
			// what is in the way only stops Prism from writing.
			status[i].State = prismv1.PartitionReady
		}
	}
	refuseDirty := func() {
		for i, w := range wants {
			if msg := dirty[int(w.Number)]; msg != "" && !wipeAllowed {
				status[i].State, status[i].Message = prismv1.PartitionRefused, truncate(msg+"; Prism creates a partition only over zeros (clear the range, or list the device in the policy's allowWipe)")
			}
		}
	}
	if len(creatable) == 0 && len(blockers) == 0 && !repair && !needReread && len(inWay) == 0 {
		refuseDirty()
		return d
	}

	// Something must be done. First what no grant overrides.
	var refusal string
	switch {
	case len(dev.Holders) > 0:
		refusal = fmt.Sprintf("%s is in use by %s", dev.Path, strings.Join(dev.Holders, ", "))
	case len(obs.Users) > 0:
		refusal = fmt.Sprintf("%s is in use: held open by %s", dev.Path, strings.Join(obs.Users, ", "))
	case len(obs.Mounts) > 0:
		refusal = fmt.Sprintf("%s is mounted: %s", dev.Path, strings.Join(obs.Mounts, "; "))
	case dev.ReadOnly:
		refusal = fmt.Sprintf("the kernel marks %s read-only", dev.Path)
	case len(inWay) > 0 && len(heldPartitions(obs.PartitionHolders)) > 0:
		refusal = fmt.Sprintf("%s has partitions in use (%s) and holds what Prism did not create: %s", dev.Path, strings.Join(heldPartitions(obs.PartitionHolders), "; "), strings.Join(inWay, "; "))
	case len(foreignInside) > 0:
		refusal = fmt.Sprintf("%s is not extended or repaired while a Prism partition holds foreign data: %s", dev.Path, strings.Join(foreignInside, "; "))
	case len(inWay) > 0 && !wipeAllowed:
		refusal = fmt.Sprintf("%s holds what Prism did not create, and Prism only writes a device proven empty or its own table (list the device in the policy's allowWipe to have it wiped): %s",
			dev.Path, strings.Join(inWay, "; "))
	case len(inWay) > 0 && len(asPlanned) > 0:
		refusal = fmt.Sprintf("%s is in allowWipe but already carries partitions %s of this plan, which may hold OSD metadata, so Prism does not wipe it; in the way: %s",
			dev.Path, joinInts(sortedKeys(asPlanned)), strings.Join(inWay, "; "))
	}
	if refusal != "" && len(inWay) > 0 && !strings.Contains(refusal, inWay[0]) {
		refusal += "; and it holds what Prism did not create: " + strings.Join(inWay, "; ")
	}
	if refusal != "" {
		d.Refused = truncate(refusal)
		for i := range status {
			if status[i].State != prismv1.PartitionReady && !strings.HasPrefix(status[i].Message, "partition ") {
				status[i].State, status[i].Message = prismv1.PartitionRefused, d.Refused
			}
		}
		return d
	}
	wipe := len(inWay) > 0
	refuseDirty()

	// The steps. A wiped device gets every planned partition on a fresh table.
	layout := gpt.Layout{SectorSize: ss, Sectors: dev.SizeBytes / ss, DiskGUID: DiskGUID(fd.StablePath)}
	if best, ok := obs.Disk.Best(); ok && !wipe {
		layout.DiskGUID = best.DiskGUID
		layout.Entries = slices.Clone(best.Entries)
	}
	var zero []Region
	if wipe {
		creatable = creatable[:0]
		for i := range wants {
			creatable = append(creatable, i)
		}
		d.Wipe = true
		if len(kernel) > 0 || len(unknownKernel) > 0 {
			// partx --update never removes a partition that left the table, so the kernel's
			// partitions of the wiped layout are dropped first, before the table they came
			// from is gone. (partx exits 1 when there are none.)
			d.Steps = append(d.Steps, Step{Kind: StepForgetPartitions, MaxNumber: max(maxKey(kernel), gpt.MaxPartitionNumber)})
		}
		if len(obs.Probe) > 0 {
			d.Steps = append(d.Steps, Step{Kind: StepWipeSignatures})
		}
		regions := []Region{
			{What: "the GPT area at the start", Offset: 0, Bytes: layout.FirstUsable() * ss},
			{What: "the GPT area at the end", Offset: (layout.LastUsable() + 1) * ss, Bytes: (layout.Sectors - layout.LastUsable() - 1) * ss},
		}
		for _, s := range dev.Signatures {
			// What Prism's detector found that wipefs may not know (a BlueStore label replica).
			off := s.OffsetBytes &^ 4095
			if off+4096 <= dev.SizeBytes {
				regions = append(regions, Region{What: s.Name + " found by Prism's detector", Offset: off, Bytes: 4096})
			}
		}
		zero = regions
	}
	for _, i := range creatable {
		w := wants[i]
		first, last := w.StartBytes/ss, (w.StartBytes+w.SizeBytes)/ss-1
		if w.StartBytes%ss != 0 || w.SizeBytes%ss != 0 || first < layout.FirstUsable() || last > layout.LastUsable() {
			return refuseAll(fmt.Sprintf("partition %d (%q at %s, size %s) does not fit %s: usable %d-byte sectors are %d to %d",
				w.Number, w.Label, gpt.FormatBytes(w.StartBytes), gpt.FormatBytes(w.SizeBytes), dev.Path, ss, layout.FirstUsable(), layout.LastUsable()))
		}
		if c := obs.Content[int(w.Number)]; wipe || dirty[int(w.Number)] != "" && c.clearable() {
			zero = append(zero, clearRegions(w, c.At)...)
		}
		layout.Entries = append(layout.Entries, gpt.Entry{Number: int(w.Number), TypeGUID: w.TypeGUID,
			UUID: gpt.DerivedGUID("partition", layout.DiskGUID, fmt.Sprint(w.Number)), FirstLBA: first, LastLBA: last, Name: w.Label})
		status[i].State, status[i].Message = prismv1.PartitionPending, fmt.Sprintf("to be created: sectors %d-%d, name %q, type %s", first, last, w.Label, w.TypeGUID)
	}
	if len(zero) > 0 {
		d.Steps = append(d.Steps, Step{Kind: StepZeroRegions, Regions: zero})
	}
	slices.SortFunc(layout.Entries, func(a, b gpt.Entry) int { return cmp.Compare(a.Number, b.Number) })
	if len(creatable) > 0 || repair || obs.Disk.Blank() {
		if err := layout.Check(); err != nil {
			return refuseAll(fmt.Sprintf("%s: the planned table is not valid: %v", dev.Path, err))
		}
		d.Steps = append(d.Steps, Step{Kind: StepWriteTable, Table: layout})
	}
	maxNumber := 0
	for _, w := range wants {
		maxNumber = max(maxNumber, int(w.Number))
	}
	d.Steps = append(d.Steps, Step{Kind: StepReread, MaxNumber: maxNumber}, Step{Kind: StepSettle})
	for i := range wants {
		switch {
		case status[i].State != "":
		case repair:
			status[i].State, status[i].Message = prismv1.PartitionPending, "on disk as planned; the table is incomplete ("+obs.Disk.String()+") and is written again whole"
		default:
			status[i].State, status[i].Message = prismv1.PartitionPending, "on disk as planned; the kernel has not read it yet"
		}
		if wipe && status[i].State == prismv1.PartitionPending {
			status[i].Message = "to be created after wiping " + dev.Path + ": " + strings.Join(inWay, "; ")
		}
		status[i].Message = truncate(status[i].Message)
	}
	for _, s := range d.Steps {
		if !s.WritesDevice() && s.Argv(dev.Path) == nil {
			return refuseAll(fmt.Sprintf("cannot build the %s command for %s", s, dev.Path))
		}
	}
	return d
}

// heldPartitions lists the partitions that have holders, as "N by dm-0".
func heldPartitions(holders map[int][]string) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(holders)) {
		if len(holders[n]) > 0 {
			out = append(out, fmt.Sprintf("partition %d by %s", n, strings.Join(holders[n], ", ")))
		}
	}
	return out
}

// role names what Prism puts in a partition, for messages.
func role(w Want) string {
	if w.TypeGUID == gpt.CephBlockDBTypeGUID {
		return "OSD (a BlueStore DB)"
	}
	return "Open CAS cache"
}

// clearRegions are the head and tail of a partition to be created, the ranges that must be
// zero (and are zeroed on a granted device), and the 4 KiB blocks where Prism's detector found
// a signature inside it (at, from the partition's start).
func clearRegions(w Want, at []int64) []Region {
	head := min(HeadSpan, w.SizeBytes)
	rs := []Region{{What: fmt.Sprintf("head of partition %d", w.Number), Offset: w.StartBytes, Bytes: head}}
	if w.SizeBytes > head {
		tail := min(ClearSpan, w.SizeBytes-head)
		rs = append(rs, Region{What: fmt.Sprintf("tail of partition %d", w.Number), Offset: w.StartBytes + w.SizeBytes - tail, Bytes: tail})
	}
	for _, off := range at {
		if off = off &^ 4095; off >= HeadSpan && off+4096 <= w.SizeBytes-ClearSpan {
			rs = append(rs, Region{What: fmt.Sprintf("a signature in partition %d", w.Number), Offset: w.StartBytes + off, Bytes: 4096})
		}
	}
	return rs
}

// matches reports whether an existing partition is exactly the planned one.
func matches(w Want, p gpt.Partition) bool {
	return p.StartBytes == w.StartBytes && p.SizeBytes == w.SizeBytes && p.Name == w.Label && strings.EqualFold(p.TypeGUID, w.TypeGUID)
}

// insideAsPlanned reports whether a byte offset lies in a partition that exists as planned.
func insideAsPlanned(off int64, wants []Want, asPlanned map[int]bool) bool {
	for _, w := range wants {
		if asPlanned[int(w.Number)] && off >= w.StartBytes && off < w.StartBytes+w.SizeBytes {
			return true
		}
	}
	return false
}

// checkPlan rejects a plan Prism could not have made: it must name each partition once, as
// Prism's, in increasing non-overlapping byte ranges.
func checkPlan(wants []Want) string {
	if len(wants) == 0 {
		return "it has no partitions"
	}
	for i, w := range wants {
		switch {
		case w.Number < 1 || w.Number > gpt.MaxPartitionNumber:
			return fmt.Sprintf("partition number %d is not between 1 and %d", w.Number, gpt.MaxPartitionNumber)
		case i > 0 && wants[i-1].Number == w.Number:
			return fmt.Sprintf("partition %d is planned twice", w.Number)
		case !strings.HasPrefix(w.Label, PrismLabelPrefix) || len(w.Label) > 36:
			return fmt.Sprintf("partition %d's label %q is not a Prism label", w.Number, w.Label)
		case w.StartBytes <= 0 || w.SizeBytes <= 0 || w.SizeBytes > (1<<62)-w.StartBytes:
			return fmt.Sprintf("partition %d has start %d and size %d bytes", w.Number, w.StartBytes, w.SizeBytes)
		}
	}
	byStart := slices.Clone(wants)
	slices.SortFunc(byStart, func(a, b Want) int { return cmp.Compare(a.StartBytes, b.StartBytes) })
	for i := 1; i < len(byStart); i++ {
		if a, b := byStart[i-1], byStart[i]; a.StartBytes+a.SizeBytes > b.StartBytes {
			return fmt.Sprintf("partitions %d and %d overlap", a.Number, b.Number)
		}
	}
	return ""
}
