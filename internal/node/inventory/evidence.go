package inventory

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/drivedb"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/smart"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// ATAReader returns `smartctl -j -a` of a disk: the agent's smartctl runner (smart.Smartctl)
// or recordings (smart.RecordedReader). The inventory asks it only for an ATA drive whose
// model is visible in cut forms alone (SCSI INQUIRY behind a SAS HBA or USB bridge), for the
// full model from ATA IDENTIFY.
type ATAReader interface {
	SmartctlJSON(ctx context.Context, disk string) ([]byte, error)
}

// Model sources published in evidence.modelSource.
const (
	modelNVMeIdentify = "nvme-identify"
	modelATAIdentify  = "ata-identify"
	modelUdevATA      = "udev-ata"
	modelUdevSCSI     = "udev-scsi"
	modelSysfs        = "sysfs"
)

// modelChoice is the model a device reports, in drivedb's canonical form, and where it came from.
type modelChoice struct {
	text, source string
	maybeCut     bool
}

// chooseModel picks the fullest model string among what sysfs, udev and NVMe Identify show.
// identifyMN is the NVMe Identify MN ("" when not read). For an ATA drive behind SCSI/ATA
// translation only INQUIRY-derived strings may be left, each possibly cut at 16 characters:
// ata reports that case, and the caller then asks ATA IDENTIFY (ataModel).
func chooseModel(disk sysfs.BlockDevice, udev map[string]string, identifyMN string) modelChoice {
	if disk.NVMeController != "" {
		for _, c := range []struct{ raw, source string }{
			{identifyMN, modelNVMeIdentify}, {disk.Model, modelSysfs},
			{drivedb.DecodeUdevEscapes(udev["ID_MODEL_ENC"]), modelUdevSCSI}, {udev["ID_MODEL"], modelUdevSCSI},
		} {
			if m := drivedb.NormalizeModel(c.raw, drivedb.SourceNVMeIdentify, false); m.Text != "" {
				return modelChoice{text: m.Text, source: c.source}
			}
		}
		return modelChoice{}
	}
	translated := strings.EqualFold(strings.TrimSpace(disk.Vendor), "ATA") || udev["ID_VENDOR"] == "ATA" || udev["ID_BUS"] == "usb"
	// ata_id (ID_BUS=ata) read ATA IDENTIFY itself: its model is whole.
	udevSource := modelUdevSCSI
	if udev["ID_BUS"] == "ata" || udev["ID_ATA"] == "1" {
		udevSource, translated = modelUdevATA, false
	}
	var best modelChoice
	for _, c := range []struct {
		raw    string
		src    drivedb.ModelSource
		source string
	}{
		{udev["ID_MODEL_ENC"], drivedb.SourceUdevModelEnc, udevSource},
		{udev["ID_MODEL"], drivedb.SourceUdevModel, udevSource},
		{disk.Model, drivedb.SourceSCSIInquiry, modelSysfs},
	} {
		m := drivedb.NormalizeModel(c.raw, c.src, translated)
		if m.Text == "" {
			continue
		}
		if c.src == drivedb.SourceSCSIInquiry && udevSource == modelUdevATA && best.text != "" {
			continue // sysfs holds the INQUIRY cut of what ata_id read whole
		}
		if best.text == "" || len(m.Text) > len(best.text) && strings.HasPrefix(drivedb.MatchKey(m.Text), drivedb.MatchKey(best.text)) {
			best = modelChoice{text: m.Text, source: c.source, maybeCut: m.MaybeCut}
		}
	}
	return best
}

// ataModel reads the full model from ATA IDENTIFY through smartctl.
func ataModel(ctx context.Context, r ATAReader, disk string) (string, error) {
	out, err := r.SmartctlJSON(ctx, disk)
	if err != nil {
		return "", err
	}
	rep, err := smart.ParseSmartctlJSON(out)
	if err != nil {
		return "", err
	}
	m := drivedb.NormalizeModel(rep.ModelName, drivedb.SourceATAIdentify, false)
	if m.Text == "" {
		return "", fmt.Errorf("smartctl reports no model")
	}
	return m.Text, nil
}

// controllerMakers are PCI vendors that make NVMe controllers other companies build drives
// around (Phison, Silicon Motion, Marvell, MAXIO, InnoGrit, Realtek): for them the subsystem
// vendor (SSVID) names the drive's maker.
var controllerMakers = map[uint16]bool{0x1987: true, 0x126f: true, 0x1b4b: true, 0x1e4b: true, 0x1dbe: true, 0x10ec: true}

// deviceVendor names a drive's maker when the drive database does not: the NVMe controller's
// PCI vendor in pci.ids, the ATA model's vendor prefix, or the SCSI INQUIRY vendor of a
// native SCSI/SAS drive. It returns the vendor and its source ("" when nothing names it:
// "ATA" is the translation layer, not a maker).
func deviceVendor(model string, isNVMe bool, vid, ssvid uint16, inquiryVendor string) (string, string) {
	if vid != 0 {
		id := vid
		if controllerMakers[vid] && ssvid != 0 {
			if _, ok := drivedb.PCIVendor(ssvid); ok {
				id = ssvid
			}
		}
		if name, ok := drivedb.PCIVendor(id); ok {
			return name, "pci-ids"
		}
	}
	if isNVMe {
		return "", ""
	}
	if v, ok := drivedb.ATAModelVendor(model); ok {
		return v, "ata-model"
	}
	if v := strings.TrimSpace(inquiryVendor); v != "" && !strings.EqualFold(v, "ATA") {
		return v, "inquiry"
	}
	return "", ""
}

// enduranceEstimate reads the endurance group's rated endurance (log 09h) when the controller
// has endurance groups and the namespace names its group.
func enduranceEstimate(ctx context.Context, logs nvme.GroupLogReader, ctrl string, group uint16) (uint64, error) {
	raw, err := logs.GroupLog(ctx, ctrl, nvme.LogIDEnduranceGroup, group, nvme.EnduranceGroupLogSize)
	if err != nil {
		return 0, err
	}
	l, err := nvme.ParseEnduranceGroupLog(raw)
	if err != nil {
		return 0, err
	}
	v, ok := l.EnduranceEstimateBytes()
	if !ok {
		return 0, nil
	}
	return v, nil
}

func hex4(v uint16) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf("%04x", v)
}

// decimal prints a non-negative figure with up to two decimals and no trailing zeros.
func decimal(v float64) string {
	return strconv.FormatFloat(float64(int64(v*100+0.5))/100, 'f', -1, 64)
}

func emptyEvidence(e *prismv1.DeviceEvidence) bool {
	return len(e.Markers) == 0 && e.ModelSource == "" && e.VendorSource == "" && !e.ModelMaybeCut &&
		e.PCIVendorID == "" && e.PCIDeviceID == "" && e.PCISubsystemVendorID == "" && e.EnduranceEstimateTBW == "" &&
		e.PreferredWriteGranularityBytes == 0 && e.PreferredDeallocateGranularityBytes == 0 && e.OptimalWriteSizeBytes == 0
}
