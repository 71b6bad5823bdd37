// Package provision carries out a node plan's GPT layout on the fast devices: a pure decision
// (Decide) from the plan, the partition table as read and the inventory's record of the
// device, and a thin runner (Reconcile) that reads, decides, runs the steps through the host
// executor and checks the result.
//
// Safety rules, all enforced by Decide:
//   - Prism writes only to a device that is empty (no partition table, no signature, no
//     holders, no kernel partitions) or that holds a GPT whose every partition is a Prism
//     partition exactly as planned; then it only adds the missing partitions.
//   - Anything else is refused with what is in the way, unless the plan's allowWipe lists the
//     device; a device with holders (in use) is never touched, and a device that already
//     carries partitions of this plan is never wiped (they may hold OSD metadata).
//   - No partition that exists is ever deleted, moved or resized.
//   - Every step is safe to repeat from the state a crash after any earlier step leaves:
//     Decide, run on that state, continues where the last run stopped.
package provision

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/gpt"
	"github.com/prism-storage/prism/internal/plan"
)

// PrismLabelPrefix marks a GPT partition as Prism's.
const PrismLabelPrefix = "prism-"

// MaxMessageLength is the API's limit on a partition status message.
const MaxMessageLength = 1024

// StepKind names what a step does to the device.
type StepKind string

// Step kinds, in the order they run.
const (
	// StepWipeSignatures: wipefs --all (granted devices only).
	StepWipeSignatures StepKind = "WipeSignatures"
	// StepZapGPT: sgdisk --zap-all (granted devices only).
	StepZapGPT StepKind = "ZapGPT"
	// StepForgetPartitions: partx --delete, so the kernel drops the wiped device's partitions.
	StepForgetPartitions StepKind = "ForgetPartitions"
	// StepCreateTable: sgdisk --clear on a device without a partition table.
	StepCreateTable StepKind = "CreateTable"
	// StepCreatePartition: sgdisk --new/--change-name/--typecode for one planned partition.
	StepCreatePartition StepKind = "CreatePartition"
	// StepReread: partx --update, so the kernel sees the partitions.
	StepReread StepKind = "RereadPartitions"
	// StepSettle: udevadm settle, so the -partN links exist. Optional: it changes nothing.
	StepSettle StepKind = "SettleUdev"
)

// Step is one host command of a Decision. Argv renders it for a device path, so a decision
// made from the inventory's /dev/nvme0n1 runs on /host/dev/nvme0n1 in the agent's container.
type Step struct {
	Kind StepKind
	// Partition is what a CreatePartition step creates.
	Partition gpt.NewPartition
	// SectorSize converts Partition's bytes to sectors.
	SectorSize int64
	// MaxNumber is the upper bound of ForgetPartitions and Reread.
	MaxNumber int
}

// Argv is the step's command line for the device at dev. It is nil only for a step Decide
// would not have produced (Decide validates every step with the inventory's device path).
func (s Step) Argv(dev string) []string {
	var argv []string
	var err error
	switch s.Kind {
	case StepWipeSignatures, StepZapGPT:
		var wipe [][]string
		if wipe, err = gpt.WipeArgvs(dev); err == nil {
			argv = wipe[0]
			if s.Kind == StepZapGPT {
				argv = wipe[1]
			}
		}
	case StepForgetPartitions:
		argv, err = gpt.ForgetPartitionsArgv(dev, s.MaxNumber)
	case StepCreateTable:
		argv, err = gpt.CreateTableArgv(dev, gpt.Table{})
	case StepCreatePartition:
		argv, err = gpt.CreatePartitionArgv(dev, s.SectorSize, s.Partition)
	case StepReread:
		argv, err = gpt.RereadArgv(dev, s.MaxNumber)
	case StepSettle:
		argv = gpt.SettleArgv()
	}
	if err != nil {
		return nil
	}
	return argv
}

// Mutates reports whether the step changes the device or the kernel's view of it.
func (s Step) Mutates() bool { return s.Kind != StepSettle }

// Optional steps may fail without failing the device (udevadm may be absent).
func (s Step) Optional() bool { return s.Kind == StepSettle }

// String is the step with its command, for messages.
func (s Step) String() string {
	if s.Kind == StepCreatePartition {
		return fmt.Sprintf("%s %d (%s)", s.Kind, s.Partition.Number, s.Partition.Name)
	}
	return string(s.Kind)
}

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

// Decision is what to do on one fast device.
type Decision struct {
	// Device is the fast device's stable path.
	Device string
	// Steps run in order; empty when nothing is to be done or the device is refused.
	Steps []Step
	// Refused says why Prism will not create the missing partitions; empty when it will.
	Refused string
	// Wipe is true when the steps start by wiping the device (allowWipe granted).
	Wipe bool
	// Partitions is each planned partition's state if no step runs: Ready (exists as
	// planned and the kernel sees it), Pending (a step will make it), Refused.
	Partitions []prismv1.PartitionStatus
}

// Decide compares a fast device plan with the device's partition table (as sfdisk read it)
// and its inventory record, and returns the steps that realise the plan or a refusal. Pure.
//
// dev.Signatures are whole-device signatures; dev.Partitions are the partitions the kernel
// lists for the device (kernel names, e.g. nvme0n1p1); dev.Holders are devices stacked on it.
// wipeAllowed is true when the plan's allowWipe lists the device.
func Decide(fd prismv1.FastDevicePlan, table gpt.Table, dev prismv1.Device, wipeAllowed bool) Decision {
	wants := Wanted(fd)
	d := Decision{Device: fd.StablePath}
	status := make([]prismv1.PartitionStatus, len(wants))
	for i, w := range wants {
		status[i] = prismv1.PartitionStatus{Device: fd.StablePath, Number: w.Number, Label: w.Label, Path: plan.PartitionPath(fd.StablePath, w.Number)}
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
	ss := table.SectorSize
	if !table.HasTable() {
		ss = int64(dev.LogicalBlockSizeBytes)
	}
	if ss == 0 {
		return refuseAll(fmt.Sprintf("%s: the logical sector size is unknown", dev.Path))
	}
	if table.HasTable() && dev.LogicalBlockSizeBytes != 0 && int64(dev.LogicalBlockSizeBytes) != table.SectorSize {
		return refuseAll(fmt.Sprintf("%s: sfdisk used %d-byte sectors but the kernel reports %d", dev.Path, table.SectorSize, dev.LogicalBlockSizeBytes))
	}

	kernel, unknownKernel := kernelNumbers(dev)
	planned := map[int]bool{}
	for _, w := range wants {
		planned[int(w.Number)] = true
	}

	// Each planned partition: as planned (ready, or waiting for the kernel), in the way, or missing.
	var blockers, missing []int
	var inWay []string
	asPlanned := map[int]bool{}
	needReread := false
	for i, w := range wants {
		n := int(w.Number)
		p, ok := table.Partition(n)
		switch {
		case !ok:
			missing = append(missing, i)
		case matches(w, p):
			asPlanned[n] = true
			if kernel[n] {
				status[i].State = prismv1.PartitionReady
			} else {
				needReread = true
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
	if table.HasTable() && table.Label != gpt.LabelGPT {
		inWay = append(inWay, fmt.Sprintf("a %s partition table", table.Label))
	}
	for _, s := range dev.Signatures {
		if table.Label == gpt.LabelGPT && s.Kind == prismv1.SignaturePartitionTable && s.Name == gpt.LabelGPT {
			continue // the GPT's own headers
		}
		if insideAsPlanned(s.OffsetBytes, wants, asPlanned) {
			continue // the content of a Prism partition (a BlueStore DB label), not of the device
		}
		inWay = append(inWay, fmt.Sprintf("signature %s (%s) at offset %d", s.Name, s.Kind, s.OffsetBytes))
	}
	for _, n := range sortedKeys(kernel) {
		if _, ok := table.Partition(n); !ok {
			inWay = append(inWay, fmt.Sprintf("the kernel lists partition %s, which the partition table lacks", partitionName(dev.Name, n)))
		}
	}
	for _, name := range unknownKernel {
		inWay = append(inWay, fmt.Sprintf("the kernel lists partition %s", name))
	}

	if len(missing) == 0 && len(blockers) == 0 && !needReread {
		return d // everything exists as planned
	}

	// Something must be done. First what no grant overrides.
	var hard string
	switch {
	case len(dev.Holders) > 0:
		hard = fmt.Sprintf("%s is in use by %s", dev.Path, strings.Join(dev.Holders, ", "))
	case dev.ReadOnly:
		hard = fmt.Sprintf("the kernel marks %s read-only", dev.Path)
	}
	wipe := false
	var refusal string
	switch {
	case hard != "":
		refusal = hard
	case len(inWay) > 0 && !wipeAllowed:
		refusal = fmt.Sprintf("%s holds what Prism did not create: %s; Prism only partitions an empty device or adds to its own layout (list the device in the policy's allowWipe to have it wiped)",
			dev.Path, strings.Join(inWay, "; "))
	case len(inWay) > 0 && len(asPlanned) > 0:
		refusal = fmt.Sprintf("%s is in allowWipe but already carries partitions %s of this plan, which may hold OSD metadata, so Prism does not wipe it; in the way: %s",
			dev.Path, joinInts(sortedKeys(asPlanned)), strings.Join(inWay, "; "))
	case len(inWay) > 0:
		wipe = true
	}
	if refusal != "" {
		d.Refused = truncate(refusal)
		for i := range status {
			if status[i].State != prismv1.PartitionReady {
				status[i].State, status[i].Message = prismv1.PartitionRefused, d.Refused
			}
		}
		return d
	}

	// The steps. On a wiped device every planned partition is created on a fresh table.
	first, last := table.FirstLBA, table.LastLBA
	if wipe || !table.HasTable() {
		var err error
		if first, last, err = gpt.EmptyGeometry(dev.SizeBytes, ss); err != nil {
			return refuseAll(fmt.Sprintf("%s: %v", dev.Path, err))
		}
	}
	create := missing
	if wipe {
		create = make([]int, len(wants))
		for i := range wants {
			create[i] = i
		}
		d.Wipe = true
		d.Steps = append(d.Steps, Step{Kind: StepWipeSignatures}, Step{Kind: StepZapGPT})
		// partx --update never removes a partition that left the table, so the kernel's
		// partitions of the wiped layout are dropped explicitly: every number a GPT holds,
		// and any higher one the kernel lists. (partx exits 1 when there are none.)
		if len(kernel) > 0 || len(unknownKernel) > 0 {
			d.Steps = append(d.Steps, Step{Kind: StepForgetPartitions, MaxNumber: max(maxKey(kernel), gpt.MaxPartitionNumber)})
		}
	}
	if wipe || !table.HasTable() {
		d.Steps = append(d.Steps, Step{Kind: StepCreateTable})
	}
	maxNumber := 0
	for _, w := range wants {
		maxNumber = max(maxNumber, int(w.Number))
	}
	for _, i := range create {
		w := wants[i]
		startLBA, endLBA := w.StartBytes/ss, (w.StartBytes+w.SizeBytes)/ss-1
		if w.StartBytes%ss != 0 || w.SizeBytes%ss != 0 || startLBA < first || endLBA > last {
			return refuseAll(fmt.Sprintf("partition %d (%q at %s, size %s) does not fit %s: usable %d-byte sectors are %d to %d",
				w.Number, w.Label, gpt.FormatBytes(w.StartBytes), gpt.FormatBytes(w.SizeBytes), dev.Path, ss, first, last))
		}
		s := Step{Kind: StepCreatePartition, SectorSize: ss, Partition: gpt.NewPartition{
			Number: int(w.Number), StartBytes: w.StartBytes, SizeBytes: w.SizeBytes, Name: w.Label, TypeGUID: w.TypeGUID,
		}}
		d.Steps = append(d.Steps, s)
		status[i].State, status[i].Message = prismv1.PartitionPending, "to be created: "+strings.Join(s.Argv(dev.Path), " ")
	}
	d.Steps = append(d.Steps, Step{Kind: StepReread, MaxNumber: maxNumber}, Step{Kind: StepSettle})
	for i := range status {
		if status[i].State == "" {
			status[i].State, status[i].Message = prismv1.PartitionPending, "on disk as planned; the kernel has not read it yet"
		}
		if wipe {
			status[i].Message = "to be created after wiping " + dev.Path + ": " + strings.Join(inWay, "; ")
		}
		status[i].Message = truncate(status[i].Message)
	}
	for _, s := range d.Steps {
		if s.Argv(dev.Path) == nil {
			return refuseAll(fmt.Sprintf("cannot build the %s command for %s", s, dev.Path))
		}
	}
	return d
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

// kernelNumbers parses the kernel's partition names of dev (nvme0n1p3, sda3, loop0p3) into
// numbers; names that do not follow the kernel's rule are returned apart.
func kernelNumbers(dev prismv1.Device) (map[int]bool, []string) {
	nums := map[int]bool{}
	var unknown []string
	for _, name := range dev.Partitions {
		n, ok := parsePartitionName(dev.Name, name)
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		nums[n] = true
	}
	return nums, unknown
}

// partitionName is the kernel's name for partition n of disk: disk_name() in the kernel's
// block/partitions/core.c adds "p" when the disk name ends in a digit.
func partitionName(disk string, n int) string {
	if disk != "" && disk[len(disk)-1] >= '0' && disk[len(disk)-1] <= '9' {
		return disk + "p" + strconv.Itoa(n)
	}
	return disk + strconv.Itoa(n)
}

func parsePartitionName(disk, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, disk)
	if !ok || disk == "" {
		return 0, false
	}
	if d := disk[len(disk)-1]; d >= '0' && d <= '9' {
		if rest, ok = strings.CutPrefix(rest, "p"); !ok {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

func sortedKeys(m map[int]bool) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func maxKey(m map[int]bool) int {
	n := 0
	for k := range m {
		n = max(n, k)
	}
	return n
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// truncate keeps a message within the API's limit, on a UTF-8 boundary.
func truncate(s string) string {
	if len(s) <= MaxMessageLength {
		return s
	}
	const ellipsis = "..."
	cut := MaxMessageLength - len(ellipsis)
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + ellipsis
}
