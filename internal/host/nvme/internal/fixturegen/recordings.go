package main

// Every value below was read off a public recording of a real drive; "from"
// quotes the text it came from. A field without a recorded value stays zero.

type opt[T any] struct {
	v    T
	ok   bool
	from string
}

func rec[T any](v T, from string) opt[T] { return opt[T]{v: v, ok: true, from: from} }

type ctrlRec struct {
	VID, SSVID, CNTLID opt[uint16]
	SN, MN, FR         opt[string]
	OUI, VER, NN       opt[uint32]
	LPA                opt[uint8]
	TNVMCAP            opt[uint64]
}

type lbaf struct {
	MS    uint16
	LBADS uint8
	RP    uint8
}

type nsRec struct {
	NSZE, NCAP, NUSE     opt[uint64]
	NSFEAT, NLBAF, FLBAS opt[uint8]
	NPWG, NOWS           opt[uint16]
	LBAF                 []lbaf
	LBAFFrom             string
}

type recording struct {
	Dir   string // testdata/<Dir>
	Drive string
	Media string
	URL   string
	What  string
	Ctrl  ctrlRec
	NS    *nsRec // nil: no namespace data in the recording, so no id-ns-1.bin
	Notes []string
}

var smartctlRules = "Decoded with smartctl's printing rules (print_drive_info/print_drive_capabilities in https://github.com/smartmontools/smartmontools/blob/01ab76e5b8c164ed4a882dfc9250b446bc3ed9d9/smartmontools/nvmeprint.cpp): " +
	"\"PCI Vendor/Subsystem ID\" on one line means VID == SSVID; \"NVMe Version: X.Y\" means tertiary 0; " +
	"\"Size/Capacity\" on one line means NSZE == NCAP; the LBA table row marked '+' is the FLBAS value and the row count is NLBAF+1."

var recordings = []recording{
	{
		Dir:   "intel-optane-900p-ssdped1d280ga",
		Drive: "Intel Optane SSD 900P 280GB (INTEL SSDPED1D280GA)",
		Media: "3D XPoint (Optane)",
		URL:   "https://github.com/xcp-ng/xcp-ng-xapi-plugins/blob/9e6280e4ec1d2a58522c5b79f9aad9cad26ec871/tests/smartctl_outputs/smartctl_nvme1.py",
		What:  "`smartctl -j -a -d nvme /dev/nvme1` (smartctl 7.0) JSON, captured from real hardware per the file's header comment.",
		Ctrl: ctrlRec{
			VID:    rec[uint16](0x8086, `"nvme_pci_vendor": {"id": 32902, ...}`),
			SSVID:  rec[uint16](0x8086, `"nvme_pci_vendor": {..., "subsystem_id": 32902}`),
			SN:     rec("PHMB7466015Y280CGN", `"serial_number": "PHMB7466015Y280CGN"`),
			MN:     rec("INTEL SSDPED1D280GA", `"model_name": "INTEL SSDPED1D280GA"`),
			FR:     rec("E2010325", `"firmware_version": "E2010325"`),
			OUI:    rec[uint32](0x5cd2e4, `"nvme_ieee_oui_identifier": 6083300`),
			CNTLID: rec[uint16](0, `"nvme_controller_id": 0`),
			NN:     rec[uint32](1, `"nvme_number_of_namespaces": 1`),
		},
		NS: &nsRec{
			NSZE:     rec[uint64](547002288, `"size": {"blocks": 547002288, ...}`),
			NCAP:     rec[uint64](547002288, `"capacity": {"blocks": 547002288, ...}`),
			NUSE:     rec[uint64](547002288, `"utilization": {"blocks": 547002288, ...}`),
			LBAF:     []lbaf{{LBADS: 9}},
			LBAFFrom: `"formatted_lba_size": 512 (LBADS 9); the JSON gives neither the format index nor its metadata size`,
		},
		Notes: []string{
			"No nvme_version, nvme_total_capacity or LPA in this JSON: VER, TNVMCAP and LPA stay zero.",
			"FLBAS and NLBAF are not recorded and stay zero, so the recorded 512 B size is placed in LBA format 0 (the slot FLBAS=0 selects); metadata size and RP stay zero.",
		},
	},
	{
		Dir:   "intel-optane-p4800x-ssdped1k187ga",
		Drive: "Intel Optane SSD DC P4800X, pre-production 187GB add-in card (INTEL SSDPED1K187GA)",
		Media: "3D XPoint (Optane)",
		URL:   "https://github.com/spdk/spdk/issues/143",
		What:  "SPDK `identify` example output pasted by luohao on 2017-05-09 (\"Controller Capabilities/Features\" block of NVMe Controller at 0000:01:00.0 [8086:2701]).",
		Ctrl: ctrlRec{
			VID:   rec[uint16](0x8086, "Vendor ID: 8086"),
			SSVID: rec[uint16](0x8086, "Subsystem Vendor ID: 8086"),
			SN:    rec("FUKS643600DR187AGN", "Serial Number: FUKS643600DR187AGN"),
			MN:    rec("INTEL SSDPED1K187GA", "Model Number: INTEL SSDPED1K187GA"),
			FR:    rec("E2010211", "Firmware Version: E2010211"),
			OUI:   rec[uint32](0x5cd2e4, "IEEE OUI Identifier: e4 d2 5c (SPDK prints the three bytes in buffer order)"),
		},
		Notes: []string{
			"The excerpt ends before the namespace section, so there is no id-ns-1.bin.",
			"SPDK's \"NVMe Specification Version (VS): 1.0\" is the VS register, not the Identify VER field, so VER stays zero.",
			"A maintainer in the same thread calls the 375GB model the production version; this 187GB card is an early P4800X.",
		},
	},
	{
		Dir:   "intel-660p-ssdpeknw512g8",
		Drive: "Intel SSD 660p 512GB (SSDPEKNW512G8)",
		Media: "QLC NAND",
		URL:   "https://github.com/linuxhw/SMART/blob/c9ffdba0575a0f9afbdadac9e99e93f29c842290/NVMe/Intel/660/660p%20SSDPEKNW512G8%20NVMe%20512GB/E176CECE2FAF",
		What:  "`smartctl -x` text (smartctl 7.3) collected by the linux-hardware.org probe; the probe replaces the serial number with \"--\".",
		Ctrl: ctrlRec{
			VID:    rec[uint16](0x8086, "PCI Vendor/Subsystem ID: 0x8086"),
			SSVID:  rec[uint16](0x8086, "PCI Vendor/Subsystem ID: 0x8086"),
			MN:     rec("660p SSDPEKNW512G8 NVMe INTEL 512GB", "Model Number: 660p SSDPEKNW512G8 NVMe INTEL 512GB"),
			FR:     rec("7050", "Firmware Version: 7050"),
			OUI:    rec[uint32](0x5cd2e4, "IEEE OUI Identifier: 0x5cd2e4"),
			CNTLID: rec[uint16](1, "Controller ID: 1"),
			VER:    rec[uint32](0x00010300, "NVMe Version: 1.3"),
			NN:     rec[uint32](1, "Number of Namespaces: 1"),
			LPA:    rec[uint8](0x0f, "Log Page Attributes (0x0f): S/H_per_NS Cmd_Eff_Lg Ext_Get_Lg Telmtry_Lg"),
		},
		NS: &nsRec{
			NSZE:     rec[uint64](1000215216, "Namespace 1 Size/Capacity: 512,110,190,592 [512 GB] (÷ 512 B)"),
			NCAP:     rec[uint64](1000215216, "Namespace 1 Size/Capacity: 512,110,190,592 [512 GB] (÷ 512 B)"),
			NLBAF:    rec[uint8](0, "Supported LBA Sizes: one row"),
			FLBAS:    rec[uint8](0, "Supported LBA Sizes: row 0 marked '+'"),
			LBAF:     []lbaf{{MS: 0, LBADS: 9, RP: 0}},
			LBAFFrom: "Id 0, Fmt +, Data 512, Metadt 0, Rel_Perf 0",
		},
		Notes: []string{
			smartctlRules,
			"Serial number is redacted in the recording and stays empty.",
			"No \"Total NVM Capacity\" line (smartctl omits it when TNVMCAP and UNVMCAP are zero): TNVMCAP stays zero.",
			"No \"Namespace 1 Utilization\" line (smartctl omits it when NUSE == NCAP), but the value itself is not printed, so NUSE stays zero.",
			"The recording shows no NSFEAT, NPWG or NOWS values: they stay zero, so PreferredWriteGranularity reports not-valid for this fixture.",
			"The linux-hardware.org probe rewrites model names as \"<family> <part> <bus> <vendor> <size>\"; the drive itself reports `INTEL SSDPEKNW512G8` (fdisk -l on a 660p prints \"Disk model: INTEL SSDPEKNW512G8\"). Use this MN to test parsing, not model matching.",
		},
	},
	{
		Dir:   "samsung-980pro-heatsink-1tb",
		Drive: "Samsung 980 PRO with Heatsink 1TB",
		Media: "TLC NAND",
		URL:   "https://github.com/linuxhw/SMART/blob/c17c10ebcd5338368e45bc3244bced19a5ce7fe2/NVMe/Samsung/980/980%20PRO%20with%20Heatsink%201TB/08F2753E0267",
		What:  "`smartctl -x` text (smartctl 7.2) collected by the linux-hardware.org probe; the probe replaces the serial number with \"--\".",
		Ctrl: ctrlRec{
			VID:     rec[uint16](0x144d, "PCI Vendor/Subsystem ID: 0x144d"),
			SSVID:   rec[uint16](0x144d, "PCI Vendor/Subsystem ID: 0x144d"),
			MN:      rec("Samsung 980 PRO with Heatsink 1TB", "Model Number: Samsung 980 PRO with Heatsink 1TB"),
			FR:      rec("3B2QGXA7", "Firmware Version: 3B2QGXA7"),
			OUI:     rec[uint32](0x002538, "IEEE OUI Identifier: 0x002538"),
			TNVMCAP: rec[uint64](1000204886016, "Total NVM Capacity: 1,000,204,886,016 [1.00 TB]"),
			CNTLID:  rec[uint16](6, "Controller ID: 6"),
			VER:     rec[uint32](0x00010300, "NVMe Version: 1.3"),
			NN:      rec[uint32](1, "Number of Namespaces: 1"),
			LPA:     rec[uint8](0x0f, "Log Page Attributes (0x0f): S/H_per_NS Cmd_Eff_Lg Ext_Get_Lg Telmtry_Lg"),
		},
		NS: &nsRec{
			NSZE:     rec[uint64](1953525168, "Namespace 1 Size/Capacity: 1,000,204,886,016 [1.00 TB] (÷ 512 B)"),
			NCAP:     rec[uint64](1953525168, "Namespace 1 Size/Capacity: 1,000,204,886,016 [1.00 TB] (÷ 512 B)"),
			NUSE:     rec[uint64](1046128192, "Namespace 1 Utilization: 535,617,634,304 [535 GB] (÷ 512 B)"),
			NLBAF:    rec[uint8](0, "Supported LBA Sizes: one row"),
			FLBAS:    rec[uint8](0, "Supported LBA Sizes: row 0 marked '+'"),
			LBAF:     []lbaf{{MS: 0, LBADS: 9, RP: 0}},
			LBAFFrom: "Id 0, Fmt +, Data 512, Metadt 0, Rel_Perf 0",
		},
		Notes: []string{
			smartctlRules,
			"Serial number is redacted in the recording and stays empty.",
			"The recording shows no NSFEAT, NPWG or NOWS values: they stay zero.",
		},
	},
	{
		Dir:   "micron-9200-mtfdhal1t6tcu",
		Drive: "Micron 9200 1.6TB (Micron_9200_MTFDHAL1T6TCU)",
		Media: "TLC NAND",
		URL:   "https://github.com/thomas-krenn/TKperf/issues/25",
		What:  "`nvme id-ctrl --vendor-specific` text (nvme-cli 1.x, file nvme-id-ctrl-micron9200-vendor) posted by tniedermeier on 2018-09-20.",
		Ctrl: ctrlRec{
			VID:     rec[uint16](0x1344, "vid : 0x1344"),
			SSVID:   rec[uint16](0x1344, "ssvid : 0x1344"),
			SN:      rec("18161E7964B7", "sn : 18161E7964B7"),
			MN:      rec("Micron_9200_MTFDHAL1T6TCU", "mn : Micron_9200_MTFDHAL1T6TCU"),
			FR:      rec("101008P0", "fr : 101008P0"),
			OUI:     rec[uint32](0x00e0cf, "ieee : 00e0cf (nvme-cli prints ieee[2] ieee[1] ieee[0])"),
			CNTLID:  rec[uint16](1, "cntlid : 1"),
			VER:     rec[uint32](0x10200, "ver : 10200 (hex)"),
			LPA:     rec[uint8](0x02, "lpa : 0x2"),
			TNVMCAP: rec[uint64](1600321314816, "tnvmcap : 1600321314816"),
			NN:      rec[uint32](1, "nn : 1"),
		},
		Notes: []string{
			"The thread has no `nvme id-ns` output for this drive, so there is no id-ns-1.bin.",
		},
	},
}
