package main

// Every value below was read off a public recording of a real drive; "from"
// quotes the text it came from. A field without a recorded value stays zero.

type fieldRec struct {
	Name string // key of smartSpec / ocpSpec
	V    uint64
	From string
}

type intelEntry struct {
	ID   uint8
	Name string
	Norm uint8
	Raw  [6]byte
	From string
}

type logRec struct {
	ID      uint8
	Title   string
	Size    int
	Fields  []fieldRec   // 02h and C0h
	GUID    bool         // C0h: write the OCP log page GUID
	Entries []intelEntry // CAh, in page order
}

type recording struct {
	Dir   string // testdata/logs/<Dir>
	Drive string
	Media string
	URL   string
	What  string
	Logs  []logRec
	Notes []string
}

func f(name string, v uint64, from string) fieldRec { return fieldRec{name, v, from} }

func raw48(v uint64) (r [6]byte) {
	for i := range r {
		r[i] = byte(v >> (8 * i))
	}
	return r
}

// wear packs attribute ADh: min, max, avg erase counts as three le16.
func wear(lo, hi, avg uint16) [6]byte {
	return [6]byte{byte(lo), byte(lo >> 8), byte(hi), byte(hi >> 8), byte(avg), byte(avg >> 8)}
}

// throttle packs attribute EAh: percent, then a le32 event count.
func throttle(pct uint8, n uint32) [6]byte {
	return [6]byte{pct, byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24), 0}
}

const (
	smartTitle = "SMART / Health Information, log id 02h"
	ocpTitle   = "OCP SMART / Health Information Extended, log id C0h"
	intelTitle = "Intel Additional SMART Attributes, log id CAh"
)

// kelvin notes the one conversion done on recorded values: smartctl prints
// temperatures as K - 273, so K = printed °C + 273.
const kelvin = "smartctl prints the composite temperature and sensors as kelvin − 273 (nvmeprint.cpp kelvin_to_str), so the page holds the printed °C + 273."

const smartctlOmits = "smartctl -x prints \"Temperature Sensor N\" and \"Thermal Temp. N Transition Count/Total Time\" lines only when they are non-zero, so the sensors and counters it did not print are zero on the drive as well."

var recordings = []recording{
	{
		Dir:   "intel-optane-900p-ssdped1d280ga",
		Drive: "Intel Optane SSD 900P 280GB (INTEL SSDPED1D280GA)",
		Media: "3D XPoint (Optane)",
		URL:   "https://github.com/xcp-ng/xcp-ng-xapi-plugins/blob/9e6280e4ec1d2a58522c5b79f9aad9cad26ec871/tests/smartctl_outputs/smartctl_nvme1.py",
		What:  "`smartctl -j -a -d nvme /dev/nvme1` (smartctl 7.0) JSON, \"Outputs are from real hardware\" per the file's header; object `nvme_smart_health_information_log`.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, `"critical_warning": 0`),
				f("Composite Temperature", 304, `"temperature": 31 (°C; 31 + 273 K)`),
				f("Available Spare", 100, `"available_spare": 100`),
				f("Available Spare Threshold", 0, `"available_spare_threshold": 0`),
				f("Percentage Used", 0, `"percentage_used": 0`),
				f("Data Units Read", 67343004, `"data_units_read": 67343004`),
				f("Data Units Written", 65516455, `"data_units_written": 65516455`),
				f("Host Read Commands", 3265697818, `"host_reads": 3265697818`),
				f("Host Write Commands", 2714560339, `"host_writes": 2714560339`),
				f("Controller Busy Time", 628, `"controller_busy_time": 628`),
				f("Power Cycles", 26, `"power_cycles": 26`),
				f("Power On Hours", 42772, `"power_on_hours": 42772`),
				f("Unsafe Shutdowns", 14, `"unsafe_shutdowns": 14`),
				f("Media and Data Integrity Errors", 0, `"media_errors": 0`),
				f("Number of Error Information Log Entries", 4, `"num_err_log_entries": 4`),
			},
		}},
		Notes: []string{
			kelvin,
			"smartctl 7.0 JSON has no endurance group warning, temperature times, sensors or thermal management counters: they stay zero.",
		},
	},
	{
		Dir:   "intel-dc-p3700-ssdpedmd400g4",
		Drive: "Intel SSD DC P3700 400GB add-in card (INTEL SSDPEDMD400G4)",
		Media: "MLC NAND",
		URL:   "https://github.com/netdata/netdata/issues/8594",
		What:  "JSON pasted by k0ste in the issue: the device's `ModelNumber`/`ProductName` (\"PCIe Data Center SSD DC P3700 SSD\") and a `smart_log` object with nvme-cli's smart-log JSON keys.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, `"critical_warning": 0`),
				f("Composite Temperature", 311, `"temperature": 311 (kelvin, as nvme-cli's JSON prints it)`),
				f("Available Spare", 100, `"avail_spare": 100`),
				f("Available Spare Threshold", 10, `"spare_thresh": 10`),
				f("Percentage Used", 3, `"percent_used": 3`),
				f("Data Units Read", 228744653, `"data_units_read": 228744653`),
				f("Data Units Written", 464403132, `"data_units_written": 464403132`),
				f("Host Read Commands", 2894926909, `"host_read_commands": 2894926909`),
				f("Host Write Commands", 9043251297, `"host_write_commands": 9043251297`),
				f("Controller Busy Time", 13, `"controller_busy_time": 13`),
				f("Power Cycles", 19, `"power_cycles": 19`),
				f("Power On Hours", 27567, `"power_on_hours": 27567`),
				f("Unsafe Shutdowns", 0, `"unsafe_shutdowns": 0`),
				f("Media and Data Integrity Errors", 0, `"media_errors": 0`),
				f("Number of Error Information Log Entries", 0, `"num_err_log_entries": 0`),
				f("Warning Composite Temperature Time", 0, `"warning_temp_time": 0`),
				f("Critical Composite Temperature Time", 0, `"critical_comp_time": 0`),
				f("Thermal Mgmt T1 Transition Count", 0, `"thm_temp1_trans_count": 0`),
				f("Thermal Mgmt T2 Transition Count", 0, `"thm_temp2_trans_count": 0`),
				f("Thermal Mgmt T1 Total Time", 0, `"thm_temp1_total_time": 0`),
				f("Thermal Mgmt T2 Total Time", 0, `"thm_temp2_total_time": 0`),
			},
		}},
		Notes: []string{
			"The snippet has no temperature sensor or endurance group fields: they stay zero.",
			"The same comment gives SectorSize 4096 and PhysicalSize 400088457216 for the namespace; data units are counted in 512-byte units regardless of the LBA size.",
		},
	},
	{
		Dir:   "samsung-980pro-heatsink-1tb",
		Drive: "Samsung 980 PRO with Heatsink 1TB",
		Media: "TLC NAND",
		URL:   "https://github.com/linuxhw/SMART/blob/c17c10ebcd5338368e45bc3244bced19a5ce7fe2/NVMe/Samsung/980/980%20PRO%20with%20Heatsink%201TB/08F2753E0267",
		What:  "`smartctl -x` text (smartctl 7.2), section \"SMART/Health Information (NVMe Log 0x02)\", collected by the linux-hardware.org probe.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, "Critical Warning: 0x00"),
				f("Composite Temperature", 315, "Temperature: 42 Celsius"),
				f("Available Spare", 100, "Available Spare: 100%"),
				f("Available Spare Threshold", 10, "Available Spare Threshold: 10%"),
				f("Percentage Used", 11, "Percentage Used: 11%"),
				f("Data Units Read", 3504142530, "Data Units Read: 3,504,142,530 [1.79 PB]"),
				f("Data Units Written", 188100801, "Data Units Written: 188,100,801 [96.3 TB]"),
				f("Host Read Commands", 16945002343, "Host Read Commands: 16,945,002,343"),
				f("Host Write Commands", 4435505451, "Host Write Commands: 4,435,505,451"),
				f("Controller Busy Time", 32187, "Controller Busy Time: 32,187"),
				f("Power Cycles", 199, "Power Cycles: 199"),
				f("Power On Hours", 3022, "Power On Hours: 3,022"),
				f("Unsafe Shutdowns", 16, "Unsafe Shutdowns: 16"),
				f("Media and Data Integrity Errors", 0, "Media and Data Integrity Errors: 0"),
				f("Number of Error Information Log Entries", 0, "Error Information Log Entries: 0"),
				f("Warning Composite Temperature Time", 0, "Warning  Comp. Temperature Time: 0"),
				f("Critical Composite Temperature Time", 0, "Critical Comp. Temperature Time: 0"),
				f("Temperature Sensor 1", 315, "Temperature Sensor 1: 42 Celsius"),
				f("Temperature Sensor 2", 318, "Temperature Sensor 2: 45 Celsius"),
			},
		}},
		Notes: []string{kelvin, smartctlOmits, "smartctl does not print the endurance group critical warning summary: it stays zero."},
	},
	{
		Dir:   "intel-660p-ssdpeknw512g8",
		Drive: "Intel SSD 660p 512GB (SSDPEKNW512G8)",
		Media: "QLC NAND",
		URL:   "https://github.com/linuxhw/SMART/blob/c9ffdba0575a0f9afbdadac9e99e93f29c842290/NVMe/Intel/660/660p%20SSDPEKNW512G8%20NVMe%20512GB/E176CECE2FAF",
		What:  "`smartctl -x` text (smartctl 7.3), section \"SMART/Health Information (NVMe Log 0x02)\", collected by the linux-hardware.org probe.",
		Logs: []logRec{{
			ID: 0x02, Title: smartTitle, Size: 512,
			Fields: []fieldRec{
				f("Critical Warning", 0, "Critical Warning: 0x00"),
				f("Composite Temperature", 309, "Temperature: 36 Celsius"),
				f("Available Spare", 100, "Available Spare: 100%"),
				f("Available Spare Threshold", 50, "Available Spare Threshold: 50%"),
				f("Percentage Used", 5, "Percentage Used: 5%"),
				f("Data Units Read", 49063817, "Data Units Read: 49,063,817 [25.1 TB]"),
				f("Data Units Written", 42773337, "Data Units Written: 42,773,337 [21.8 TB]"),
				f("Host Read Commands", 1575056059, "Host Read Commands: 1,575,056,059"),
				f("Host Write Commands", 609579603, "Host Write Commands: 609,579,603"),
				f("Controller Busy Time", 12005, "Controller Busy Time: 12,005"),
				f("Power Cycles", 1149, "Power Cycles: 1,149"),
				f("Power On Hours", 4094, "Power On Hours: 4,094"),
				f("Unsafe Shutdowns", 165, "Unsafe Shutdowns: 165"),
				f("Media and Data Integrity Errors", 0, "Media and Data Integrity Errors: 0"),
				f("Number of Error Information Log Entries", 0, "Error Information Log Entries: 0"),
				f("Warning Composite Temperature Time", 0, "Warning  Comp. Temperature Time: 0"),
				f("Critical Composite Temperature Time", 0, "Critical Comp. Temperature Time: 0"),
			},
		}},
		Notes: []string{kelvin, smartctlOmits, "smartctl does not print the endurance group critical warning summary: it stays zero."},
	},
	{
		Dir:   "intel-dc-p3600-ssdpedme016t4f",
		Drive: "Intel SSD DC P3600 1.6TB add-in card (INTEL SSDPEDME016T4F)",
		Media: "MLC NAND",
		URL:   "https://github.com/facebook/CacheLib/blob/9447a8acfb84c70c93333063bbee22d5e748a3e1/cachelib/cachebench/util/tests/NandWritesTest.cpp",
		What:  "`nvme intel smart-log-add /dev/nvme0n1` text (nvme-cli 1.x format) used by test `nandWriteBytes_handlesIntelDevice`, next to the drive's `nvme list -o json` entry (ModelNumber INTEL SSDPEDME016T4F, ProductName \"PCIe Data Center SSD DC P3600 SSD [Add-in Card]\", firmware 8DV1FF05).",
		Logs: []logRec{{
			ID: 0xCA, Title: intelTitle, Size: 512,
			Entries: []intelEntry{
				{0xAB, "program_fail_count", 100, raw48(0), "program_fail_count : 100% 0"},
				{0xAC, "erase_fail_count", 100, raw48(0), "erase_fail_count : 100% 0"},
				{0xAD, "wear_leveling", 70, wear(3523, 3603, 3562), "wear_leveling : 70% min: 3523, max: 3603, avg: 3562"},
				{0xB8, "end_to_end_error_detection_count", 100, raw48(0), "end_to_end_error_detection_count: 100% 0"},
				{0xC7, "crc_error_count", 100, raw48(0), "crc_error_count : 100% 0"},
				{0xE2, "timed_workload_media_wear", 100, raw48(65535), "timed_workload_media_wear : 100% 63.999% (raw / 1024 printed with 3 decimals: only raw 65535 prints 63.999)"},
				{0xE3, "timed_workload_host_reads", 100, raw48(65535), "timed_workload_host_reads : 100% 65535%"},
				{0xE4, "timed_workload_timer", 100, raw48(65535), "timed_workload_timer : 100% 65535 min"},
				{0xEA, "thermal_throttle_status", 100, throttle(0, 0), "thermal_throttle_status : 100% 0%, cnt: 0"},
				{0xF0, "retry_buffer_overflow_count", 100, raw48(0), "retry_buffer_overflow_count : 100% 0"},
				{0xF3, "pll_lock_loss_count", 100, raw48(0), "pll_lock_loss_count : 100% 0"},
				{0xF4, "nand_bytes_written", 100, raw48(224943088), "nand_bytes_written : 100% sectors: 224943088"},
				{0xF5, "host_bytes_written", 100, raw48(172365270), "host_bytes_written : 100% sectors: 172365270"},
			},
		}},
		Notes: []string{
			"That nvme-cli version printed entries in its fixed struct order without their ids; the id byte of each slot is the one nvme-cli's intel plugin assigns to that name (id_to_key: 0xab program_fail_count … 0xf5 host_bytes_written). Entry i sits at bytes 12i to 12i+11.",
			"The text labels the F4h/F5h raw values \"sectors\"; CacheLib converts them with 32 MiB per count and expects 7547837550166016 bytes (= 224943088 × 33554432) for this drive.",
			"The recording is the input of a unit test; the test does not say it was captured verbatim from the drive, but the model, firmware and serial fields are those of a real P3600.",
			"Bytes 156-511 (after the 13 entries) are not in the recording and stay zero.",
		},
	},
	{
		Dir:   "wdc-wus4bb019d4m9e7",
		Drive: "Western Digital WUS4BB019D4M9E7 (data-center NVMe, 1.92 TB class)",
		Media: "NAND (type not stated in the recording)",
		URL:   "https://github.com/facebook/CacheLib/blob/9447a8acfb84c70c93333063bbee22d5e748a3e1/cachelib/cachebench/util/tests/NandWritesTest.cpp",
		What:  "`nvme wdc vs-smart-add-log /dev/nvme1n1` text, block \"SMART Cloud Attributes\" (the OCP C0 page), used by test `nandWriteBytes_handlesWesternDigitalDevice`, next to the drive's `nvme list -o json` entry (ModelNumber WUS4BB019D4M9E7, firmware R9109005).",
		Logs: []logRec{{
			ID: 0xC0, Title: ocpTitle, Size: 512, GUID: true,
			Fields: []fieldRec{
				f("Physical Media Units Written", 609651339018240, "Physical media units written : 0 609651339018240 (high, low 64 bits)"),
				f("Physical Media Units Read", 567611790770176, "Physical media units read : 0 567611790770176"),
				f("Bad User NAND Blocks Raw", 0, "Bad user nand blocks Raw : 0"),
				f("Bad User NAND Blocks Normalized", 100, "Bad user nand blocks Normalized : 100"),
				f("Bad System NAND Blocks Raw", 0, "Bad system nand blocks Raw : 0"),
				f("Bad System NAND Blocks Normalized", 100, "Bad system nand blocks Normalized : 100"),
				f("XOR Recovery Count", 0, "XOR recovery count : 0"),
				f("Uncorrectable Read Error Count", 0, "Uncorrectable read error count : 0"),
				f("Soft ECC Error Count", 0, "Soft ecc error count : 0"),
				f("End to End Detected Errors", 0, "End to end detected errors : 0"),
				f("End to End Corrected Errors", 0, "End to end corrected errors : 0"),
				f("System Data % Used", 0, "System data percent used : 0"),
				f("Refresh Counts", 4, "Refresh counts : 4"),
				f("User Data Erase Count Max", 293, "Max User data erase counts : 293"),
				f("User Data Erase Count Min", 197, "Min User data erase counts : 197"),
				f("Thermal Throttling Event Count", 0, "Number of Thermal throttling events : 0"),
				f("Thermal Throttling Status", 0, "Current throttling status : 0x0"),
				f("Log Page Version", 2, "Log page version : 2"),
			},
		}},
		Notes: []string{
			"The GUID line reads `Log page GUID : 0x0xafd514c97c6f4f9ca4f2bfea2810afc5` (nvme-cli prints the 128-bit value most significant byte first).",
			"Recorded but not decoded by ParseOCPSMARTLog, so left zero here: percent free blocks 1, capacitor health 114, unaligned I/O 0, security version 0, NUSE 0, PLP start count 42, endurance estimate 16896000000000000, PCIe correctable errors 0, incomplete shutdowns 0.",
			"The recording is the input of a unit test; the test does not say it was captured verbatim from the drive.",
		},
	},
}
