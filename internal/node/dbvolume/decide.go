// Package dbvolume decides, purely, the next step towards a DB slot's logical volume
// (decision 0035 option 2; docs/decisions/0036-db-slots-as-lvs.md, accepted): ceph-volume 20
// loses a GPT partition given as block.db, so the agent wraps each Ready DB slot partition in
// LVM, one PV on the partition, one VG per slot, one LV filling it, and Rook is handed
// /dev/<vg>/<lv>. internal/node/provision calls Decide for each Ready DB slot when its Runner
// makes volumes.
package dbvolume

import (
	"fmt"
	"slices"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"

	"github.com/prism-storage/prism/internal/host/lvm"
)

// MaxMessageLength is the API's limit on a status message.
const MaxMessageLength = prismv1.MaxMessageLength

// Slot is one Ready DB slot partition as observed just before the decision.
type Slot struct {
	// Partition is the partition's kernel path (/dev/nvme0n1p1), what pvcreate and vgcreate get.
	Partition string
	// Major and Minor are the partition's device number (sysfs): how its PV is found in the
	// report, whatever /dev name LVM prints.
	Major, Minor int
	// PartUUID is the partition's GPT unique GUID, as Prism read it from the table.
	PartUUID string
	// VG and LV are the slot's names (prismv1.DBVolumeNames).
	VG, LV string
	// Unproven says why the partition is not proven empty ("" when it is: libblkid and Prism's
	// detector find nothing in it, its first and last MiB are zeros, nothing holds it, nothing
	// is mounted from it). Only a partition without a PV is asked; once Prism's PV is there
	// libblkid finds LVM2_member and, with the LV active, device-mapper holds the partition.
	Unproven string
	// Intent is set when Prism recorded, before running pvcreate on this partition, that it
	// makes the partition's PV (provision's intent record): LVM bytes found there without a
	// whole PV or VG are then Prism's own pvcreate or vgcreate cut short.
	Intent bool
	// Head is what the partition's first MiB holds of LVM (lvm.ReadHead), read only when
	// Intent is set, and set only when those are LVM's bytes alone, the last MiB is zeros,
	// nothing holds or mounts the partition, and neither probe finds anything but LVM2_member;
	// nil otherwise.
	Head *lvm.Head
}

// Action is the next step for a slot's volume.
type Action string

// The actions, in the order a slot goes through them.
const (
	CreatePV Action = "CreatePV"
	CreateVG Action = "CreateVG"
	CreateLV Action = "CreateLV"
	// Activate: the LV is there but not mapped (a host that does not autoactivate).
	Activate Action = "ActivateLV"
	// ClearHead: Prism's vgcreate was cut short after it marked the PV's label used, and
	// LVM finds no VG for it (nor lets pvcreate, pvremove or vgcreate use it without
	// --force): Prism zeroes the partition's first lvm.HeadSize bytes, which hold only LVM's
	// label and metadata of Prism's PV and VG, and makes the PV again. Argv is nil: Prism
	// writes the zeros itself.
	ClearHead Action = "ClearLVMHead"
	// Ready: Prism's LV, on exactly this partition, active: nothing to do.
	Ready Action = "Ready"
	// Refused: the partition or the names hold LVM that is not Prism's.
	Refused Action = "Refused"
)

// Decision is what to do next for one slot.
type Decision struct {
	Action Action
	// Argv is the step's command; nil for Ready and Refused.
	Argv []string
	// Path is the LV's path, /dev/<vg>/<lv>, what the Rook entry names once Ready.
	Path string
	// Message says what is there, what the step makes, or why the slot is refused.
	Message string
	// Size is the LV's size in bytes once Ready.
	Size int64
	// CephVolume is set when the refusal is a VG of ceph-volume's own on the partition: an OSD
	// that ceph-volume prepared from the partition itself (Ceph 19 wraps a partition block.db
	// in a VG of its own), which keeps its partition entry.
	CephVolume bool
}

// Decide decides the next step towards the slot's LV from a fresh LVM report. Each
// step is one LVM command and the decision is made again from a new report after it, so a
// crash anywhere resumes: after pvcreate the partition holds a PV in no VG (CreateVG), after
// vgcreate Prism's tagged VG without an LV (CreateLV), after lvcreate an LV not yet active
// (Activate). pvcreate and vgcreate cut short leave states of their own (decision 0039): a
// pvcreate killed before its label leaves a metadata area header and no PV, which is made
// again; a vgcreate killed after it marked the label used leaves a PV LVM puts in the VG
// "[unknown]", whose head Prism clears (ClearHead) before making the PV again. Both only with
// Prism's intent record for the partition and LVM's bytes alone on it, naming Prism's PV UUID
// and VG. Pure.
func Decide(s Slot, rep lvm.Report) Decision {
	d := Decision{Path: lvm.LVPath(s.VG, s.LV)}
	refuse := func(format string, args ...any) Decision {
		d.Action, d.Argv = Refused, nil
		d.Message = prismv1.TruncateMessage(fmt.Sprintf("%s: ", s.Partition) + fmt.Sprintf(format, args...) + "; Prism leaves it alone")
		return d
	}
	step := func(a Action, argv []string, err error, msg string) Decision {
		if err != nil {
			return refuse("cannot build the %s command: %v", a, err)
		}
		d.Action, d.Argv, d.Message = a, argv, prismv1.TruncateMessage(msg)
		return d
	}
	if s.Partition == "" || s.Major <= 0 || s.PartUUID == "" {
		return refuse("the partition's path, device number or GPT GUID is unknown")
	}
	if err := lvm.CheckVGName(s.VG); err != nil {
		return refuse("%v", err)
	}
	if err := lvm.CheckLVName(s.LV); err != nil {
		return refuse("%v", err)
	}
	tags := []string{lvm.TagDBSlot, lvm.TagPartUUID(s.PartUUID)}
	pvUUID, err := lvm.PVUUID(s.PartUUID)
	if err != nil {
		return refuse("%v", err)
	}

	var onPart []lvm.PV
	for _, p := range rep.PVs {
		if p.Major == s.Major && p.Minor == s.Minor {
			onPart = append(onPart, p)
		}
	}
	var named []lvm.VG
	for _, v := range rep.VGs {
		if v.Name == s.VG {
			named = append(named, v)
		}
	}
	elsewhere := func() string {
		var on []string
		for _, p := range rep.PVs {
			if p.VGName == s.VG && (p.Major != s.Major || p.Minor != s.Minor) {
				on = append(on, p.Name)
			}
		}
		if len(on) == 0 {
			return "a device LVM does not list"
		}
		return strings.Join(on, ", ")
	}

	for _, p := range onPart {
		if p.Problem != "" {
			return refuse("LVM lists a physical volume on the partition that Prism cannot read whole (%s); Prism leaves it alone", p.Problem)
		}
	}
	switch {
	case len(onPart) > 1:
		return refuse("LVM lists %d physical volumes on the partition (%s): duplicate PVs", len(onPart), pvNames(onPart))
	case len(onPart) == 0:
		if len(named) > 0 {
			return refuse("a volume group named %s, Prism's name for this slot, exists on %s", s.VG, elsewhere())
		}
		msg := "to be made an LVM physical volume"
		if s.Unproven != "" {
			if !s.tornPV() {
				return refuse("it holds no LVM physical volume and is not proven empty: %s", s.Unproven)
			}
			msg = "Prism's pvcreate was cut short before its label (a metadata area header only): to be made an LVM physical volume again"
		}
		argv, err := lvm.PVCreateArgv(s.Partition, pvUUID)
		return step(CreatePV, argv, err, msg)
	}

	pv := onPart[0]
	switch {
	case pv.Missing:
		return refuse("LVM marks the physical volume %s on it missing", pv.UUID)
	case pv.VGUnknown:
		if len(named) == 0 && s.tornVG(pv, pvUUID) {
			d.Action, d.Message = ClearHead, prismv1.TruncateMessage(fmt.Sprintf("Prism's vgcreate of %s was cut short: LVM finds no volume group for the physical volume %s it marked used; its first MiB, LVM's label and metadata alone, to be zeroed and the physical volume made again", s.VG, pv.UUID))
			return d
		}
		return refuse("LVM reads a physical volume %s on it marked used by a volume group whose metadata it cannot find ([unknown])", pv.UUID)
	case pv.VGName == "":
		// A PV in no VG holds no data, only LVM's label and an empty metadata area: Prism's own
		// pvcreate before a crash, on the partition Prism proved empty. Making the VG on it
		// loses nothing whoever wrote it.
		if len(named) > 0 {
			return refuse("it holds a physical volume in no volume group, but a volume group named %s exists on %s", s.VG, elsewhere())
		}
		argv, err := lvm.VGCreateArgv(s.VG, s.Partition, tags...)
		return step(CreateVG, argv, err, fmt.Sprintf("physical volume %s: volume group %s to be made on it", pv.UUID, s.VG))
	case pv.VGName != s.VG:
		lvs := lvsOf(rep, pv.VGName)
		if strings.HasPrefix(pv.VGName, "ceph-") && slices.ContainsFunc(lvs, func(l lvm.LV) bool { return hasTagPrefix(l.Tags, "ceph.") }) {
			d.CephVolume = true
			return refuse("it is a physical volume of ceph-volume's volume group %s (logical volumes %s): an OSD prepared from the partition itself", pv.VGName, lvNames(lvs))
		}
		return refuse("it is a physical volume of the volume group %s, not Prism's %s", pv.VGName, s.VG)
	}

	// The partition's PV is in a VG of Prism's name: it must be Prism's, for this partition,
	// on nothing else, holding nothing else.
	var vg *lvm.VG
	for i := range named {
		if named[i].UUID == pv.VGUUID {
			vg = &named[i]
		}
	}
	switch {
	case len(named) > 1:
		return refuse("LVM lists %d volume groups named %s", len(named), s.VG)
	case vg == nil:
		return refuse("its physical volume is in %s (%s), which the volume group report does not list", s.VG, pv.VGUUID)
	case !slices.Contains(vg.Tags, lvm.TagDBSlot):
		return refuse("the volume group %s on it lacks Prism's tag %s (tags: %s): not made by Prism", s.VG, lvm.TagDBSlot, tagList(vg.Tags))
	case !slices.Contains(vg.Tags, tags[1]):
		return refuse("the volume group %s was made by Prism for another partition (tags: %s; this partition's GUID is %s)", s.VG, tagList(vg.Tags), strings.ToLower(s.PartUUID))
	case vg.PVCount != 1 || vg.MissingPVCount > 0:
		return refuse("the volume group %s has %d physical volumes (%d missing), Prism's has this partition only (others: %s)", s.VG, vg.PVCount, vg.MissingPVCount, elsewhere())
	}
	lvs := lvsOf(rep, s.VG)
	if len(lvs) == 0 {
		if vg.LVCount != 0 {
			return refuse("the volume group %s counts %d logical volumes but LVM lists none", s.VG, vg.LVCount)
		}
		argv, err := lvm.LVCreateArgv(s.VG, s.LV, tags...)
		return step(CreateLV, argv, err, fmt.Sprintf("volume group %s: logical volume %s to be made filling it", s.VG, s.LV))
	}
	if len(lvs) != 1 || lvs[0].Name != s.LV {
		return refuse("the volume group %s holds %s, Prism's holds %s only", s.VG, lvNames(lvs), s.LV)
	}
	lv := lvs[0]
	switch {
	case !slices.Contains(lv.Tags, lvm.TagDBSlot) || !slices.Contains(lv.Tags, tags[1]):
		return refuse("the logical volume %s/%s lacks Prism's tags %s and %s (tags: %s)", s.VG, s.LV, tags[0], tags[1], tagList(lv.Tags))
	case vg.Free != 0:
		return refuse("the logical volume %s/%s is %d bytes and leaves %d of its volume group free: Prism's fills it", s.VG, s.LV, lv.Size, vg.Free)
	case lv.Path != "" && lv.Path != d.Path:
		return refuse("LVM gives the logical volume the path %s, not %s", lv.Path, d.Path)
	case !lv.Active():
		argv, err := lvm.LVActivateArgv(s.VG, s.LV)
		return step(Activate, argv, err, fmt.Sprintf("logical volume %s/%s (attributes %s) to be activated", s.VG, s.LV, lv.Attr))
	}
	d.Action, d.Size, d.Message = Ready, lv.Size, fmt.Sprintf("logical volume %s, %d bytes", d.Path, lv.Size)
	return d
}

// tornPV reports whether the partition holds Prism's pvcreate cut short before its label:
// Prism's intent, and LVM's bytes alone without a label or metadata text.
func (s Slot) tornPV() bool {
	return s.Intent && s.Head != nil && s.Head.PVUUID == "" && s.Head.VGName == ""
}

// tornVG reports whether the PV LVM puts in the VG "[unknown]" is Prism's vgcreate cut short:
// Prism's intent, the label naming the PV UUID Prism gives this partition, and LVM's bytes
// alone, with metadata text, if any, of Prism's VG for the slot (without logical volumes).
func (s Slot) tornVG(pv lvm.PV, pvUUID string) bool {
	return s.Intent && s.Head != nil && pv.UUID == pvUUID && s.Head.PVUUID == pvUUID && (s.Head.VGName == "" || s.Head.VGName == s.VG)
}

// lvsOf lists the LVs of the VG named vg (the LV report names VGs by name only).
func lvsOf(rep lvm.Report, vg string) []lvm.LV {
	var out []lvm.LV
	for _, l := range rep.LVs {
		if l.VGName == vg {
			out = append(out, l)
		}
	}
	return out
}

func hasTagPrefix(tags []string, prefix string) bool {
	return slices.ContainsFunc(tags, func(t string) bool { return strings.HasPrefix(t, prefix) })
}

func pvNames(pvs []lvm.PV) string {
	var s []string
	for _, p := range pvs {
		s = append(s, p.Name+" "+p.UUID)
	}
	return strings.Join(s, ", ")
}

func lvNames(lvs []lvm.LV) string {
	if len(lvs) == 0 {
		return "none"
	}
	var s []string
	for _, l := range lvs {
		s = append(s, l.Name)
	}
	return strings.Join(s, ", ")
}

func tagList(tags []string) string {
	if len(tags) == 0 {
		return "none"
	}
	return strings.Join(tags, ", ")
}
