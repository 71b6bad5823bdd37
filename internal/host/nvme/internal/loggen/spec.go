package main

import "fmt"

// Field layouts are written here independently of the parser (same spec
// offsets) so the fixture tests check the parser against a second encoding.

type spec struct {
	off, width int
}

// smartSpec is the SMART / Health Information log (02h), NVMe Base Specification.
var smartSpec = map[string]spec{
	"Critical Warning":                         {0, 1},
	"Composite Temperature":                    {1, 2},
	"Available Spare":                          {3, 1},
	"Available Spare Threshold":                {4, 1},
	"Percentage Used":                          {5, 1},
	"Endurance Group Critical Warning Summary": {6, 1},
	"Data Units Read":                          {32, 16},
	"Data Units Written":                       {48, 16},
	"Host Read Commands":                       {64, 16},
	"Host Write Commands":                      {80, 16},
	"Controller Busy Time":                     {96, 16},
	"Power Cycles":                             {112, 16},
	"Power On Hours":                           {128, 16},
	"Unsafe Shutdowns":                         {144, 16},
	"Media and Data Integrity Errors":          {160, 16},
	"Number of Error Information Log Entries":  {176, 16},
	"Warning Composite Temperature Time":       {192, 4},
	"Critical Composite Temperature Time":      {196, 4},
	"Temperature Sensor 1":                     {200, 2},
	"Temperature Sensor 2":                     {202, 2},
	"Thermal Mgmt T1 Transition Count":         {216, 4},
	"Thermal Mgmt T2 Transition Count":         {220, 4},
	"Thermal Mgmt T1 Total Time":               {224, 4},
	"Thermal Mgmt T2 Total Time":               {228, 4},
}

// ocpSpec is the OCP SMART / Health Information Extended log (C0h), the
// fields the parser decodes.
var ocpSpec = map[string]spec{
	"Physical Media Units Written":      {0, 16},
	"Physical Media Units Read":         {16, 16},
	"Bad User NAND Blocks Raw":          {32, 6},
	"Bad User NAND Blocks Normalized":   {38, 2},
	"Bad System NAND Blocks Raw":        {40, 6},
	"Bad System NAND Blocks Normalized": {46, 2},
	"XOR Recovery Count":                {48, 8},
	"Uncorrectable Read Error Count":    {56, 8},
	"Soft ECC Error Count":              {64, 8},
	"End to End Detected Errors":        {72, 4},
	"End to End Corrected Errors":       {76, 4},
	"System Data % Used":                {80, 1},
	"Refresh Counts":                    {81, 7},
	"User Data Erase Count Max":         {88, 4},
	"User Data Erase Count Min":         {92, 4},
	"Thermal Throttling Event Count":    {96, 1},
	"Thermal Throttling Status":         {97, 1},
	"Log Page Version":                  {494, 2},
}

// ocpGUID is AFD514C97C6F4F9CA4F2BFEA2810AFC5h, least significant byte
// first, as bytes 496-511 hold it.
const ocpGUID = "afd514c97c6f4f9ca4f2bfea2810afc5"

func specFor(id uint8) map[string]spec {
	switch id {
	case 0x02:
		return smartSpec
	case 0xc0:
		return ocpSpec
	}
	return nil
}

func fileName(id uint8) string { return fmt.Sprintf("log-%02x.bin", id) }
