package fixturehost

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/smart"
)

// A drive Prism never saw is described by its raw evidence, the way the hardware reports it:
// PCI IDs from sysfs, NVMe Identify fields named as `nvme id-ctrl -o json` and
// `nvme id-ns -o json` name them, the Endurance Group Information log as
// `nvme endurance-log -o json` names its fields, ATA IDENTIFY as `smartctl -j` prints it, the
// SCSI INQUIRY a translating HBA or USB bridge answers with, and what udev recorded. Build
// encodes them into the pages and files the agent reads, at their specification offsets,
// independently of the parsers in internal/host (so a test checks one encoding against the
// other).

// PCIIDs are the NVMe controller's PCI function IDs as sysfs shows them ("0x8086").
type PCIIDs struct {
	Vendor          string `json:"vendor"`
	Device          string `json:"device"`
	SubsystemVendor string `json:"subsystemVendor,omitempty"`
	SubsystemDevice string `json:"subsystemDevice,omitempty"`
}

// IdentifyController holds Identify Controller (CNS 01h) fields, named as nvme-cli names them.
type IdentifyController struct {
	VID     uint16 `json:"vid,omitempty"`
	SSVID   uint16 `json:"ssvid,omitempty"`
	SN      string `json:"sn,omitempty"`
	MN      string `json:"mn,omitempty"`
	FR      string `json:"fr,omitempty"`
	IEEE    uint32 `json:"ieee,omitempty"`
	CNTLID  uint16 `json:"cntlid,omitempty"`
	VER     uint32 `json:"ver,omitempty"`
	CTRATT  uint32 `json:"ctratt,omitempty"` // bit 4: endurance groups
	LPA     uint8  `json:"lpa,omitempty"`
	TNVMCAP uint64 `json:"tnvmcap,omitempty"`
	NN      uint32 `json:"nn,omitempty"`
}

// LBAFormat is one LBA format: metadata size, data size as a power of two, relative performance.
type LBAFormat struct {
	MS uint16 `json:"ms"`
	DS uint8  `json:"ds"`
	RP uint8  `json:"rp,omitempty"`
}

// IdentifyNamespace holds Identify Namespace (CNS 00h) fields, named as nvme-cli names them.
// The granularities are 0's based counts of logical blocks, as the drive reports them; they
// count only with NSFEAT bit 4 (0x10) set. NSZE/NCAP/NUSE default to the device size in
// logical blocks, and the LBA formats to one of the device's logical block size.
type IdentifyNamespace struct {
	NSZE   uint64      `json:"nsze,omitempty"`
	NCAP   uint64      `json:"ncap,omitempty"`
	NUSE   uint64      `json:"nuse,omitempty"`
	NSFEAT uint8       `json:"nsfeat,omitempty"`
	NLBAF  uint8       `json:"nlbaf,omitempty"`
	FLBAS  uint8       `json:"flbas,omitempty"`
	NAWUPF uint16      `json:"nawupf,omitempty"`
	NPWG   uint16      `json:"npwg,omitempty"`
	NPWA   uint16      `json:"npwa,omitempty"`
	NPDG   uint16      `json:"npdg,omitempty"`
	NPDA   uint16      `json:"npda,omitempty"`
	NOWS   uint16      `json:"nows,omitempty"`
	ENDGID uint16      `json:"endgid,omitempty"`
	LBAFs  []LBAFormat `json:"lbafs,omitempty"`
}

// EnduranceGroupLog holds the Endurance Group Information log (09h) of the namespace's
// endurance group, named as `nvme endurance-log -o json` names the fields. EnduranceEstimate
// is in units of 10^9 bytes; data units are thousands of 512-byte units.
type EnduranceGroupLog struct {
	CriticalWarning   uint8  `json:"critical_warning,omitempty"`
	AvlSpare          uint8  `json:"avl_spare,omitempty"`
	AvlSpareThreshold uint8  `json:"avl_spare_threshold,omitempty"`
	PercentUsed       uint8  `json:"percent_used,omitempty"`
	EnduranceEstimate uint64 `json:"endurance_estimate,omitempty"`
	DataUnitsRead     uint64 `json:"data_units_read,omitempty"`
	DataUnitsWritten  uint64 `json:"data_units_written,omitempty"`
	MediaUnitsWritten uint64 `json:"media_units_written,omitempty"`
}

// ATAIdentify is what ATA IDENTIFY says through `smartctl -j -a` (SAT passthrough).
type ATAIdentify struct {
	ModelName       string `json:"model_name"`
	SerialNumber    string `json:"serial_number,omitempty"`
	FirmwareVersion string `json:"firmware_version,omitempty"`
}

// Inquiry is the SCSI INQUIRY a drive behind SCSI/ATA translation (a SAS HBA, a RAID HBA in
// JBOD mode, a USB bridge) answers with: sysfs device/vendor, device/model and device/rev show
// it. Product is at most 16 characters, vendor 8, revision 4 (SPC's field widths).
type Inquiry struct {
	Vendor   string `json:"vendor"`
	Product  string `json:"product"`
	Revision string `json:"revision,omitempty"`
}

// Udev modes: what udev's rules recorded in /run/udev/data for the disk.
const (
	UdevDefault = ""        // the fixture's historic form: model, serial and ID_BUS from the device fields
	UdevATAID   = "ata_id"  // ata_id read ATA IDENTIFY: whole model, ID_BUS=ata
	UdevSCSIID  = "scsi_id" // scsi_id read the INQUIRY: ID_VENDOR, 16-character ID_MODEL, ID_BUS=scsi
	UdevUSBID   = "usb_id"  // usb_id: the bridge's INQUIRY, ID_BUS=usb
	UdevNone    = "none"    // no record: udev not running, or /run/udev not mounted in the container
)

func (d Device) validateEvidence(i int) error {
	switch d.Udev {
	case UdevDefault, UdevATAID, UdevSCSIID, UdevUSBID, UdevNone:
	default:
		return fmt.Errorf("devices[%d].udev %q is not one of ata_id, scsi_id, usb_id, none", i, d.Udev)
	}
	if d.Bus != "nvme" && (d.PCI != nil || d.IDCtrl != nil || d.IDNS != nil || d.EnduranceLog != nil) {
		return fmt.Errorf("devices[%d]: pci, idCtrl, idNs and enduranceLog describe an NVMe controller, not a %s disk", i, d.Bus)
	}
	if d.Bus == "nvme" && (d.ATA != nil || d.Inquiry != nil) {
		return fmt.Errorf("devices[%d]: ata and inquiry describe SATA/SCSI disks, not NVMe", i)
	}
	if d.IDNS != nil && d.IDCtrl == nil {
		return fmt.Errorf("devices[%d].idNs needs idCtrl (the agent reads the controller page first)", i)
	}
	if d.Identify != "" && d.IDCtrl != nil {
		return fmt.Errorf("devices[%d]: identify (a recording) and idCtrl (raw fields) both describe Identify; give one", i)
	}
	if d.EnduranceLog != nil && (d.IDNS == nil || d.IDNS.ENDGID == 0) {
		return fmt.Errorf("devices[%d].enduranceLog needs idNs.endgid: the log is read for the namespace's endurance group", i)
	}
	if d.ATA != nil && d.Smartctl != "" {
		return fmt.Errorf("devices[%d]: smartctl (a recording) and ata (raw fields) both describe ATA IDENTIFY; give one", i)
	}
	if d.ATA != nil && (!strings.HasPrefix(d.Name, "sd") || d.Bus == "virtio") {
		return fmt.Errorf("devices[%d].ata: ATA IDENTIFY is read for sd* disks only, not %s on %s", i, d.Name, d.Bus)
	}
	if in := d.Inquiry; in != nil && (len(in.Vendor) > 8 || len(in.Product) > 16 || len(in.Revision) > 4) {
		return fmt.Errorf("devices[%d].inquiry: vendor, product and revision are at most 8, 16 and 4 characters", i)
	}
	if p := d.PCI; p != nil {
		for name, v := range map[string]string{"vendor": p.Vendor, "device": p.Device, "subsystemVendor": p.SubsystemVendor, "subsystemDevice": p.SubsystemDevice} {
			if v == "" && (name == "vendor" || name == "device") {
				return fmt.Errorf("devices[%d].pci.%s is required", i, name)
			}
			if _, err := parsePCIID(v); v != "" && err != nil {
				return fmt.Errorf("devices[%d].pci.%s: %w", i, name, err)
			}
		}
	}
	return nil
}

func parsePCIID(s string) (uint16, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 16)
	if err != nil || !strings.HasPrefix(s, "0x") {
		return 0, fmt.Errorf("%q is not a PCI ID such as 0x8086", s)
	}
	return uint16(v), nil
}

// writeEvidence writes the raw evidence of one device under the host root: PCI IDs in sysfs,
// Identify pages under identify/<ctrl>/, log 09h under logs/<ctrl>/, ATA IDENTIFY under
// logs/<disk>/smartctl.json.
func writeEvidence(root string, d Device, ctrl string) error {
	if p := d.PCI; p != nil {
		files := map[string]string{"vendor": p.Vendor, "device": p.Device}
		if p.SubsystemVendor != "" {
			files["subsystem_vendor"] = p.SubsystemVendor
		}
		if p.SubsystemDevice != "" {
			files["subsystem_device"] = p.SubsystemDevice
		}
		if err := writeFiles(filepath.Join(root, "sys", "class", "nvme", ctrl, "device"), files); err != nil {
			return err
		}
	}
	if c := d.IDCtrl; c != nil {
		files := map[string]string{"id-ctrl.bin": string(encodeIdentifyController(*c))}
		if ns := d.IDNS; ns != nil {
			nsid := d.Name[strings.LastIndex(d.Name, "n")+1:]
			files["id-ns-"+nsid+".bin"] = string(encodeIdentifyNamespace(*ns, d))
		}
		if err := writeFiles(filepath.Join(root, "identify", ctrl), files); err != nil {
			return err
		}
	}
	if l := d.EnduranceLog; l != nil {
		name := nvme.GroupLogFileName(nvme.LogIDEnduranceGroup, d.IDNS.ENDGID)
		if err := writeFiles(filepath.Join(root, "logs", ctrl), map[string]string{name: string(encodeEnduranceLog(*l))}); err != nil {
			return err
		}
	}
	if a := d.ATA; a != nil {
		out := map[string]any{
			"json_format_version": []int{1, 0},
			"device":              map[string]string{"name": "/dev/" + d.Name, "protocol": "ATA"},
			"model_name":          a.ModelName,
			"serial_number":       a.SerialNumber,
			"firmware_version":    a.FirmwareVersion,
			"user_capacity":       map[string]int64{"bytes": d.SizeBytes},
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		if err := writeFiles(filepath.Join(root, "logs", d.Name), map[string]string{smart.RecordedFileName: string(b)}); err != nil {
			return err
		}
	}
	return nil
}

// putASCII writes a space-padded ASCII field, as the NVMe specification pads them.
func putASCII(b []byte, start, end int, s string) {
	for i := start; i < end; i++ {
		b[i] = ' '
	}
	copy(b[start:end], s)
}

func encodeIdentifyController(c IdentifyController) []byte {
	b := make([]byte, 4096)
	le := binary.LittleEndian
	le.PutUint16(b[0:], c.VID)
	le.PutUint16(b[2:], c.SSVID)
	putASCII(b, 4, 24, c.SN)
	putASCII(b, 24, 64, c.MN)
	putASCII(b, 64, 72, c.FR)
	b[73], b[74], b[75] = byte(c.IEEE), byte(c.IEEE>>8), byte(c.IEEE>>16)
	le.PutUint16(b[78:], c.CNTLID)
	le.PutUint32(b[80:], c.VER)
	le.PutUint32(b[96:], c.CTRATT)
	b[261] = c.LPA
	le.PutUint64(b[280:], c.TNVMCAP)
	le.PutUint32(b[516:], c.NN)
	return b
}

func encodeIdentifyNamespace(n IdentifyNamespace, d Device) []byte {
	b := make([]byte, 4096)
	le := binary.LittleEndian
	if len(n.LBAFs) == 0 {
		n.LBAFs = []LBAFormat{{DS: uint8(bits.TrailingZeros64(uint64(or512(d.LogicalBlockSize))))}}
	}
	if n.NLBAF == 0 {
		n.NLBAF = uint8(len(n.LBAFs) - 1)
	}
	if n.NSZE == 0 {
		cur := int(n.FLBAS&0xf) | int(n.FLBAS>>5&0x3)<<4
		if cur < len(n.LBAFs) && n.LBAFs[cur].DS >= 9 && n.LBAFs[cur].DS < 32 {
			n.NSZE = uint64(d.SizeBytes) >> n.LBAFs[cur].DS
		}
		n.NCAP = max(n.NCAP, n.NSZE)
	}
	le.PutUint64(b[0:], n.NSZE)
	le.PutUint64(b[8:], n.NCAP)
	le.PutUint64(b[16:], n.NUSE)
	b[24], b[25], b[26] = n.NSFEAT, n.NLBAF, n.FLBAS
	le.PutUint16(b[36:], n.NAWUPF)
	le.PutUint16(b[64:], n.NPWG)
	le.PutUint16(b[66:], n.NPWA)
	le.PutUint16(b[68:], n.NPDG)
	le.PutUint16(b[70:], n.NPDA)
	le.PutUint16(b[72:], n.NOWS)
	le.PutUint16(b[102:], n.ENDGID)
	for i, f := range n.LBAFs {
		if i >= 64 {
			break
		}
		le.PutUint32(b[128+4*i:], uint32(f.MS)|uint32(f.DS)<<16|uint32(f.RP&3)<<24)
	}
	return b
}

func encodeEnduranceLog(l EnduranceGroupLog) []byte {
	b := make([]byte, nvme.EnduranceGroupLogSize)
	le := binary.LittleEndian
	b[0], b[3], b[4], b[5] = l.CriticalWarning, l.AvlSpare, l.AvlSpareThreshold, l.PercentUsed
	le.PutUint64(b[32:], l.EnduranceEstimate) // 128-bit fields: the high halves stay zero
	le.PutUint64(b[48:], l.DataUnitsRead)
	le.PutUint64(b[64:], l.DataUnitsWritten)
	le.PutUint64(b[80:], l.MediaUnitsWritten)
	return b
}
