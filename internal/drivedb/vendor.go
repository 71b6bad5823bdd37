package drivedb

import "strings"

// PCIIDsVersion is the release of The PCI ID Repository the vendor names come from.
func PCIIDsVersion() string { return pciIDsVersion }

// PCIVendor names a storage-relevant PCI vendor (an NVMe controller's VID or SSVID, or
// sysfs device/vendor) as pci.ids does.
func PCIVendor(id uint16) (string, bool) {
	name, ok := pciVendors[id]
	return name, ok
}

// PCISCMDevice returns the pci.ids name of a device whose name marks storage-class memory or
// SLC flash (Intel's Optane controllers), and false for any other device.
func PCISCMDevice(vendor, device uint16) (string, bool) {
	name, ok := pciSCMDevices[[2]uint16{vendor, device}]
	return name, ok
}

// ataModelPrefixes are how SATA SSD vendors begin the ATA IDENTIFY model, which is all a
// SATA drive says about its maker (its INQUIRY vendor is "ATA"). The strings are the ones
// the drives report (smartctl's "Device Model" line; smartmontools' drivedb.h lists them by
// family). Compared after MatchKey, longest prefix first.
var ataModelPrefixes = []struct{ prefix, vendor string }{
	{"intel ", "Intel"},
	{"intel ssd", "Intel"},
	{"solidigm ", "Solidigm"},
	{"samsung ", "Samsung"},
	{"mz7", "Samsung"}, // OEM data-centre SATA (MZ7LH960HAJR-00005): no vendor word
	{"micron ", "Micron"},
	{"mtfdd", "Micron"}, // OEM Micron SATA (MTFDDAK480TDS): no vendor word
	{"crucial ", "Micron"},
	{"ct", ""}, // Crucial retail (CT1000MX500SSD1): only with digits, see ataModelVendor
	{"kioxia ", "Kioxia"},
	{"toshiba ", "Kioxia"},
	{"thnsn", "Kioxia"},
	{"wdc ", "Western Digital"},
	{"wd ", "Western Digital"},
	{"western digital ", "Western Digital"},
	{"sandisk ", "Western Digital"},
	{"hgst ", "Western Digital"},
	{"seagate ", "Seagate"},
	{"sk hynix ", "SK hynix"},
	{"skhynix ", "SK hynix"},
	{"hfs", "SK hynix"}, // HFS960GD0FEG-6410A: SK hynix part numbers
	{"kingston ", "Kingston"},
	{"sa400", "Kingston"},
	{"sedc", "Kingston"},
}

// ATAModelVendor guesses nothing: it names the vendor only when the ATA model starts with a
// prefix the vendor's drives report.
func ATAModelVendor(model string) (string, bool) {
	k := MatchKey(model)
	best, vendor := 0, ""
	for _, p := range ataModelPrefixes {
		if len(p.prefix) > best && strings.HasPrefix(k, p.prefix) {
			if p.prefix == "ct" {
				// Crucial retail models are CT<capacity><line>SSD<n>; "CT" alone is too short.
				if len(k) > 3 && k[2] >= '0' && k[2] <= '9' && strings.Contains(k, "ssd") {
					best, vendor = len(p.prefix), "Micron"
				}
				continue
			}
			best, vendor = len(p.prefix), p.vendor
		}
	}
	// Seagate's own models (ST4000NM000A, XA960LE10063 for Nytro SATA) have no vendor word.
	if vendor == "" && len(k) > 3 && strings.HasPrefix(k, "st") && k[2] >= '0' && k[2] <= '9' {
		return "Seagate", true
	}
	return vendor, vendor != ""
}
