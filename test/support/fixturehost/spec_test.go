package fixturehost

import (
	"strings"
	"testing"
)

// A malformed raw-evidence description is refused with the field named.
func TestValidateEvidenceNamesTheField(t *testing.T) {
	base := func() Device {
		return Device{Name: "nvme0n1", Bus: "nvme", SizeBytes: 1 << 30, Source: "test", IDCtrl: &IdentifyController{MN: "X"}}
	}
	for _, c := range []struct {
		name string
		edit func(*Device)
		want string
	}{
		{"udev mode", func(d *Device) { d.Udev = "systemd" }, "devices[0].udev"},
		{"namespace without controller", func(d *Device) { d.IDCtrl, d.IDNS = nil, &IdentifyNamespace{} }, "devices[0].idNs needs idCtrl"},
		{"log without group", func(d *Device) { d.IDNS, d.EnduranceLog = &IdentifyNamespace{}, &EnduranceGroupLog{} }, "idNs.endgid"},
		{"PCI ID", func(d *Device) { d.PCI = &PCIIDs{Vendor: "8086", Device: "0x4140"} }, "devices[0].pci.vendor"},
		{"recording and fields", func(d *Device) { d.Identify = "intel-660p-ssdpeknw512g8" }, "give one"},
		{"ATA on NVMe", func(d *Device) { d.ATA = &ATAIdentify{ModelName: "X"} }, "not NVMe"},
		{"INQUIRY width", func(d *Device) {
			d.Name, d.Bus, d.IDCtrl, d.Inquiry = "sda", "scsi", nil, &Inquiry{Vendor: "ATA", Product: "Samsung SSD 870 QVO"}
		}, "devices[0].inquiry"},
	} {
		d := base()
		c.edit(&d)
		err := Node{Name: "n", Devices: []Device{d}}.validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if err := (Node{Name: "n", Devices: []Device{base()}}).validate(); err != nil {
		t.Errorf("valid device refused: %v", err)
	}
}
