package provision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/gpt"
	"github.com/prism-storage/prism/internal/hostexec"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/signature"
)

// Runner carries out node plans on this host.
type Runner struct {
	// Exec runs every host tool (sfdisk, sgdisk, wipefs, partx, udevadm).
	Exec hostexec.Executor
	// HostRoot is where the host's / is mounted ("/" outside a container): device paths from
	// the inventory (/dev/nvme0n1) and /sys are read under it.
	HostRoot string
	// StepLimit, when positive, stops after that many mutating steps in one Reconcile, as a
	// crash would. Tests use it; the agent leaves it 0.
	StepLimit int

	// allowFiles lets unit tests use a regular file as the device.
	allowFiles bool
}

// Result is one Reconcile.
type Result struct {
	// Partitions is every planned partition's state, by fast device then number.
	Partitions []prismv1.PartitionStatus
	// Changed is true when a step that changes a device or the kernel's view of it ran.
	Changed bool
	// Decisions are the decisions made, one per fast device found in the inventory.
	Decisions []Decision
}

// Reconcile realises plan on the host's fast devices: for each, it reads the partition
// table, decides, and in Apply mode runs the steps and re-reads to confirm. In any other mode
// (DryRun, or no mode) it changes nothing and reports what it would do. devices is the
// node's inventory; a fast device is found by its stable path and used through its kernel path.
func Reconcile(ctx context.Context, exec hostexec.Executor, hostRoot string, p *prismv1.NodePlan, devices []prismv1.Device, mode prismv1.PolicyMode) []prismv1.PartitionStatus {
	return Runner{Exec: exec, HostRoot: hostRoot}.Reconcile(ctx, p, devices, mode).Partitions
}

// Reconcile is the package-level Reconcile with the runner's settings.
func (r Runner) Reconcile(ctx context.Context, p *prismv1.NodePlan, devices []prismv1.Device, mode prismv1.PolicyMode) Result {
	var res Result
	if p == nil {
		return res
	}
	budget := r.StepLimit
	if budget <= 0 {
		budget = -1
	}
	for _, fd := range p.FastDevices {
		statuses, d, changed := r.device(ctx, fd, p.AllowWipe, devices, mode, &budget)
		res.Partitions = append(res.Partitions, statuses...)
		res.Changed = res.Changed || changed
		if d != nil {
			res.Decisions = append(res.Decisions, *d)
		}
	}
	return res
}

func (r Runner) device(ctx context.Context, fd prismv1.FastDevicePlan, allowWipe []string, devices []prismv1.Device, mode prismv1.PolicyMode, budget *int) ([]prismv1.PartitionStatus, *Decision, bool) {
	log := logf.FromContext(ctx).WithValues("device", fd.StablePath)
	all := func(state prismv1.PartitionState, msg string) []prismv1.PartitionStatus {
		var out []prismv1.PartitionStatus
		for _, w := range Wanted(fd) {
			out = append(out, prismv1.PartitionStatus{Device: fd.StablePath, Number: w.Number, Label: w.Label,
				Path: plan.PartitionPath(fd.StablePath, w.Number), State: state, Message: truncate(msg)})
		}
		return out
	}

	i := slices.IndexFunc(devices, func(d prismv1.Device) bool { return d.StablePath == fd.StablePath })
	if i < 0 {
		return all(prismv1.PartitionPending, fmt.Sprintf("%s is not in this node's inventory (absent, or udev has not published the link yet)", fd.StablePath)), nil, false
	}
	dev := *devices[i].DeepCopy()
	path, err := r.hostPath(dev.Path)
	if err != nil {
		return all(prismv1.PartitionRefused, err.Error()), nil, false
	}
	if state, msg := r.checkNode(path, fd.StablePath, dev.Name); state != "" {
		return all(state, msg), nil, false
	}

	table, dev, stale, err := r.observe(ctx, path, dev)
	if err != nil {
		return all(prismv1.PartitionFailed, err.Error()), nil, false
	}
	if len(stale) > 0 {
		// Prism never makes this state (it only adds partitions, and forgets the kernel's
		// partitions before re-partitioning a wiped device), so someone else changed the
		// table under the kernel. partx --update would resize a busy partition in place:
		// leave it to a person.
		return all(prismv1.PartitionRefused, fmt.Sprintf("%s: %s; Prism does not resize partitions the kernel has (check nothing uses them, then run partx --update %s)",
			dev.Path, strings.Join(stale, "; "), dev.Path)), nil, false
	}
	d := Decide(fd, table, dev, slices.Contains(allowWipe, fd.StablePath))
	if len(d.Steps) == 0 {
		return d.Partitions, &d, false
	}
	if mode != prismv1.ModeApply {
		out := slices.Clone(d.Partitions)
		prefix := "dry run: "
		if mode != prismv1.ModeDryRun {
			prefix = fmt.Sprintf("dry run (spec.mode is %q, not Apply): ", mode)
		}
		for i := range out {
			if out[i].State == prismv1.PartitionPending {
				out[i].Message = truncate(prefix + out[i].Message)
			}
		}
		return out, &d, false
	}

	// Apply: run the steps in order, stopping at the first failure (or the step limit).
	log.Info("Provisioning fast device", "path", path, "steps", len(d.Steps), "wipe", d.Wipe)
	var failed error
	var failedStep Step
	changed, stopped := false, false
	for _, s := range d.Steps {
		if s.Mutates() {
			if *budget == 0 {
				stopped = true
				break
			}
			if *budget > 0 {
				*budget--
			}
		}
		changed = changed || s.Mutates()
		if s.Kind == StepCreatePartition {
			// Zero the head, tail and BlueStore label offsets of the range first, so that no
			// stale signature of an earlier life of the device (an old OSD's label, which
			// ceph-volume would take for an existing OSD) shows through the new partition.
			// Safe, and safe to repeat after a crash: the range is no partition's yet.
			if err := clearRegion(path, s.Partition.StartBytes, s.Partition.SizeBytes); err != nil {
				failed, failedStep = err, s
				break
			}
		}
		argv := s.Argv(path)
		log.Info("Running", "step", s.String(), "argv", argv)
		if _, err := r.Exec.Run(ctx, argv, nil); err != nil {
			if s.Optional() {
				// udevadm settle only waits; without udevadm (the agent image has none)
				// nothing waits for the -partN links, and the next inventory sees them.
				if !errors.Is(err, exec.ErrNotFound) {
					log.Info("Optional step failed", "step", s.String(), "error", err.Error())
				}
				continue
			}
			failed, failedStep = err, s
			break
		}
	}

	// Confirm from the device itself, never from the steps' exit codes: partx exits 0 even
	// when the kernel refused a partition.
	after, kernel, kerr := r.readBack(ctx, path, dev.Name)
	out := slices.Clone(d.Partitions)
	for i, w := range Wanted(fd) {
		st := &out[i]
		p, onDisk := after.Partition(int(w.Number))
		k, inKernel := kernel[int(w.Number)]
		switch {
		case kerr != nil:
			st.State, st.Message = prismv1.PartitionFailed, kerr.Error()
		case onDisk && matches(w, p) && (kernel == nil || inKernel && k.matches(p)):
			st.State, st.Message = prismv1.PartitionReady, ""
		case failed != nil:
			st.State, st.Message = prismv1.PartitionFailed, fmt.Sprintf("%s failed: %v", failedStep, failed)
		case stopped:
			st.State, st.Message = prismv1.PartitionPending, fmt.Sprintf("stopped after %d steps (step limit)", r.StepLimit)
		case onDisk && !matches(w, p):
			st.State, st.Message = prismv1.PartitionFailed, fmt.Sprintf("after provisioning the device has %s, not the planned partition", p)
		case onDisk:
			st.State, st.Message = prismv1.PartitionFailed, fmt.Sprintf("partition %d is on disk but the kernel does not list it as such (%s) after partx --update", w.Number, k)
		default:
			st.State, st.Message = prismv1.PartitionFailed, fmt.Sprintf("partition %d is missing after provisioning", w.Number)
		}
		st.Message = truncate(st.Message)
	}
	return out, &d, changed
}

// observe reads what Decide needs fresh from the device: the partition table (sfdisk), the
// whole-device signatures (read now, so an inventory taken moments ago cannot hide a
// filesystem made since) and the kernel's partitions (sysfs). stale lists the kernel
// partitions whose position differs from the table's.
func (r Runner) observe(ctx context.Context, path string, dev prismv1.Device) (table gpt.Table, _ prismv1.Device, stale []string, err error) {
	table, err = gpt.ReadTable(ctx, r.Exec, path)
	if err != nil {
		return gpt.Table{}, dev, nil, err
	}
	sigs, err := signature.DetectPath(path)
	if err != nil {
		return gpt.Table{}, dev, nil, fmt.Errorf("reading the signatures of %s (it cannot be proven empty): %w", path, err)
	}
	dev.Signatures = nil
	for _, s := range sigs {
		dev.Signatures = append(dev.Signatures, prismv1.DeviceSignature{Kind: apiKind(s.Kind), Name: s.Name, OffsetBytes: s.Offset})
	}
	kernel, err := r.kernelPartitions(dev.Name)
	if err != nil {
		return table, dev, nil, nil // keep the inventory's list
	}
	dev.Partitions = nil
	for _, n := range sortedKernel(kernel) {
		if p, ok := table.Partition(n); ok && !kernel[n].matches(p) {
			stale = append(stale, fmt.Sprintf("the kernel has %s at %s, size %s, but the table says %s, size %s", partitionName(dev.Name, n),
				gpt.FormatBytes(kernel[n].start*512), gpt.FormatBytes(kernel[n].size*512), gpt.FormatBytes(p.StartBytes), gpt.FormatBytes(p.SizeBytes)))
		}
		dev.Partitions = append(dev.Partitions, partitionName(dev.Name, n))
	}
	return table, dev, stale, nil
}

// readBack re-reads the table and the kernel's partitions after the steps. kernel is nil when
// sysfs is not readable under HostRoot (then the table alone is checked).
func (r Runner) readBack(ctx context.Context, path, name string) (gpt.Table, map[int]kernelPartition, error) {
	table, err := gpt.ReadTable(ctx, r.Exec, path)
	if err != nil {
		return gpt.Table{}, nil, fmt.Errorf("re-reading after provisioning: %w", err)
	}
	kernel, err := r.kernelPartitions(name)
	if err != nil {
		return table, nil, nil
	}
	return table, kernel, nil
}

// checkNode makes sure path is the block device the plan names: a block device (not a file a
// fixture or a missing /dev mount left), and, when the stable link exists under HostRoot, the
// device it points to (the kernel may rename devices between the inventory and now).
func (r Runner) checkNode(path, stablePath, name string) (prismv1.PartitionState, string) {
	fi, err := os.Stat(path)
	if err != nil {
		return prismv1.PartitionFailed, err.Error()
	}
	if !r.allowFiles && (fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0) {
		return prismv1.PartitionRefused, fmt.Sprintf("%s is not a block device (%s); is --host-root the host's root?", path, fi.Mode().Type())
	}
	link := filepath.Join(cmp.Or(r.HostRoot, "/"), stablePath)
	if target, err := os.Readlink(link); err == nil && filepath.Base(target) != name {
		return prismv1.PartitionPending, fmt.Sprintf("%s now points to %s, not %s as in the inventory; waiting for the next inventory", stablePath, target, name)
	}
	return "", ""
}

// hostPath maps an inventory path (/dev/nvme0n1) under HostRoot.
func (r Runner) hostPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/dev/") || filepath.Clean(p) != p {
		return "", fmt.Errorf("device path %q is not a /dev path", p)
	}
	return filepath.Join(cmp.Or(r.HostRoot, "/"), p), nil
}

// kernelPartition is a partition as the kernel has it, from sysfs (512-byte units).
type kernelPartition struct {
	start, size int64
}

func (k kernelPartition) matches(p gpt.Partition) bool {
	return k.start*512 == p.StartBytes && k.size*512 == p.SizeBytes
}

func (k kernelPartition) String() string {
	if k == (kernelPartition{}) {
		return "not listed"
	}
	return fmt.Sprintf("kernel: start %s, size %s", gpt.FormatBytes(k.start*512), gpt.FormatBytes(k.size*512))
}

// kernelPartitions reads <HostRoot>/sys/class/block/<name>/<part>/{partition,start,size}.
func (r Runner) kernelPartitions(name string) (map[int]kernelPartition, error) {
	if name == "" || strings.ContainsAny(name, "/") {
		return nil, fmt.Errorf("bad device name %q", name)
	}
	dir := filepath.Join(cmp.Or(r.HostRoot, "/"), "sys", "class", "block", name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[int]kernelPartition{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), name) {
			continue
		}
		num, err := readInt(filepath.Join(dir, e.Name(), "partition"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		start, err := readInt(filepath.Join(dir, e.Name(), "start"))
		if err != nil {
			return nil, err
		}
		size, err := readInt(filepath.Join(dir, e.Name(), "size"))
		if err != nil {
			return nil, err
		}
		out[int(num)] = kernelPartition{start: start, size: size}
	}
	return out, nil
}

func sortedKernel(m map[int]kernelPartition) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// apiKind maps the detector's signature kinds to the API's (as the inventory does).
func apiKind(k signature.Kind) prismv1.SignatureKind {
	switch k {
	case signature.PartitionTable:
		return prismv1.SignaturePartitionTable
	case signature.Filesystem:
		return prismv1.SignatureFilesystem
	case signature.LVM:
		return prismv1.SignatureLVM
	case signature.CephBlueStore:
		return prismv1.SignatureCephBlueStore
	case signature.OpenCAS:
		return prismv1.SignatureOpenCAS
	case signature.Swap:
		return prismv1.SignatureSwap
	case signature.RAID:
		return prismv1.SignatureRAID
	}
	return prismv1.SignatureOther
}

// clearSpan is how much of a new partition's head and tail is zeroed: GPT, LVM, MD, most
// filesystems and BlueStore's first label live in the first MiB; MD 0.90/1.0 and the backup
// superblocks of some filesystems in the last.
const clearSpan = int64(1) << 20

// clearRegion zeroes the head and tail of [start, start+size) on the device at path, and
// the BlueStore label replica offsets inside it (signature.BlueStoreLabelOffsets), then
// syncs. The caller guarantees the range is no partition's (it is about to become one):
// Decide creates partitions only on an empty device, a wiped granted one, or in the free
// space of a GPT holding nothing but this plan's partitions.
func clearRegion(path string, start, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	zero := make([]byte, clearSpan)
	write := func(off, n int64) error {
		if n <= 0 {
			return nil
		}
		if _, err := f.WriteAt(zero[:n], start+off); err != nil {
			return fmt.Errorf("zeroing %d bytes at %d: %w", n, start+off, err)
		}
		return nil
	}
	if err := write(0, min(clearSpan, size)); err != nil {
		return err
	}
	if err := write(max(size-clearSpan, 0), min(clearSpan, size)); err != nil {
		return err
	}
	for _, off := range signature.BlueStoreLabelOffsets {
		if off > 0 && off+4096 <= size {
			if err := write(off, 4096); err != nil {
				return err
			}
		}
	}
	return f.Sync()
}
