package main

// Each recording quotes a public `smartctl -x` text output of a real drive.
// Table holds the attribute rows exactly as printed.

type recording struct {
	Dir              string // testdata/<Dir>
	Drive, Media     string
	URL, What        string
	ModelFamily      string // "Model Family:" line; "" when smartctl did not know the drive
	ModelName        string
	Firmware         string
	CapacityBytes    uint64
	CapacityLine     string
	LogicalBlockSize int
	SectorLine       string
	Table            []string
	packedRaw        map[int]bool // attribute ids printed in a packed format
	Notes            []string
}

var temperatures = map[int]bool{190: true, 194: true}

var recordings = []recording{
	{
		Dir:              "samsung-870-qvo-1tb",
		Drive:            "Samsung SSD 870 QVO 1TB",
		Media:            "QLC NAND",
		URL:              "https://github.com/linuxhw/SMART/blob/40541dea7df34f6d0e89cc1b61a85e9ea78359d1/SSD/Samsung/SSD%20870/SSD%20870%20QVO%201TB/0CDF7FA8DAF3",
		What:             "`smartctl -x` text (smartctl 7.3, drive database 7.3/5319) collected by the linux-hardware.org probe on 2023-08-27; the probe replaces the serial number with \"--\".",
		ModelFamily:      "Samsung based SSDs",
		ModelName:        "Samsung SSD 870 QVO 1TB",
		Firmware:         "SVQ01B6Q",
		CapacityBytes:    1000204886016,
		CapacityLine:     "User Capacity: 1,000,204,886,016 bytes [1.00 TB]",
		LogicalBlockSize: 512,
		SectorLine:       "Sector Size: 512 bytes logical/physical",
		Table: []string{
			"  5 Reallocated_Sector_Ct   PO--CK   100   100   010    -    0",
			"  9 Power_On_Hours          -O--CK   097   097   000    -    13129",
			" 12 Power_Cycle_Count       -O--CK   098   098   000    -    1965",
			"177 Wear_Leveling_Count     PO--C-   085   085   000    -    149",
			"179 Used_Rsvd_Blk_Cnt_Tot   PO--C-   100   100   010    -    0",
			"181 Program_Fail_Cnt_Total  -O--CK   100   100   010    -    0",
			"182 Erase_Fail_Count_Total  -O--CK   100   100   010    -    0",
			"183 Runtime_Bad_Block       PO--C-   100   100   010    -    0",
			"187 Uncorrectable_Error_Cnt -O--CK   100   100   000    -    0",
			"190 Airflow_Temperature_Cel -O--CK   070   048   000    -    30",
			"195 ECC_Error_Rate          -O-RC-   200   200   000    -    0",
			"199 CRC_Error_Count         -OSRCK   099   099   000    -    652",
			"235 POR_Recovery_Count      -O--C-   099   099   000    -    89",
			"241 Total_LBAs_Written      -O--CK   099   099   000    -    153611357092",
		},
		packedRaw: temperatures,
		Notes: []string{
			"The same run's Device Statistics (GP Log 0x04) show `Logical Sectors Written 153611357092` (equal to attribute 241) and `Percentage Used Endurance Indicator 15` (equal to 100 − normalized 085 of attribute 177).",
		},
	},
	{
		Dir:              "micron-5210-ion-7t6",
		Drive:            "Micron 5210 ION 7.68TB (Micron_5210_MTFDDAK7T6QDE)",
		Media:            "QLC NAND",
		URL:              "https://github.com/linuxhw/SMART/blob/c9ffdba0575a0f9afbdadac9e99e93f29c842290/SSD/Micron/5210/5210_MTFDDAK7T6QDE/9464E17C7DDE",
		What:             "`smartctl -x` text (smartctl 7.1) collected by the linux-hardware.org probe on 2022-08-11; \"Device is: Not in smartctl database\", so most attributes print as Unknown_Attribute.",
		ModelName:        "Micron_5210_MTFDDAK7T6QDE",
		Firmware:         "D2MU805",
		CapacityBytes:    7681501126656,
		CapacityLine:     "User Capacity: 7,681,501,126,656 bytes [7.68 TB]",
		LogicalBlockSize: 512,
		SectorLine:       "Sector Sizes: 512 bytes logical, 4096 bytes physical",
		Table: []string{
			"  1 Raw_Read_Error_Rate     POSR-K   100   100   050    -    0",
			"  5 Reallocated_Sector_Ct   -O--CK   100   100   001    -    0",
			"  9 Power_On_Hours          -O--CK   100   100   000    -    10835",
			" 12 Power_Cycle_Count       -O--CK   100   100   001    -    19",
			"170 Unknown_Attribute       PO--CK   100   100   010    -    0",
			"171 Unknown_Attribute       -O--CK   100   100   000    -    0",
			"172 Unknown_Attribute       -O--CK   100   100   001    -    0",
			"173 Unknown_Attribute       -O--CK   097   097   000    -    43",
			"174 Unknown_Attribute       -O--CK   100   100   000    -    12",
			"183 Runtime_Bad_Block       -O--CK   100   100   000    -    0",
			"184 End-to-End_Error        -O--CK   100   100   000    -    0",
			"187 Reported_Uncorrect      -O--CK   100   100   000    -    0",
			"188 Command_Timeout         -O--CK   100   100   000    -    7",
			"194 Temperature_Celsius     -O---K   066   056   000    -    34 (Min/Max 18/44)",
			"195 Hardware_ECC_Recovered  -O--CK   100   100   000    -    0",
			"196 Reallocated_Event_Count -O--CK   100   100   000    -    0",
			"197 Current_Pending_Sector  -O--CK   100   100   000    -    0",
			"198 Offline_Uncorrectable   ----CK   100   100   000    -    0",
			"199 UDMA_CRC_Error_Count    -O--CK   100   100   000    -    0",
			"202 Unknown_SSD_Attribute   ----CK   097   097   001    -    3",
			"206 Unknown_SSD_Attribute   -OSR--   100   100   000    -    0",
			"246 Unknown_Attribute       -O--CK   100   100   000    -    147037848489",
			"247 Unknown_Attribute       -O--CK   100   100   000    -    6923736636",
			"248 Unknown_Attribute       -O--CK   100   100   000    -    17931795822",
			"180 Unused_Rsvd_Blk_Cnt_Tot PO--CK   001   001   000    -    24828",
			"210 Unknown_Attribute       -O--CK   100   100   000    -    0",
		},
		packedRaw: temperatures,
		Notes: []string{
			"No \"Model Family:\" line (drive not in smartctl 7.1's database), so model_family is not written.",
			"The same run's Device Statistics show `Logical Sectors Written 147037848681` (attribute 246 reads 147037848489: the two counters are sampled separately) and `Percentage Used Endurance Indicator 3` (= 100 − normalized 097 of attribute 202).",
		},
	},
	{
		Dir:              "micron-5210-ion-1t9",
		Drive:            "Micron 5210 ION 1.92TB (Micron_5210_MTFDDAK1T9QDE)",
		Media:            "QLC NAND",
		URL:              "https://github.com/linuxhw/SMART/blob/1252c08b4f14127dd816640a11f2c3fe93ee9277/SSD/Micron/5210/5210_MTFDDAK1T9QDE/DFA6B2C89534",
		What:             "`smartctl -x` text (smartctl 7.4, drive database 7.3/5660) collected by the linux-hardware.org probe on 2025-03-27.",
		ModelFamily:      "Micron 5100 / 52x0 / 5300 / 5400 SSDs",
		ModelName:        "Micron_5210_MTFDDAK1T9QDE",
		Firmware:         "D2MU001",
		CapacityBytes:    1920383410176,
		CapacityLine:     "User Capacity: 1,920,383,410,176 bytes [1.92 TB]",
		LogicalBlockSize: 512,
		SectorLine:       "Sector Sizes: 512 bytes logical, 4096 bytes physical",
		Table: []string{
			"  1 Raw_Read_Error_Rate     POSR-K   100   100   050    -    0",
			"  5 Reallocated_Sector_Ct   -O--CK   100   100   001    -    0",
			"  9 Power_On_Hours          -O--CK   100   100   000    -    14187",
			" 12 Power_Cycle_Count       -O--CK   100   100   001    -    1030",
			"170 Reserved_Block_Pct      PO--CK   100   100   010    -    0",
			"171 Program_Fail_Count      -O--CK   100   100   000    -    0",
			"172 Erase_Fail_Count        -O--CK   100   100   001    -    0",
			"173 Avg_Block-Erase_Count   -O--CK   100   100   000    -    1",
			"174 Unexpect_Power_Loss_Ct  -O--CK   100   100   000    -    262",
			"183 SATA_Int_Downshift_Ct   -O--CK   100   100   000    -    0",
			"184 End-to-End_Error        -O--CK   100   100   000    -    0",
			"187 Reported_Uncorrect      -O--CK   100   100   000    -    0",
			"188 Command_Timeout         -O--CK   100   100   000    -    843",
			"194 Temperature_Celsius     -O---K   060   055   000    -    40 (Min/Max 14/45)",
			"195 Hardware_ECC_Recovered  -O--CK   100   100   000    -    0",
			"196 Reallocated_Event_Count -O--CK   100   100   000    -    0",
			"197 Current_Pending_Sector  -O--CK   100   100   000    -    0",
			"198 Offline_Uncorrectable   ----CK   100   100   000    -    0",
			"199 UDMA_CRC_Error_Count    -O--CK   100   100   000    -    0",
			"202 Percent_Lifetime_Remain ----CK   100   100   001    -    0",
			"206 Write_Error_Rate        -OSR--   100   100   000    -    0",
			"246 Total_LBAs_Written      -O--CK   100   100   000    -    0",
			"247 Host_Program_Page_Count -O--CK   100   100   000    -    0",
			"248 Bckgnd_Program_Page_Cnt -O--CK   100   100   000    -    13480110",
			"180 Unused_Rsvd_Blk_Cnt_Tot PO--CK   001   001   000    -    6164",
			"210 RAIN_Success_Recovered  -O--CK   100   100   000    -    0",
		},
		packedRaw: temperatures,
		Notes: []string{
			"A drive with no host writes yet (attributes 246 and 247 are 0; Device Statistics `Logical Sectors Written 0`) but background programming: its WAF is undefined.",
		},
	},
}
