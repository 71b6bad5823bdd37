package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/lvm"
	"github.com/prism-storage/prism/internal/node/dbvolume"
)

// volumeSteps bounds one slot's LVM steps in one pass: a torn head cleared, pvcreate,
// vgcreate, lvcreate, lvchange. More would mean the host keeps changing under Prism.
const volumeSteps = 5

// bluestoreLabel is the name libblkid and Prism's detector give BlueStore's label.
const bluestoreLabel = "ceph_bluestore"

// volumes is a fast device's second phase (decision 0036): each DB slot whose partition the
// GPT phase reports Ready gets an LVM logical volume filling it, which the Rook entry names
// (ceph-volume 20 loses a partition given as block.db, not an LV). It fills in parts[i].Volume
// and reports whether an LVM command ran, and whether one wrote (anything but an activation).
// now is the GPT phase's last observation.
func (r Runner) volumes(ctx context.Context, path string, dev prismv1.Device, fd prismv1.FastDevicePlan, wipeAllowed bool, mode prismv1.PolicyMode, budget *int, now fresh, parts []prismv1.PartitionStatus) (changed, wrote bool) {
	v := volumeRun{r: r, path: path, dev: dev, fd: fd, wipeAllowed: wipeAllowed, now: now}
	for _, s := range fd.Slots {
		i := slices.IndexFunc(parts, func(p prismv1.PartitionStatus) bool { return p.Number == s.Partition.Number })
		if i < 0 || parts[i].State != prismv1.PartitionReady {
			continue
		}
		st, ran := v.slot(ctx, s, mode, budget)
		st.Message = truncate(st.Message)
		parts[i].Volume = &st
		changed = changed || ran
	}
	return changed, v.wrote
}

// volumeRun is one device's volume phase: the latest observation of the device and LVM
// report, read again before every LVM command.
type volumeRun struct {
	r           Runner
	path        string
	dev         prismv1.Device
	fd          prismv1.FastDevicePlan
	wipeAllowed bool
	now         fresh
	report      *lvm.Report
	// torn caches, by partition number, what the slot's partition holds of Prism's LVM cut
	// short (tornHead), read with now and report and dropped with them.
	torn map[int]tornRead
	// proven is set when now and report were read after the last LVM command ran.
	proven bool
	// wrote is set once a step other than an activation ran: a device was written.
	wrote bool
}

type tornRead struct {
	intent bool
	head   *lvm.Head
}

// refresh observes the device and reads LVM again.
func (v *volumeRun) refresh(ctx context.Context) error {
	now, err := v.r.decide(ctx, v.path, v.dev, v.fd, v.wipeAllowed, newSpace{})
	if err != nil {
		return fmt.Errorf("observing %s: %w", v.path, err)
	}
	rep, err := lvm.Read(ctx, v.r.Exec)
	if err != nil {
		return err
	}
	v.now, v.report, v.proven, v.torn = now, &rep, true, nil
	return nil
}

// slot takes one DB slot as far as it can go in this pass: it decides on what is known, and
// before each LVM command observes again and decides again, so that the proof pvcreate needs
// (the partition Prism's, empty, unheld, unmounted, without LVM) is never older than the
// command.
func (v *volumeRun) slot(ctx context.Context, s prismv1.DBSlot, mode prismv1.PolicyMode, budget *int) (prismv1.DBVolumeStatus, bool) {
	log := logf.FromContext(ctx).WithValues("device", v.fd.StablePath, "partition", s.Partition.Number)
	vg, lv, err := prismv1.DBVolumeNames(v.fd.StablePath, s.Index)
	st := prismv1.DBVolumeStatus{Path: lvm.LVPath(vg, lv)}
	if err != nil {
		st.State, st.Message = prismv1.DBVolumeRefused, err.Error()
		return st, false
	}
	fail := func(err error) (prismv1.DBVolumeStatus, bool) {
		st.State, st.Message = prismv1.DBVolumeFailed, err.Error()
		return st, false
	}
	ran := false
	for steps := 0; ; {
		if v.report == nil {
			if err := v.refresh(ctx); err != nil {
				return fail(err)
			}
		}
		slot, pending := v.observed(s, vg, lv)
		if pending != "" {
			st.State, st.Message = prismv1.DBVolumePending, pending
			return st, ran
		}
		if inUse := v.rawOSD(int(s.Partition.Number), slot); inUse != "" {
			st.State, st.Message = prismv1.DBVolumePartitionInUse, inUse
			return st, ran
		}
		d := dbvolume.Decide(slot, *v.report)
		switch d.Action {
		case dbvolume.Ready:
			st.State, st.Message, st.SizeBytes = prismv1.DBVolumeReady, d.Message, d.Size
			return st, ran
		case dbvolume.Refused:
			st.State, st.Message = prismv1.DBVolumeRefused, d.Message
			if d.CephVolume {
				st.State = prismv1.DBVolumePartitionInUse
			}
			return st, ran
		}
		if mode != prismv1.ModeApply {
			st.State, st.Message = prismv1.DBVolumePending, "dry run: "+d.Message
			return st, ran
		}
		if !v.proven {
			if err := v.refresh(ctx); err != nil {
				return fail(err)
			}
			continue
		}
		if steps == volumeSteps {
			return fail(fmt.Errorf("after %d LVM commands the volume still needs %s: %s", steps, d.Action, d.Message))
		}
		if !spend(budget) {
			st.State, st.Message = prismv1.DBVolumePending, fmt.Sprintf("stopped before %s (step limit)", d.Action)
			return st, ran
		}
		steps++
		log.Info("Running", "step", d.Action, "argv", d.Argv)
		v.proven, ran = false, true
		v.wrote = v.wrote || d.Action != dbvolume.Activate
		if err := v.run(ctx, d, slot); err != nil {
			v.report, v.torn = nil, nil // whatever the step left is read again next time
			if ierr := (*IdentityError)(nil); errors.As(err, &ierr) {
				st.State, st.Message = prismv1.DBVolumeRefused, fmt.Sprintf("not running %s: %s", d.Action, err)
				return st, ran
			}
			return fail(fmt.Errorf("%s failed: %w", d.Action, err))
		}
	}
}

// run takes one step. Before pvcreate Prism records its intent (decision 0039), so that the
// pvcreate or a vgcreate after it, cut short, is known as Prism's own; clearing a torn head is
// Prism's own write.
//
// Each step runs with the fast device pinned, its identity and the partition's checked just
// before (pin, checkPartitionOf): the look that decided may be older than the partition's name.
func (v *volumeRun) run(ctx context.Context, d dbvolume.Decision, slot dbvolume.Slot) error {
	pin, err := v.r.pin(v.path, v.dev, v.fd)
	if err != nil {
		return err
	}
	defer pin.Close()
	if err := v.r.checkPartitionOf(pin, slot); err != nil {
		return err
	}
	switch d.Action {
	case dbvolume.ClearHead:
		return v.r.clearHead(slot, *slot.Head)
	case dbvolume.CreatePV:
		if v.r.IntentDir != "" {
			if err := v.r.recordIntent(slot.PartUUID, slot.VG); err != nil {
				return err
			}
		}
	}
	_, err = v.r.Exec.Run(ctx, d.Argv, nil)
	return err
}

// observed is the slot as the latest observation has it, or why its partition is not Ready
// there (the device changed since the GPT phase).
func (v *volumeRun) observed(s prismv1.DBSlot, vg, lv string) (dbvolume.Slot, string) {
	n := int(s.Partition.Number)
	i := slices.IndexFunc(v.now.d.Partitions, func(p prismv1.PartitionStatus) bool { return p.Number == s.Partition.Number })
	if i < 0 || v.now.d.Partitions[i].State != prismv1.PartitionReady {
		return dbvolume.Slot{}, fmt.Sprintf("partition %d is not Ready on a fresh look", n)
	}
	if len(v.now.stale) > 0 {
		return dbvolume.Slot{}, "the kernel's partitions differ from the table: " + strings.Join(v.now.stale, "; ")
	}
	obs := v.now.obs
	name := partitionName(obs.Device.Name, n)
	slot := dbvolume.Slot{Partition: "/dev/" + name, VG: vg, LV: lv}
	if p, ok := obs.Disk.Table().Partition(n); ok {
		slot.PartUUID = p.UUID
	}
	slot.Major, slot.Minor = parseDevNumber(obs.PartitionDev[n])
	var unproven []string
	if c := obs.Content[n]; !c.Empty() {
		unproven = append(unproven, "it holds "+c.String())
	}
	if hs := obs.PartitionHolders[n]; len(hs) > 0 {
		unproven = append(unproven, "held by "+strings.Join(hs, ", "))
	}
	var mounts []string
	for _, m := range obs.Mounts {
		if strings.HasPrefix(m, name+" on ") {
			mounts = append(mounts, m)
			unproven = append(unproven, "mounted: "+m)
		}
	}
	slot.Unproven = strings.Join(unproven, "; ")
	// Only a partition not proven empty, on which LVM lists no PV or one of the VG [unknown],
	// may hold Prism's LVM cut short; others are not read again.
	if slot.Unproven != "" && v.r.IntentDir != "" && v.mayBeTorn(slot) {
		tr, ok := v.torn[n]
		if !ok {
			tr = tornRead{v.r.hasIntent(slot.PartUUID, vg), v.r.tornHead(slot, obs.Content[n], obs.PartitionHolders[n], mounts)}
			if v.torn == nil {
				v.torn = map[int]tornRead{}
			}
			v.torn[n] = tr
		}
		slot.Intent, slot.Head = tr.intent, tr.head
	}
	return slot, ""
}

// mayBeTorn reports whether LVM lists no PV on the slot's partition, or only one in the VG
// [unknown]: the states a pvcreate or vgcreate cut short leaves.
func (v *volumeRun) mayBeTorn(slot dbvolume.Slot) bool {
	for _, p := range v.report.PVs {
		if p.Major == slot.Major && p.Minor == slot.Minor && !p.VGUnknown {
			return false
		}
	}
	return true
}

// rawOSD says why the slot's partition is an OSD's DB as it is: it holds BlueStore's label
// and no LVM physical volume (ceph-volume raw, or Ceph 16's lvm prepare of a partition). Its
// entry keeps naming the partition; no volume is made. "" otherwise.
func (v *volumeRun) rawOSD(n int, slot dbvolume.Slot) string {
	if !slices.Contains(v.now.obs.Content[n].Found, bluestoreLabel) {
		return ""
	}
	if slices.ContainsFunc(v.report.PVs, func(p lvm.PV) bool { return p.Major == slot.Major && p.Minor == slot.Minor }) {
		return ""
	}
	return fmt.Sprintf("%s holds a BlueStore label and no LVM: an OSD's DB on the partition itself, which its Rook entry keeps naming", slot.Partition)
}

// parseDevNumber parses sysfs's "major:minor"; 0, 0 when it cannot.
func parseDevNumber(s string) (int, int) {
	a, b, ok := strings.Cut(s, ":")
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0
	}
	return major, minor
}

// spend takes one mutating step from the budget (negative: unlimited); false when none is left.
func spend(budget *int) bool {
	if *budget == 0 {
		return false
	}
	if *budget > 0 {
		*budget--
	}
	return true
}
