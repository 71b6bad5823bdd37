package drivedb

import "testing"

func TestPCIVendorFromHwdata(t *testing.T) {
	for id, want := range map[uint16]string{
		0x8086: "Intel Corporation",
		0x144d: "Samsung Electronics Co Ltd",
		0x1344: "Micron Technology Inc",
		0x025e: "Solidigm",
		0x1e0f: "KIOXIA Corporation",
		0x1c5c: "SK hynix",
		0x15b7: "Sandisk Corp",
		0x1bb1: "Seagate Technology PLC",
	} {
		if got, ok := PCIVendor(id); !ok || got != want {
			t.Errorf("PCIVendor(%#04x) = %q, %t; want %q", id, got, ok, want)
		}
	}
	if got, ok := PCIVendor(0x10de); ok { // NVIDIA makes no NVMe drive: not storage-relevant
		t.Errorf("PCIVendor(0x10de) = %q, want not found", got)
	}
	if PCIIDsVersion() == "" {
		t.Error("the table records no pci.ids version")
	}
}

func TestPCISCMDevice(t *testing.T) {
	for _, c := range []struct {
		vendor, device uint16
		scm            bool
	}{
		{0x8086, 0x2700, true},  // Optane SSD 900P/905P
		{0x8086, 0x2701, true},  // P4800X
		{0x8086, 0x4140, true},  // P5800X
		{0x8086, 0x0a54, false}, // DC P4500/P4600 (TLC NAND)
		{0x144d, 0xa80a, false}, // Samsung 980 PRO
	} {
		if _, ok := PCISCMDevice(c.vendor, c.device); ok != c.scm {
			t.Errorf("PCISCMDevice(%#04x, %#04x) = %t, want %t", c.vendor, c.device, ok, c.scm)
		}
	}
}

func TestATAModelVendor(t *testing.T) {
	for model, want := range map[string]string{
		"Samsung SSD 870 QVO 4TB":    "Samsung",
		"SAMSUNG MZ7LH960HAJR-00005": "Samsung",
		"MZ7LH960HAJR-00005":         "Samsung",
		"Micron_5300_MTFDDAK480TDS":  "Micron",
		"MTFDDAK7T6QDE":              "Micron",
		"CT1000MX500SSD1":            "Micron",
		"INTEL SSDSC2KB960G8":        "Intel",
		"SOLIDIGM SSDSC2KG480GZ":     "Solidigm",
		"KINGSTON SEDC600M3840G":     "Kingston",
		"WDC WDS100T2B0A-00SM50":     "Western Digital",
		"HGST HUH728080ALE604":       "Western Digital",
		"ST4000NM000A-2HZ100":        "Seagate",
		"HFS960GD0FEG-6410A":         "SK hynix",
		"KIOXIA EXCERIA SATA SSD":    "Kioxia",
		"FORESEE 64GB SSD":           "",
		"CTX":                        "",
		"STORAGE":                    "",
	} {
		got, ok := ATAModelVendor(model)
		if got != want || ok != (want != "") {
			t.Errorf("ATAModelVendor(%q) = %q, %t; want %q", model, got, ok, want)
		}
	}
}
