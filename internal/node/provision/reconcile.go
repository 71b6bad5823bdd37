package provision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/gpt"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// Runner carries out node plans on this host.
type Runner struct {
	// Exec runs every host tool (wipefs, blkid, sfdisk, partx, udevadm).
	Exec hostexec.Executor
	// Open opens a device to write it (hostexec.OpenDevice when nil).
	Open hostexec.DeviceOpener
	// HostRoot is where the host's / is mounted ("/" outside a container): device paths from
	// the inventory (/dev/nvme0n1), /sys and /proc/1/mountinfo are read under it.
	HostRoot string
	// StepLimit, when positive, stops after that many mutating steps in one Reconcile, as a
	// crash would. Tests use it; the agent leaves it 0.
	StepLimit int
	// Volumes makes an LVM logical volume on each Ready DB slot partition, which the Rook
	// entry then names (decision 0036); off, the entry names the partition. Never on a node
	// with a cache, whose claims take the partitions as they are. Exec must then run
	// LVM's commands where the host's LVM runs them (hostexec.InHostMountNamespace in a pod).
	Volumes bool
	// Proc is where the processes that hold a device open are found (procfs.Proc; Dir "/proc"
	// when empty: the host's with hostPID). Test harnesses set Ignore.
	Proc procfs.Proc
	// IntentDir is where the volume phase records, before pvcreate, that Prism makes a
	// partition's PV (the agent's --state-dir, on the host): a pvcreate or vgcreate of Prism's
	// cut short is then made again (decision 0039). Empty: no record, and such a partition is
	// refused as not proven empty.
	IntentDir string

	// allowFiles lets unit tests use a regular file as the device.
	allowFiles bool
	// readSparse is SparseRead when nil; tests count the reads through it.
	readSparse func(ctx context.Context, path string, start, size int64) (Sparse, error)
	// loopBackings is the host's sysfs.LoopBackings when nil; tests play loop devices on
	// their fixture partitions through it.
	loopBackings func() ([]sysfs.LoopBacking, error)
}

// Result is one Reconcile.
type Result struct {
	// Partitions is every planned partition's state, by fast device then number.
	Partitions []prismv1.PartitionStatus
	// Changed is true when a step that changes a device or the kernel's view of it ran.
	Changed bool
	// Wrote is true when a step wrote a device: a table, a wipe, an LVM label, volume group
	// or logical volume. A re-read of the table or an LV's activation changes only the
	// kernel's view: after a reboot they make nothing that was not there.
	Wrote bool
	// Decisions are the decisions made, one per fast device found in the inventory.
	Decisions []Decision
}

// Reconcile realises plan on the host's fast devices (see Runner.Reconcile).
func Reconcile(ctx context.Context, exec hostexec.Executor, hostRoot string, p *prismv1.NodePlan, devices []prismv1.Device, mode prismv1.PolicyMode) []prismv1.PartitionStatus {
	return Runner{Exec: exec, HostRoot: hostRoot}.Reconcile(ctx, p, devices, mode).Partitions
}

// Reconcile realises plan on the host's fast devices: for each, it observes the device,
// decides, and in Apply mode holds the device exclusively and runs the writes one at a time,
// observing and deciding again before each; then it tells the kernel and confirms from a last
// observation. In any other mode (DryRun, or no mode) it changes nothing and reports what it
// would do. devices is the node's inventory; a fast device is found by its stable path and
// used through its kernel path.
func (r Runner) Reconcile(ctx context.Context, p *prismv1.NodePlan, devices []prismv1.Device, mode prismv1.PolicyMode) Result {
	var res Result
	if p == nil {
		return res
	}
	if p.OnClaims() {
		// The OSDs of a node with a cache get the slot partition itself as their DB through
		// a claim (raw prepare, decision 0010): it must stay bare of LVM (decision 0036).
		r.Volumes = false
	}
	budget := r.StepLimit
	if budget <= 0 {
		budget = -1
	}
	for _, fd := range p.FastDevices {
		statuses, d, changed, wrote := r.device(ctx, fd, slices.Contains(p.AllowWipe, fd.StablePath), devices, mode, &budget)
		res.Partitions = append(res.Partitions, statuses...)
		res.Changed = res.Changed || changed
		res.Wrote = res.Wrote || wrote
		if d != nil {
			res.Decisions = append(res.Decisions, *d)
		}
	}
	return res
}

// fresh is one observation and the decision on it.
type fresh struct {
	obs   Observation
	d     Decision
	stale []string
}

// newSpace says how decide treats the space a table write would cover for the first time.
type newSpace struct {
	// skip leaves it unread: only for a decision nothing is written on (the one before the
	// hold in Apply, which the decision under the hold replaces before any write).
	skip bool
	// whole is this pass's sparse read of the whole device, when nothing was written since.
	whole *Sparse
}

// decide observes the device and decides; when the decision writes a table over space no
// partition covered yet, that space is read sparsely (as ns says) and the decision made again.
func (r Runner) decide(ctx context.Context, path string, dev prismv1.Device, fd prismv1.FastDevicePlan, wipeAllowed bool, ns newSpace) (fresh, error) {
	obs, stale, err := r.observe(ctx, path, dev, fd)
	if err != nil {
		return fresh{}, err
	}
	if _, ok := obs.Disk.Best(); !ok && !wipeAllowed && ns.whole != nil {
		obs.Whole = ns.whole
	}
	d := Decide(fd, obs, wipeAllowed)
	if !wipeAllowed && !ns.skip {
		read, err := readNewSpace(ctx, path, fd, &obs, d, r.sparseReader())
		if err != nil {
			return fresh{}, err
		}
		if read {
			d = Decide(fd, obs, wipeAllowed)
		}
	}
	return fresh{obs: obs, d: d, stale: stale}, nil
}

func (r Runner) device(ctx context.Context, fd prismv1.FastDevicePlan, wipeAllowed bool, devices []prismv1.Device, mode prismv1.PolicyMode, budget *int) ([]prismv1.PartitionStatus, *Decision, bool, bool) {
	log := logf.FromContext(ctx).WithValues("device", fd.StablePath)
	all := func(state prismv1.PartitionState, msg string) []prismv1.PartitionStatus {
		var out []prismv1.PartitionStatus
		for _, w := range Wanted(fd) {
			out = append(out, prismv1.PartitionStatus{Device: fd.StablePath, Number: w.Number, Label: w.Label,
				Path: prismv1.PartitionPath(fd.StablePath, w.Number), State: state, Message: truncate(msg)})
		}
		return out
	}

	i := slices.IndexFunc(devices, func(d prismv1.Device) bool { return d.StablePath == fd.StablePath })
	if i < 0 {
		return all(prismv1.PartitionPending, fmt.Sprintf("%s is not in this node's inventory (absent, or udev has not published the link yet)", fd.StablePath)), nil, false, false
	}
	if why := ambiguous(devices, fd.StablePath); why != "" {
		return all(prismv1.PartitionRefused, why), nil, false, false
	}
	dev := *devices[i].DeepCopy()
	path, err := r.hostPath(dev.Path)
	if err != nil {
		return all(prismv1.PartitionRefused, err.Error()), nil, false, false
	}
	if state, msg := r.checkNode(path, fd.StablePath, dev.Name); state != "" {
		return all(state, msg), nil, false, false
	}
	// In Apply, the decision under the hold reads the new space before the first write;
	// reading it here too read an 800 GB device twice in the pass that writes its first table
	// (ten minutes each under emulation, half a second on an Optane).
	first, err := r.decide(ctx, path, dev, fd, wipeAllowed, newSpace{skip: mode == prismv1.ModeApply})
	if ierr := (*IdentityError)(nil); errors.As(err, &ierr) {
		return all(prismv1.PartitionRefused, err.Error()), nil, false, false
	}
	if err != nil {
		return all(prismv1.PartitionFailed, err.Error()), nil, false, false
	}
	if refused := r.staleRefusal(first, dev.Path); refused != nil {
		return all(prismv1.PartitionRefused, *refused), nil, false, false
	}
	d := first.d
	if len(d.Steps) == 0 {
		out := slices.Clone(d.Partitions)
		changed, wrote := false, false
		if r.Volumes {
			changed, wrote = r.volumes(ctx, path, dev, fd, wipeAllowed, mode, budget, first, out)
		}
		r.dbContents(ctx, fd, first.obs, out)
		return out, &d, changed, wrote
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
		if r.Volumes {
			r.volumes(ctx, path, dev, fd, wipeAllowed, mode, budget, first, out)
		}
		r.dbContents(ctx, fd, first.obs, out)
		return out, &d, false, false
	}

	log.Info("Provisioning fast device", "path", path, "steps", len(d.Steps), "wipe", d.Wipe)
	changed, stopped, failed, whole := r.apply(ctx, path, dev, fd, wipeAllowed, budget, first)
	// The table steps ran under the hold; without a device write among them only the kernel's
	// view changed.
	wrote := changed && slices.ContainsFunc(d.Steps, Step.WritesDevice)

	// Confirm from a last observation of the device, never from the steps' exit codes: partx
	// exits 0 even when the kernel refused a partition. A device the hold found not empty is
	// not read again: nothing was written since.
	last, err := r.decide(ctx, path, dev, fd, wipeAllowed, newSpace{whole: whole})
	if err != nil {
		return all(prismv1.PartitionFailed, "re-reading after provisioning: "+err.Error()), &d, changed, wrote
	}
	out := last.d.Partitions
	disagree := r.crossCheck(ctx, path, last.obs)
	for i := range out {
		st := &out[i]
		switch {
		case st.State == prismv1.PartitionReady && disagree != "":
			st.State, st.Message = prismv1.PartitionFailed, disagree
		case st.State == prismv1.PartitionReady || st.State == prismv1.PartitionRefused:
		case failed != nil:
			st.State, st.Message = prismv1.PartitionFailed, failed.Error()
		case stopped:
			st.State, st.Message = prismv1.PartitionPending, fmt.Sprintf("stopped after %d steps (step limit)", r.StepLimit)
		default:
			st.State, st.Message = prismv1.PartitionFailed, "after provisioning: "+st.Message
		}
		st.Message = truncate(st.Message)
	}
	if r.Volumes {
		// After a step limit too: the partitions may be Ready (udev had the kernel read the
		// table), and each volume then says it stopped rather than being left out.
		ran, made := r.volumes(ctx, path, dev, fd, wipeAllowed, mode, budget, last, out)
		changed, wrote = changed || ran, wrote || made
	}
	r.dbContents(ctx, fd, last.obs, out)
	return out, &d, changed, wrote
}

// apply runs the decision's steps: the device writes under an exclusive hold, each after a
// fresh observation and decision (so mounts, holders, read-only and signatures are read again
// immediately before every write), then the kernel steps of a last decision.
func (r Runner) apply(ctx context.Context, path string, dev prismv1.Device, fd prismv1.FastDevicePlan, wipeAllowed bool, budget *int, first fresh) (changed, stopped bool, failed error, whole *Sparse) {
	log := logf.FromContext(ctx).WithValues("device", fd.StablePath)
	if slices.ContainsFunc(first.d.Steps, Step.WritesDevice) {
		// One thread makes every write of the pass: test/crash counts writes per thread when
		// it kills the partitioner at each of them in turn.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		hold, err := r.hold(path, first.obs, first.d.Wipe)
		if err != nil {
			return false, false, err, nil
		}
		defer hold.Close()
		// The device held now is the one every write goes to: it must be the one the
		// inventory read and the plan names (the name may have moved on since the look).
		if s, ok := hold.(statter); ok {
			if err := r.checkIdentity(s, path, dev, fd.Identity); err != nil {
				return false, false, err, nil
			}
		}
		var lastKind StepKind
		for range 8 { // forget, wipe, zero, zero, write: five at most; more means the device keeps changing
			now, err := r.decide(ctx, path, dev, fd, wipeAllowed, newSpace{})
			if err != nil {
				return changed, false, err, nil
			}
			if refused := r.staleRefusal(now, dev.Path); refused != nil {
				return changed, false, errors.New(*refused), nil
			}
			if now.d.Refused != "" {
				if !changed {
					whole = now.obs.Whole
				}
				return changed, false, fmt.Errorf("refused on a fresh look just before writing: %s", now.d.Refused), whole
			}
			i := slices.IndexFunc(now.d.Steps, Step.WritesDevice)
			if i < 0 {
				break
			}
			if !spend(budget) {
				return changed, true, nil, nil
			}
			s := now.d.Steps[i]
			if s.Kind == lastKind && s.Kind != StepForgetPartitions {
				return changed, false, fmt.Errorf("after %s the device still needs it: %s", s.Kind, strings.Join(partitionMessages(now.d), "; ")), nil
			}
			lastKind = s.Kind
			log.Info("Writing", "step", s.String())
			changed = true
			if err := r.write(ctx, hold, s); err != nil {
				return changed, false, fmt.Errorf("%s failed: %w", s.Kind, err), nil
			}
		}
		if err := hold.Close(); err != nil {
			return changed, false, err, nil
		}
	}

	// Tell the kernel, from what is on the device now, through a pin: the hold is closed, and
	// partx given the kernel name could reach another disk that took it since.
	pin, err := r.pin(path, dev, fd)
	if err != nil {
		return changed, false, err, nil
	}
	defer pin.Close()
	now, err := r.decide(ctx, path, dev, fd, wipeAllowed, newSpace{})
	if err != nil {
		return changed, false, err, nil
	}
	for _, s := range now.d.Steps {
		if s.WritesDevice() {
			return changed, false, fmt.Errorf("the device still needs %s after writing it", s.Kind), nil
		}
		if s.Mutates() && !spend(budget) {
			return changed, true, nil, nil
		}
		argv := s.Argv(hostexec.HeldPath(pin))
		log.Info("Running", "step", s.String(), "device", path, "argv", argv)
		changed = changed || s.Mutates()
		if _, err := r.Exec.Run(ctx, argv, nil); err != nil {
			if s.Optional() {
				// udevadm settle only waits; without udevadm (the agent image has none)
				// nothing waits for the -partN links, and the next inventory sees them.
				if !errors.Is(err, exec.ErrNotFound) {
					log.Info("Optional step failed", "step", s.String(), "error", err.Error())
				}
				continue
			}
			return changed, false, fmt.Errorf("%s failed: %w", s, err), nil
		}
	}
	return changed, false, nil, nil
}

// hold opens the device for writing, exclusively: the kernel then refuses every mount, swap,
// driver and exclusive opener of the device or its partitions until Prism is done. A device
// whose own Prism partitions are in use (an OSD's DB behind device-mapper, an Open CAS cache)
// cannot be held whole, and needs no hold to be extended: the kernel refuses to claim a whole
// device while any of its partitions is claimed, and Prism writes only its own table and the
// free ranges no partition covers yet. That is accepted only when the refusal is proven to come
// from such partitions (claimedPartitions), and never for a wipe.
func (r Runner) hold(path string, obs Observation, wipe bool) (hostexec.Device, error) {
	open := r.opener()
	f, err := open(path, true)
	if err == nil || !errors.Is(err, syscall.EBUSY) {
		return f, err
	}
	claimed := r.claimedPartitions(obs)
	if wipe || len(claimed) == 0 || len(obs.Device.Holders) > 0 || !obs.Disk.Complete() {
		return nil, fmt.Errorf("%s is in use (the kernel refuses an exclusive open: mounted, swapped on, or held by a driver or another program): %w", path, err)
	}
	logf.Log.Info("Device busy through its partitions in use; writing without a whole-device hold", "path", path, "claimed", claimed)
	return open(path, false)
}

// claimedPartitions lists the kernel partitions of the device that are provably claimed, which
// is what makes a whole-device hold fail: a partition whose exclusive open fails while another
// partition's succeeds (were the whole device claimed by another, every partition's would
// fail), or one with a holder in sysfs (device-mapper, md) or a mount. The kernel never lets
// anyone claim a whole device while one of its partitions is claimed. Nil when nothing proves
// it: then the whole device may be held by another, and Prism does not write.
func (r Runner) claimedPartitions(obs Observation) []string {
	open := r.opener()
	var busy []string
	free, proven := false, false
	for _, name := range obs.Device.Partitions {
		f, err := open(filepath.Join(cmp.Or(r.HostRoot, "/"), "dev", name), true)
		if err == nil {
			f.Close()
			free = true
			continue
		}
		if !errors.Is(err, syscall.EBUSY) {
			continue
		}
		busy = append(busy, name)
		n, _ := parsePartitionName(obs.Device.Name, name)
		mounted := slices.ContainsFunc(obs.Mounts, func(m string) bool { return strings.HasPrefix(m, name+" on ") })
		proven = proven || len(obs.PartitionHolders[n]) > 0 || mounted
	}
	if len(busy) == 0 || !proven && !free {
		return nil
	}
	return busy
}

// write carries out one device-writing step through the hold.
func (r Runner) write(ctx context.Context, hold hostexec.Device, s Step) error {
	switch s.Kind {
	case StepWipeSignatures, StepForgetPartitions:
		// On the held device itself, not its kernel name (decision 0062). wipefs opens it
		// O_RDWR without O_EXCL under --force (util-linux 2.38), so the hold does not fail it;
		// partx opens it read-only and deletes through BLKPG.
		_, err := r.Exec.Run(ctx, s.Argv(hostexec.HeldPath(hold)), nil)
		return err
	case StepZeroRegions:
		cur, err := hostexec.OpenDirect(hostexec.HeldPath(hold))
		if err != nil {
			return err
		}
		defer cur.Close()
		for _, reg := range s.Regions {
			if err := writeUnlessEqual(hold, hostexec.DirectReader{F: cur}, make([]byte, reg.Bytes), reg.Offset); err != nil {
				return fmt.Errorf("zeroing %s: %w", reg.What, err)
			}
		}
		return hold.Sync()
	case StepWriteTable:
		// Backup copy, primary copy, protective MBR, each made durable before the next: a
		// crash leaves at most one torn copy, and only Prism's structures or zeros (Decide
		// then writes the table again whole).
		writes, err := s.Table.Writes()
		if err != nil {
			return err
		}
		cur, err := hostexec.OpenDirect(hostexec.HeldPath(hold))
		if err != nil {
			return err
		}
		defer cur.Close()
		for i, w := range writes {
			if err := writeUnlessEqual(hold, hostexec.DirectReader{F: cur}, w.Data, w.Offset); err != nil {
				return fmt.Errorf("writing the %s: %w", w.What, err)
			}
			if i == 1 || i == 3 || i == 4 {
				if err := hold.Sync(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("%s does not write the device", s.Kind)
}

// writeUnlessEqual writes data at off unless the device holds it already: a pass that
// repeats a write after a crash changes only what differs. What it holds is read through
// view, the device read uncached (a stale page must not skip a write).
func writeUnlessEqual(dev hostexec.Device, view io.ReaderAt, data []byte, off int64) error {
	cur := make([]byte, len(data))
	if _, err := view.ReadAt(cur, off); err != nil {
		return err
	}
	if slices.Equal(cur, data) {
		return nil
	}
	_, err := dev.WriteAt(data, off)
	return err
}

// crossCheck reads the table with sfdisk (libfdisk, an independent reader) and reports any
// difference from Prism's own reading; "" when they agree.
func (r Runner) crossCheck(ctx context.Context, path string, obs Observation) string {
	mine := obs.Disk.Table()
	if !obs.Disk.Complete() {
		return ""
	}
	theirs, err := gpt.ReadTable(ctx, r.Exec, path)
	if err != nil {
		return "sfdisk cannot read the table Prism wrote: " + err.Error()
	}
	if !strings.EqualFold(theirs.ID, mine.ID) || len(theirs.Partitions) != len(mine.Partitions) {
		return fmt.Sprintf("sfdisk reads disk %s with %d partitions, Prism %s with %d", theirs.ID, len(theirs.Partitions), mine.ID, len(mine.Partitions))
	}
	for i, p := range mine.Partitions {
		q := theirs.Partitions[i]
		if p.Number != q.Number || p.StartBytes != q.StartBytes || p.SizeBytes != q.SizeBytes || p.Name != q.Name || !strings.EqualFold(p.TypeGUID, q.TypeGUID) {
			return fmt.Sprintf("sfdisk reads %s where Prism reads %s", q, p)
		}
	}
	return ""
}

// staleRefusal refuses a device whose kernel partitions differ from its table. Prism never
// makes this state (it only adds partitions, and forgets the kernel's partitions before
// re-partitioning a wiped device), so someone else changed the table under the kernel.
// partx --update would resize a busy partition in place: leave it to a person.
func (r Runner) staleRefusal(f fresh, path string) *string {
	if len(f.stale) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s: %s; Prism does not resize partitions the kernel has (check nothing uses them, then run partx --update %s)",
		path, strings.Join(f.stale, "; "), path)
	return &msg
}

// checkNode makes sure path is the block device the plan names: a block device (not a file a
// fixture or a missing /dev mount left), and the device the stable link points to under
// HostRoot (the kernel may rename devices between the inventory and now). A link gone where
// udev keeps its links means the device left; without udev's links the identity check
// (checkIdentity, on every observation and under the hold) tells devices apart.
func (r Runner) checkNode(path, stablePath, name string) (prismv1.PartitionState, string) {
	fi, err := os.Stat(path)
	if err != nil {
		return prismv1.PartitionFailed, err.Error()
	}
	if !r.allowFiles && (fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0) {
		return prismv1.PartitionRefused, fmt.Sprintf("%s is not a block device (%s); is --host-root the host's root?", path, fi.Mode().Type())
	}
	link := filepath.Join(cmp.Or(r.HostRoot, "/"), stablePath)
	gone, err := r.linkGone(stablePath)
	if err != nil {
		return prismv1.PartitionFailed, fmt.Sprintf("reading the link %s: %v", stablePath, err)
	}
	if gone {
		return prismv1.PartitionPending, fmt.Sprintf("%s is gone: the device the inventory found under it (%s) has left, and that kernel name may belong to another device now; waiting for the next inventory", stablePath, name)
	}
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

func (r Runner) opener() hostexec.DeviceOpener {
	if r.Open != nil {
		return r.Open
	}
	return hostexec.OpenDevice
}

// partitionMessages are the distinct messages of a decision's partitions.
func partitionMessages(d Decision) []string {
	var out []string
	for _, p := range d.Partitions {
		if p.Message != "" && !slices.Contains(out, p.Message) {
			out = append(out, p.Message)
		}
	}
	return out
}
