package main

// Data-centre drives Prism pairs: Optane fast tiers and QLC capacity drives.
// Each value was read off a `smartctl` report collected by the
// linux-hardware.org probe (hw-probe) and published in linuxhw's GitHub
// repositories; the URLs pin the commit the values were read at.

// enterpriseTrimmed explains fields missing from linuxhw/EnterpriseDrive reports.
const enterpriseTrimmed = "linuxhw/EnterpriseDrive keeps only part of smartctl's output (no power states, optional-command or error-log lines), so a field it does not show is unknown, not known to be zero; it is left zero here."

// probeRedacts notes what hw-probe replaces before publishing.
const probeRedacts = "hw-probe replaces the serial number with \"--\" and truncates the EUI-64; neither is part of a log page."

var datacenterRecordings = []recording{
	{
		Dir:   "intel-optane-p4800x-ssdpe21k375ga",
		Drive: "Intel Optane SSD DC P4800X 375GB U.2 (INTEL SSDPE21K375GA)",
		Media: "3D XPoint (Optane)",
		URL:   "https://github.com/linuxhw/EnterpriseDrive/blob/578104be22975961d464b8c2c0c8b497a2d43f66/NVMe/Intel/SSDPE21/SSDPE21K375GA/22B5A0C5BA5F",
		What:  "`smartctl` report (smartctl 7.1 r5066, firmware E2010435, \"Namespace 1 Size/Capacity: 375,083,606,016 [375 GB]\"), section \"SMART/Health Information (NVMe Log 0x02)\", collected by hw-probe on a server in August 2021.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, "Critical Warning: 0x00"),
				f("Composite Temperature", 307, "Temperature: 34 Celsius"),
				f("Available Spare", 100, "Available Spare: 100%"),
				f("Available Spare Threshold", 0, "Available Spare Threshold: 0%"),
				f("Percentage Used", 4, "Percentage Used: 4%"),
				f("Data Units Read", 1025206661, "Data Units Read: 1,025,206,661 [524 TB]"),
				f("Data Units Written", 3262673484, "Data Units Written: 3,262,673,484 [1.67 PB]"),
				f("Host Read Commands", 28425881770, "Host Read Commands: 28,425,881,770"),
				f("Host Write Commands", 44185064429, "Host Write Commands: 44,185,064,429"),
				f("Controller Busy Time", 20058, "Controller Busy Time: 20,058"),
				f("Power Cycles", 100, "Power Cycles: 100"),
				f("Power On Hours", 24544, "Power On Hours: 24,544"),
				f("Unsafe Shutdowns", 63, "Unsafe Shutdowns: 63"),
				f("Media and Data Integrity Errors", 0, "Media and Data Integrity Errors: 0"),
				f("Number of Error Information Log Entries", 0, "Error Information Log Entries: 0"),
			},
		}},
		Notes: []string{kelvin, enterpriseTrimmed, probeRedacts,
			"Three more SSDPE21K375GA reports in the same directory (000D23D5182F, 0B2CE4F33B01, 39C774C3CA95) show 3 % used and 1.58-1.62 PB written; this one has the highest percentage used."},
	},
	{
		Dir:   "intel-optane-p5800x-ssdpf21q400gb",
		Drive: "Intel Optane SSD DC P5800X 400GB U.2 (INTEL SSDPF21Q400GB)",
		Media: "3D XPoint (Optane)",
		URL:   "https://github.com/linuxhw/SMART/blob/4877705e91f129465c21eca78e8c784ea07194d1/NVMe/Intel/SSDPF21/SSDPF21Q400GB/E063D3529745",
		What:  "`smartctl -x` text (smartctl 7.4, firmware L0310200, \"Namespace 1 Size/Capacity: 400,088,457,216 [400 GB]\", local time Mon Aug 5 2024), section \"SMART/Health Information (NVMe Log 0x02)\", collected by hw-probe.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, "Critical Warning: 0x00"),
				f("Composite Temperature", 314, "Temperature: 41 Celsius"),
				f("Available Spare", 100, "Available Spare: 100%"),
				f("Available Spare Threshold", 0, "Available Spare Threshold: 0%"),
				f("Percentage Used", 0, "Percentage Used: 0%"),
				f("Data Units Read", 17965964, "Data Units Read: 17,965,964 [9.19 TB]"),
				f("Data Units Written", 36747753, "Data Units Written: 36,747,753 [18.8 TB]"),
				f("Host Read Commands", 716961559, "Host Read Commands: 716,961,559"),
				f("Host Write Commands", 476666464, "Host Write Commands: 476,666,464"),
				f("Controller Busy Time", 127, "Controller Busy Time: 127"),
				f("Power Cycles", 35, "Power Cycles: 35"),
				f("Power On Hours", 1768, "Power On Hours: 1,768"),
				f("Unsafe Shutdowns", 24, "Unsafe Shutdowns: 24"),
				f("Media and Data Integrity Errors", 0, "Media and Data Integrity Errors: 0"),
				f("Number of Error Information Log Entries", 0, "Error Information Log Entries: 0"),
				f("Warning Composite Temperature Time", 0, "Warning  Comp. Temperature Time: 0"),
				f("Critical Composite Temperature Time", 0, "Critical Comp. Temperature Time: 0"),
			},
		}},
		Notes: []string{kelvin, smartctlOmits, probeRedacts, "smartctl does not print the endurance group critical warning summary: it stays zero."},
	},
	{
		Dir:   "intel-d5-p5316-ssdpf2nv307tz",
		Drive: "Intel SSD D5-P5316 30.72TB U.2 (INTEL SSDPF2NV307TZ)",
		Media: "QLC NAND",
		URL:   "https://github.com/linuxhw/SMART/blob/4877705e91f129465c21eca78e8c784ea07194d1/NVMe/Intel/SSDPF2/SSDPF2NV307TZ/4D48C9F104A4",
		What:  "`smartctl -x` text (smartctl 7.4, firmware ACV10340, \"Namespace 1 Size/Capacity: 30,725,971,992,576 [30.7 TB]\", local time Fri May 17 2024), section \"SMART/Health Information (NVMe Log 0x02)\", collected by hw-probe.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, "Critical Warning: 0x00"),
				f("Composite Temperature", 316, "Temperature: 43 Celsius"),
				f("Available Spare", 100, "Available Spare: 100%"),
				f("Available Spare Threshold", 10, "Available Spare Threshold: 10%"),
				f("Percentage Used", 1, "Percentage Used: 1%"),
				f("Data Units Read", 363181883, "Data Units Read: 363,181,883 [185 TB]"),
				f("Data Units Written", 804199769, "Data Units Written: 804,199,769 [411 TB]"),
				f("Host Read Commands", 4845770221, "Host Read Commands: 4,845,770,221"),
				f("Host Write Commands", 14689857715, "Host Write Commands: 14,689,857,715"),
				f("Controller Busy Time", 118, "Controller Busy Time: 118"),
				f("Power Cycles", 366, "Power Cycles: 366"),
				f("Power On Hours", 8855, "Power On Hours: 8,855"),
				f("Unsafe Shutdowns", 174, "Unsafe Shutdowns: 174"),
				f("Media and Data Integrity Errors", 0, "Media and Data Integrity Errors: 0"),
				f("Number of Error Information Log Entries", 0, "Error Information Log Entries: 0"),
				f("Warning Composite Temperature Time", 688, "Warning  Comp. Temperature Time: 688"),
				f("Critical Composite Temperature Time", 0, "Critical Comp. Temperature Time: 0"),
			},
		}},
		Notes: []string{kelvin, smartctlOmits, probeRedacts, "smartctl does not print the endurance group critical warning summary: it stays zero.",
			"Another SSDPF2NV307TZ report in the same directory (D99B458AD863, firmware ACV10200, November 2023) shows 321,426,121 data units written and 0 % used."},
	},
	{
		Dir:   "intel-d5-p4320-ssdpe2nv076t8",
		Drive: "Intel SSD D5-P4320 7.68TB U.2 (INTEL SSDPE2NV076T8)",
		Media: "QLC NAND",
		URL:   "https://github.com/linuxhw/EnterpriseDrive/blob/41a8c28a6d9fce071a71fb955911f1b0fb9fa5da/NVMe/Intel/SSDPE2/SSDPE2NV076T8/2AB00CAEB5D2",
		What:  "`smartctl` report (smartctl 7.4, firmware 3DV10131, \"Namespace 1 Size/Capacity: 7,681,501,126,656 [7.68 TB]\", August 2025), section \"SMART/Health Information (NVMe Log 0x02)\", collected by hw-probe on a server.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, "Critical Warning: 0x00"),
				f("Composite Temperature", 304, "Temperature: 31 Celsius"),
				f("Available Spare", 100, "Available Spare: 100%"),
				f("Available Spare Threshold", 10, "Available Spare Threshold: 10%"),
				f("Percentage Used", 0, "Percentage Used: 0%"),
				f("Data Units Read", 100202013, "Data Units Read: 100,202,013 [51.3 TB]"),
				f("Data Units Written", 52465172, "Data Units Written: 52,465,172 [26.8 TB]"),
				f("Host Read Commands", 1215486444, "Host Read Commands: 1,215,486,444"),
				f("Host Write Commands", 1708891388, "Host Write Commands: 1,708,891,388"),
				f("Controller Busy Time", 1792, "Controller Busy Time: 1,792"),
				f("Power Cycles", 149, "Power Cycles: 149"),
				f("Power On Hours", 6453, "Power On Hours: 6,453"),
				f("Unsafe Shutdowns", 133, "Unsafe Shutdowns: 133"),
				f("Media and Data Integrity Errors", 0, "Media and Data Integrity Errors: 0"),
				f("Number of Error Information Log Entries", 0, "Error Information Log Entries: 0"),
				f("Warning Composite Temperature Time", 0, "Warning  Comp. Temperature Time: 0"),
				f("Critical Composite Temperature Time", 0, "Critical Comp. Temperature Time: 0"),
			},
		}},
		Notes: []string{kelvin, enterpriseTrimmed, probeRedacts,
			"The D5-P4320 is the 7.68 TB sibling of the 15.36 TB D5-P4326 (both report SSDPE2NV*); no public log recording of a D5-P4326 (SSDPE2NV153T8) was found."},
	},
	{
		Dir:   "solidigm-d5-p5430-sbfpf2bu307t",
		Drive: "Solidigm D5-P5430 30.72TB U.2 (SOLIDIGM SBFPF2BU307T)",
		Media: "QLC NAND",
		URL:   "https://github.com/linuxhw/SMART/blob/7c74a197e4e1ea51fb50b5f0991a5fd1ecf81a5d/NVMe/SOLIDIGM/SBFPF2/SBFPF2BU307T/8DC5252106F1",
		What:  "`smartctl -x` text (smartctl 7.3, firmware 6DV10302, PCI vendor 0x025e, NVMe 2.0, \"Namespace 1 Size/Capacity: 30,725,971,992,576 [30.7 TB]\", local time Tue Jul 1 2025), section \"SMART/Health Information (NVMe Log 0x02)\", collected by hw-probe.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, "Critical Warning: 0x00"),
				f("Composite Temperature", 312, "Temperature: 39 Celsius"),
				f("Available Spare", 100, "Available Spare: 100%"),
				f("Available Spare Threshold", 10, "Available Spare Threshold: 10%"),
				f("Percentage Used", 0, "Percentage Used: 0%"),
				f("Data Units Read", 140632, "Data Units Read: 140,632 [72.0 GB]"),
				f("Data Units Written", 253792, "Data Units Written: 253,792 [129 GB]"),
				f("Host Read Commands", 1136040, "Host Read Commands: 1,136,040"),
				f("Host Write Commands", 3252970, "Host Write Commands: 3,252,970"),
				f("Controller Busy Time", 0, "Controller Busy Time: 0"),
				f("Power Cycles", 152, "Power Cycles: 152"),
				f("Power On Hours", 4563, "Power On Hours: 4,563"),
				f("Unsafe Shutdowns", 47, "Unsafe Shutdowns: 47"),
				f("Media and Data Integrity Errors", 0, "Media and Data Integrity Errors: 0"),
				f("Number of Error Information Log Entries", 0, "Error Information Log Entries: 0"),
				f("Warning Composite Temperature Time", 195, "Warning  Comp. Temperature Time: 195"),
				f("Critical Composite Temperature Time", 0, "Critical Comp. Temperature Time: 0"),
			},
		}},
		Notes: []string{kelvin, smartctlOmits, probeRedacts, "smartctl does not print the endurance group critical warning summary: it stays zero.",
			"The recording names no product family: D5-P5430 (QLC) is the drive database's reading of the SBFPF?BU ordering code (internal/drivedb/drives.csv, sources https://m.cnbeta.com.tw/view/1360621.htm and geektopia.es); no Solidigm page confirming it was found."},
	},
}

// all is every recording, in directory-independent order.
func all() []recording {
	out := make([]recording, 0, len(recordings)+len(datacenterRecordings))
	out = append(out, recordings...)
	return append(out, datacenterRecordings...)
}
