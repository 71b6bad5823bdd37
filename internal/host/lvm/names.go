package lvm

import (
	"errors"
	"fmt"
	"strings"
)

// MaxNameLength is LVM's limit on a VG or LV name (NAME_LEN 128, less the terminating NUL).
const MaxNameLength = 127

// Tags Prism puts on the volume group and the logical volume of a DB slot. LVM tags allow
// [A-Za-z0-9_+.-] and, since 2.02.78, "/=!:#&"; ceph-volume reads only tags starting with
// "ceph." and leaves these alone when it adds its own to the LV.
const (
	// TagDBSlot marks a VG or LV as Prism's DB slot volume.
	TagDBSlot = "prism.storage.io/db-slot"
	// tagPartUUIDPrefix + the partition's GPT unique GUID binds the VG and LV to the one
	// partition Prism made them on.
	tagPartUUIDPrefix = "prism.storage.io/partuuid="
)

// TagPartUUID is the tag naming the GPT unique partition GUID a slot's VG and LV were made on.
func TagPartUUID(partUUID string) string { return tagPartUUIDPrefix + strings.ToLower(partUUID) }

// LVPath is the device path udev and LVM give a logical volume, /dev/<vg>/<lv>: the form Rook
// hands to ceph-volume's --block.db, whose argument validator resolves it to vg/lv.
func LVPath(vg, lv string) string { return "/dev/" + vg + "/" + lv }

// CheckVGName reports whether name is a volume group name LVM accepts (lvm(8), VALID NAMES):
// 1 to 127 of [a-zA-Z0-9+_.-], not starting with '-', not "." or "..".
func CheckVGName(name string) error { return checkName("volume group", name) }

// CheckLVName is CheckVGName for a logical volume, which LVM also refuses when the name
// starts with "snapshot" or "pvmove" or contains a suffix LVM uses for its hidden volumes.
func CheckLVName(name string) error {
	if err := checkName("logical volume", name); err != nil {
		return err
	}
	for _, p := range []string{"snapshot", "pvmove"} {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("logical volume name %q starts with %q, which LVM reserves", name, p)
		}
	}
	for _, s := range []string{"_cdata", "_cmeta", "_corig", "_cpool", "_cvol", "_mimage", "_mlog", "_pmspare", "_rimage", "_rmeta", "_tdata", "_tmeta", "_vdata", "_vorigin", "_wcorig"} {
		if strings.Contains(name, s) {
			return fmt.Errorf("logical volume name %q contains %q, which LVM reserves", name, s)
		}
	}
	return nil
}

func checkName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty %s name", what)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%s name %q is %d characters, LVM allows %d", what, name, len(name), MaxNameLength)
	case name == "." || name == "..":
		return fmt.Errorf("%s name %q is not allowed", what, name)
	case name[0] == '-':
		return fmt.Errorf("%s name %q starts with '-'", what, name)
	}
	for i, r := range name {
		if !nameChar(r) {
			return fmt.Errorf("%s name %q has %q at %d: LVM allows a-z, A-Z, 0-9, '+', '_', '.' and '-'", what, name, r, i)
		}
	}
	return nil
}

func nameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '_' || r == '.' || r == '-'
}

// CheckTag reports whether tag is one LVM accepts: 1 to 1024 of [A-Za-z0-9_+.-/=!:#&], not
// starting with '-'.
func CheckTag(tag string) error {
	switch {
	case tag == "":
		return errors.New("empty tag")
	case len(tag) > 1024:
		return fmt.Errorf("tag %q is %d characters, LVM allows 1024", tag, len(tag))
	case tag[0] == '-':
		return fmt.Errorf("tag %q starts with '-'", tag)
	}
	for i, r := range tag {
		if !nameChar(r) && !strings.ContainsRune("/=!:#&", r) {
			return fmt.Errorf("tag %q has %q at %d: LVM allows a-z, A-Z, 0-9 and \"_+.-/=!:#&\"", tag, r, i)
		}
	}
	return nil
}

// DMName is the device-mapper name LVM gives an active LV: the VG's and the LV's names with
// each '-' doubled, joined by '-' (prism-db-0a-00/prism-db-00 is prism--db--0a--00-prism--db--00).
// The kernel lists it in /sys/block/dm-N/dm/name whether or not udev made /dev/<vg>/<lv>.
func DMName(vg, lv string) string {
	return strings.ReplaceAll(vg, "-", "--") + "-" + strings.ReplaceAll(lv, "-", "--")
}
