// Package fixturehost materialises a simulated node's host root (/sys, /run/udev, /dev)
// from a YAML description of its drives, so the agent can inventory it exactly as it
// inventories a real host. Tests, the demo and benchmarks use it; nothing here touches a
// real device.
package fixturehost

import (
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// Node describes one simulated node.
type Node struct {
	// Name is the Kubernetes node name.
	Name string `json:"name"`
	// Description says what the node represents.
	Description string `json:"description,omitempty"`
	// Labels are the Kubernetes node labels the demo gives the node.
	Labels map[string]string `json:"labels,omitempty"`
	// Devices are the node's whole disks.
	Devices []Device `json:"devices"`
}

// Device describes one drive as the kernel and udev would expose it.
type Device struct {
	Name     string `json:"name"`
	Model    string `json:"model"`
	Vendor   string `json:"vendor,omitempty"`
	Serial   string `json:"serial"`
	Firmware string `json:"firmware,omitempty"`
	// Bus is nvme, ata, scsi, usb or virtio.
	Bus       string `json:"bus"`
	SizeBytes int64  `json:"sizeBytes"`
	// Queue limits as the kernel reports them; 512 when zero.
	LogicalBlockSize  int64 `json:"logicalBlockSize,omitempty"`
	PhysicalBlockSize int64 `json:"physicalBlockSize,omitempty"`
	MinimumIOSize     int64 `json:"minimumIOSize,omitempty"`
	OptimalIOSize     int64 `json:"optimalIOSize,omitempty"`
	Rotational        bool  `json:"rotational,omitempty"`
	// Identify names a recorded NVMe Identify directory under internal/host/nvme/testdata.
	Identify string `json:"identify,omitempty"`
	// Logs names a directory of recorded NVMe log pages under internal/host/nvme/testdata/logs.
	Logs string `json:"logs,omitempty"`
	// Smartctl names a recorded smartctl report directory under internal/host/smart/testdata (SATA/SAS).
	Smartctl string `json:"smartctl,omitempty"`
	// SectorsWritten is field 7 of /sys/block/<name>/stat (512-byte sectors written since boot).
	SectorsWritten int64 `json:"sectorsWritten,omitempty"`
	// Partitions are partition names (sda1); Holders stacked devices (dm-0).
	Partitions []string `json:"partitions,omitempty"`
	Holders    []string `json:"holders,omitempty"`
	// Content is what the start of the device holds: empty, gpt, ext4, xfs, lvm2 or bluestore.
	Content string `json:"content,omitempty"`

	// Raw evidence, for drives described by what the hardware reports (evidence.go).
	// PCI are the NVMe controller's PCI IDs in sysfs.
	PCI *PCIIDs `json:"pci,omitempty"`
	// IDCtrl and IDNS are Identify Controller and Namespace fields, encoded into the pages
	// the agent reads (instead of a recording named by identify).
	IDCtrl *IdentifyController `json:"idCtrl,omitempty"`
	IDNS   *IdentifyNamespace  `json:"idNs,omitempty"`
	// EnduranceLog is log 09h of the namespace's endurance group (idNs.endgid).
	EnduranceLog *EnduranceGroupLog `json:"enduranceLog,omitempty"`
	// ATA is what ATA IDENTIFY says through smartctl (instead of a recording named by smartctl).
	ATA *ATAIdentify `json:"ata,omitempty"`
	// Inquiry is the SCSI INQUIRY sysfs shows for a disk behind SCSI/ATA translation; by
	// default vendor ATA (or vendor) and the model's first 16 characters.
	Inquiry *Inquiry `json:"inquiry,omitempty"`
	// Udev is what udev recorded: ata_id, scsi_id, usb_id or none (see the Udev* constants).
	Udev string `json:"udev,omitempty"`
	// NoByID leaves /dev/disk/by-id without a link to the disk.
	NoByID bool `json:"noByID,omitempty"`

	// Source says where the drive's model string, size and limits come from.
	Source string `json:"source"`
	// Expect is what Prism should conclude about the drive; tests check the inventory against it.
	Expect Expectation `json:"expect,omitempty"`
}

// Expectation is the tier a drive should get and the eligibility filters it should fail, and
// for drives described by raw evidence what Prism should make of that evidence.
type Expectation struct {
	Tier       string   `json:"tier,omitempty"`
	Ineligible []string `json:"ineligible,omitempty"`
	// Model is the model the inventory should report, when it differs from model (a cut
	// INQUIRY form completed by ATA IDENTIFY, an NVMe Identify MN).
	Model string `json:"model,omitempty"`
	// ModelSource is evidence.modelSource (nvme-identify, ata-identify, udev-ata, udev-scsi, sysfs).
	ModelSource string `json:"modelSource,omitempty"`
	// Vendor and VendorSource are the vendor the inventory should name and where from; vendor
	// "none" says no vendor may be named.
	Vendor       string `json:"vendor,omitempty"`
	VendorSource string `json:"vendorSource,omitempty"`
	// InferredTier and Confidence: the inference for a drive the database does not know;
	// "none" says there must be none.
	InferredTier string `json:"inferredTier,omitempty"`
	Confidence   string `json:"confidence,omitempty"`
	// InternalWriteUnitBytes and EnduranceEstimateTBW: the evidence the inventory should publish.
	InternalWriteUnitBytes int64  `json:"internalWriteUnitBytes,omitempty"`
	EnduranceEstimateTBW   string `json:"enduranceEstimateTBW,omitempty"`
	// ReasonContains are substrings the tier reason (with the inference's reasons) must hold.
	ReasonContains []string `json:"reasonContains,omitempty"`
	// WarningContains are substrings some inventory warning about this device must hold.
	WarningContains []string `json:"warningContains,omitempty"`
}

// Load reads a node description.
func Load(path string) (Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Node{}, err
	}
	var n Node
	if err := yaml.UnmarshalStrict(data, &n); err != nil {
		return Node{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := n.validate(); err != nil {
		return Node{}, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

func (n Node) validate() error {
	if n.Name == "" {
		return fmt.Errorf("name is required")
	}
	seen := map[string]bool{}
	for i, d := range n.Devices {
		switch {
		case d.Name == "":
			return fmt.Errorf("devices[%d].name is required", i)
		case seen[d.Name]:
			return fmt.Errorf("devices[%d].name %q is duplicated", i, d.Name)
		case d.SizeBytes <= 0:
			return fmt.Errorf("devices[%d].sizeBytes must be positive", i)
		case d.Source == "":
			return fmt.Errorf("devices[%d].source is required: say where the drive's values come from", i)
		}
		if _, ok := contents[d.Content]; !ok {
			return fmt.Errorf("devices[%d].content %q is not one of empty, gpt, ext4, xfs, lvm2, bluestore", i, d.Content)
		}
		switch d.Bus {
		case "nvme", "ata", "scsi", "usb", "virtio":
		default:
			return fmt.Errorf("devices[%d].bus %q is not one of nvme, ata, scsi, usb, virtio", i, d.Bus)
		}
		if err := d.validateEvidence(i); err != nil {
			return err
		}
		if d.Smartctl != "" && (d.Bus != "ata" && d.Bus != "scsi" || !strings.HasPrefix(d.Name, "sd")) {
			return fmt.Errorf("devices[%d].smartctl: the agent runs smartctl for sd* disks on the ata or scsi bus only, not %s on %s", i, d.Name, d.Bus)
		}
		seen[d.Name] = true
	}
	return nil
}
