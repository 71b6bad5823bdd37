package main

// Data-centre drives whose SMART log is also recorded under testdata/logs/<Dir>
// (internal/loggen/recordings_datacenter.go): the Identify values below come
// from the same `smartctl -x` report, so pages and logs describe one drive.

// npFieldsUnrecorded explains why NSFEAT stays zero on drives that report NP_Fields.
const npFieldsUnrecorded = "smartctl prints \"Namespace 1 Features (0x10): NP_Fields\" (NSFEAT bit 4: NPWG, NPWA, NPDG, NPDA and NOWS are valid) but not the values of those fields. NSFEAT is left zero on purpose: with bit 4 set and NPWG unrecorded (zero), the page would claim a one-block preferred write granularity the drive never reported."

const probeRewrites = "The linux-hardware.org probe replaces the serial number with \"--\" (SN stays empty) and truncates the EUI-64."

var datacenterRecordings = []recording{
	{
		Dir:   "intel-optane-p5800x-ssdpf21q400gb",
		Drive: "Intel Optane SSD DC P5800X 400GB U.2 (INTEL SSDPF21Q400GB)",
		Media: "3D XPoint (Optane)",
		URL:   "https://github.com/linuxhw/SMART/blob/4877705e91f129465c21eca78e8c784ea07194d1/NVMe/Intel/SSDPF21/SSDPF21Q400GB/E063D3529745",
		What:  "`smartctl -x` text (smartctl 7.4) collected by the linux-hardware.org probe, local time Mon Aug 5 2024.",
		Ctrl: ctrlRec{
			VID:     rec[uint16](0x8086, "PCI Vendor/Subsystem ID: 0x8086"),
			SSVID:   rec[uint16](0x8086, "PCI Vendor/Subsystem ID: 0x8086"),
			MN:      rec("INTEL SSDPF21Q400GB", "Model Number: INTEL SSDPF21Q400GB"),
			FR:      rec("L0310200", "Firmware Version: L0310200"),
			OUI:     rec[uint32](0x5cd2e4, "IEEE OUI Identifier: 0x5cd2e4"),
			TNVMCAP: rec[uint64](400088457216, "Total NVM Capacity: 400,088,457,216 [400 GB]"),
			CNTLID:  rec[uint16](0, "Controller ID: 0"),
			VER:     rec[uint32](0x00010300, "NVMe Version: 1.3"),
			NN:      rec[uint32](128, "Number of Namespaces: 128"),
			LPA:     rec[uint8](0x1e, "Log Page Attributes (0x1e): Cmd_Eff_Lg Ext_Get_Lg Telmtry_Lg Pers_Ev_Lg"),
		},
		NS: &nsRec{
			NSZE:   rec[uint64](781422768, "Namespace 1 Size/Capacity: 400,088,457,216 [400 GB] (÷ 512 B)"),
			NCAP:   rec[uint64](781422768, "Namespace 1 Size/Capacity: 400,088,457,216 [400 GB] (÷ 512 B)"),
			NSFEAT: rec[uint8](0x02, "Namespace 1 Features (0x02): NA_Fields"),
			NLBAF:  rec[uint8](4, "Supported LBA Sizes: five rows"),
			FLBAS:  rec[uint8](0, "Supported LBA Sizes: row 0 marked '+'"),
			LBAF: []lbaf{
				{MS: 0, LBADS: 9, RP: 2}, {MS: 8, LBADS: 9, RP: 2},
				{MS: 0, LBADS: 12, RP: 2}, {MS: 8, LBADS: 12, RP: 2}, {MS: 64, LBADS: 12, RP: 2},
			},
			LBAFFrom: "Id 0-4: 512/0, 512/8, 4096/0, 4096/8, 4096/64 (Data/Metadt), Rel_Perf 2 each; Id 0 marked '+'",
		},
		Notes: []string{
			smartctlRules, probeRewrites,
			"No \"Namespace 1 Utilization\" line (smartctl omits it when NUSE == NCAP), but the value itself is not printed, so NUSE stays zero.",
		},
	},
	{
		Dir:   "intel-d5-p5316-ssdpf2nv307tz",
		Drive: "Intel SSD D5-P5316 30.72TB U.2 (INTEL SSDPF2NV307TZ)",
		Media: "QLC NAND",
		URL:   "https://github.com/linuxhw/SMART/blob/4877705e91f129465c21eca78e8c784ea07194d1/NVMe/Intel/SSDPF2/SSDPF2NV307TZ/4D48C9F104A4",
		What:  "`smartctl -x` text (smartctl 7.4) collected by the linux-hardware.org probe, local time Fri May 17 2024.",
		Ctrl: ctrlRec{
			VID:     rec[uint16](0x8086, "PCI Vendor/Subsystem ID: 0x8086"),
			SSVID:   rec[uint16](0x8086, "PCI Vendor/Subsystem ID: 0x8086"),
			MN:      rec("INTEL SSDPF2NV307TZ", "Model Number: INTEL SSDPF2NV307TZ"),
			FR:      rec("ACV10340", "Firmware Version: ACV10340"),
			OUI:     rec[uint32](0x5cd2e4, "IEEE OUI Identifier: 0x5cd2e4"),
			TNVMCAP: rec[uint64](30725971992576, "Total NVM Capacity: 30,725,971,992,576 [30.7 TB]"),
			CNTLID:  rec[uint16](0, "Controller ID: 0"),
			VER:     rec[uint32](0x00010400, "NVMe Version: 1.4"),
			NN:      rec[uint32](128, "Number of Namespaces: 128"),
			LPA:     rec[uint8](0x3e, "Log Page Attributes (0x3e): Cmd_Eff_Lg Ext_Get_Lg Telmtry_Lg Pers_Ev_Lg Log0_FISE_MI"),
		},
		NS: &nsRec{
			NSZE:     rec[uint64](60011664048, "Namespace 1 Size/Capacity: 30,725,971,992,576 [30.7 TB] (÷ 512 B)"),
			NCAP:     rec[uint64](60011664048, "Namespace 1 Size/Capacity: 30,725,971,992,576 [30.7 TB] (÷ 512 B)"),
			NLBAF:    rec[uint8](1, "Supported LBA Sizes: two rows"),
			FLBAS:    rec[uint8](0, "Supported LBA Sizes: row 0 marked '+'"),
			LBAF:     []lbaf{{MS: 0, LBADS: 9, RP: 2}, {MS: 0, LBADS: 12, RP: 2}},
			LBAFFrom: "Id 0: 512/0 '+', Id 1: 4096/0, Rel_Perf 2 each",
		},
		Notes: []string{
			smartctlRules, probeRewrites, npFieldsUnrecorded,
			"No \"Namespace 1 Utilization\" line (smartctl omits it when NUSE == NCAP), but the value itself is not printed, so NUSE stays zero.",
		},
	},
	{
		Dir:   "solidigm-d5-p5430-sbfpf2bu307t",
		Drive: "Solidigm D5-P5430 30.72TB U.2 (SOLIDIGM SBFPF2BU307T)",
		Media: "QLC NAND",
		URL:   "https://github.com/linuxhw/SMART/blob/7c74a197e4e1ea51fb50b5f0991a5fd1ecf81a5d/NVMe/SOLIDIGM/SBFPF2/SBFPF2BU307T/8DC5252106F1",
		What:  "`smartctl -x` text (smartctl 7.3) collected by the linux-hardware.org probe, local time Tue Jul 1 2025.",
		Ctrl: ctrlRec{
			VID:     rec[uint16](0x025e, "PCI Vendor/Subsystem ID: 0x025e"),
			SSVID:   rec[uint16](0x025e, "PCI Vendor/Subsystem ID: 0x025e"),
			MN:      rec("SOLIDIGM SBFPF2BU307T", "Model Number: SOLIDIGM SBFPF2BU307T"),
			FR:      rec("6DV10302", "Firmware Version: 6DV10302"),
			OUI:     rec[uint32](0, "IEEE OUI Identifier: 0x000000"),
			TNVMCAP: rec[uint64](30725971992576, "Total NVM Capacity: 30,725,971,992,576 [30.7 TB]"),
			CNTLID:  rec[uint16](0, "Controller ID: 0"),
			VER:     rec[uint32](0x00020000, "NVMe Version: 2.0"),
			NN:      rec[uint32](128, "Number of Namespaces: 128"),
			LPA:     rec[uint8](0x3e, "Log Page Attributes (0x3e): Cmd_Eff_Lg Ext_Get_Lg Telmtry_Lg Pers_Ev_Lg *Other*"),
		},
		NS: &nsRec{
			NSZE:  rec[uint64](60011664048, "Namespace 1 Size/Capacity: 30,725,971,992,576 [30.7 TB] (÷ 512 B)"),
			NCAP:  rec[uint64](60011664048, "Namespace 1 Size/Capacity: 30,725,971,992,576 [30.7 TB] (÷ 512 B)"),
			NUSE:  rec[uint64](8240, "Namespace 1 Utilization: 4,218,880 [4.21 MB] (÷ 512 B)"),
			NLBAF: rec[uint8](4, "Supported LBA Sizes: five rows"),
			FLBAS: rec[uint8](0, "Supported LBA Sizes: row 0 marked '+'"),
			LBAF: []lbaf{
				{MS: 0, LBADS: 9, RP: 2}, {MS: 8, LBADS: 9, RP: 2},
				{MS: 0, LBADS: 12, RP: 2}, {MS: 8, LBADS: 12, RP: 2}, {MS: 64, LBADS: 12, RP: 2},
			},
			LBAFFrom: "Id 0-4: 512/0, 512/8, 4096/0, 4096/8, 4096/64 (Data/Metadt), Rel_Perf 2 each; Id 0 marked '+'",
		},
		Notes: []string{
			smartctlRules, probeRewrites, npFieldsUnrecorded,
			"The drive reports PCI vendor 0x025e (Solidigm) and an all-zero IEEE OUI.",
			"The recording names no product family: D5-P5430 is the drive database's reading of the SBFPF?BU ordering code (internal/drivedb/drives.csv).",
		},
	},
}

// all is every recording: the older ones first, then the data-centre drives.
func all() []recording {
	out := make([]recording, 0, len(recordings)+len(datacenterRecordings))
	out = append(out, recordings...)
	return append(out, datacenterRecordings...)
}
