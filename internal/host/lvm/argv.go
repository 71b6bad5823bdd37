package lvm

import (
	"strings"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// Report fields Prism asks for, in this order. The parsers require every one of them.
var (
	PVFields = []string{"pv_name", "pv_uuid", "pv_major", "pv_minor", "dev_size", "pv_size", "vg_name", "vg_uuid", "pv_tags", "pv_missing"}
	VGFields = []string{"vg_name", "vg_uuid", "pv_count", "lv_count", "vg_size", "vg_free", "vg_extent_size", "vg_missing_pv_count", "vg_tags"}
	LVFields = []string{"lv_name", "lv_uuid", "vg_name", "lv_path", "lv_size", "lv_attr", "lv_tags"}
)

// Commands are every LVM command Prism runs: the agent runs them on the host
// (hostexec.InHostMountNamespace), never from its image.
var Commands = []string{"pvs", "vgs", "lvs", "pvcreate", "vgcreate", "lvcreate", "lvchange"}

// reportOptions make every report machine-readable: JSON (lvmreport(7)), sizes in bytes
// without a unit suffix.
var reportOptions = []string{"--reportformat", "json", "--units", "b", "--nosuffix"}

// PVsArgv is `pvs --reportformat json --units b --nosuffix -o PVFields`: every physical
// volume LVM sees, with its device number (how Prism matches a PV to a partition, whatever
// /dev name LVM prints) and its VG. It only reads.
func PVsArgv() []string { return reportArgv("pvs", PVFields) }

// VGsArgv is the same report of the volume groups.
func VGsArgv() []string { return reportArgv("vgs", VGFields) }

// LVsArgv is the same report of the logical volumes.
func LVsArgv() []string { return reportArgv("lvs", LVFields) }

func reportArgv(cmd string, fields []string) []string {
	argv := append([]string{cmd}, reportOptions...)
	return append(argv, "-o", strings.Join(fields, ","))
}

// The write commands scan every device, as LVM does by default, and are never restricted with
// --devices: vgcreate refuses a name already taken only when it can see the VG that has it.
// None of them gets --yes or --force: LVM asks before it wipes a signature it finds, and with
// the executor's empty stdin the answer is no, so a signature that appeared after Prism's
// proof fails the command instead of being wiped.

// PVCreateArgv is `pvcreate --uuid <uuid> --norestorefile <dev>`: an LVM label and metadata
// area at the start of the partition (pvcreate zeroes its first 8 KiB), the label naming the
// PV uuid, which Prism derives from the partition (PVUUID) so that a label names whose PV it
// is. --norestorefile says no metadata backup describes the PV (pvcreate wants one or the
// other with --uuid).
func PVCreateArgv(dev, uuid string) ([]string, error) {
	if err := hostexec.CheckDevicePath(dev); err != nil {
		return nil, err
	}
	if err := checkID(uuid); err != nil {
		return nil, err
	}
	return []string{"pvcreate", "--uuid", uuid, "--norestorefile", dev}, nil
}

// VGCreateArgv is `vgcreate --addtag T... <vg> <pv>`: a volume group of the one physical
// volume, with Prism's tags.
func VGCreateArgv(vg, pv string, tags ...string) ([]string, error) {
	if err := CheckVGName(vg); err != nil {
		return nil, err
	}
	if err := hostexec.CheckDevicePath(pv); err != nil {
		return nil, err
	}
	argv, err := addTags([]string{"vgcreate"}, tags)
	if err != nil {
		return nil, err
	}
	return append(argv, vg, pv), nil
}

// LVCreateArgv is `lvcreate --name <lv> --extents 100%FREE --addtag T... <vg>`: one logical
// volume filling the volume group, with Prism's tags, activated (the default), so that
// /dev/<vg>/<lv> exists for Rook.
func LVCreateArgv(vg, lv string, tags ...string) ([]string, error) {
	if err := CheckVGName(vg); err != nil {
		return nil, err
	}
	if err := CheckLVName(lv); err != nil {
		return nil, err
	}
	argv, err := addTags([]string{"lvcreate", "--name", lv, "--extents", "100%FREE"}, tags)
	if err != nil {
		return nil, err
	}
	return append(argv, vg), nil
}

// LVActivateArgv is `lvchange --activate y <vg>/<lv>`: the kernel maps an existing logical
// volume (a host that does not autoactivate after boot), so /dev/<vg>/<lv> exists.
func LVActivateArgv(vg, lv string) ([]string, error) {
	if err := CheckVGName(vg); err != nil {
		return nil, err
	}
	if err := CheckLVName(lv); err != nil {
		return nil, err
	}
	return []string{"lvchange", "--activate", "y", vg + "/" + lv}, nil
}

func addTags(argv, tags []string) ([]string, error) {
	for _, t := range tags {
		if err := CheckTag(t); err != nil {
			return nil, err
		}
		argv = append(argv, "--addtag", t)
	}
	return argv, nil
}
