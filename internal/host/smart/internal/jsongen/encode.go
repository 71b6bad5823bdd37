package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// row is one line of smartctl's "Vendor Specific SMART Attributes" table
// (brief format: ID# ATTRIBUTE_NAME FLAGS VALUE WORST THRESH FAIL RAW_VALUE).
type row struct {
	ID                   int
	Name                 string
	Value, Worst, Thresh int
	Raw                  string
}

// parseRow splits a table line; the raw column is the rest of the line.
func parseRow(line string) row {
	f := strings.Fields(line)
	if len(f) < 7 {
		panic("short attribute line: " + line)
	}
	n := func(s string) int {
		v, err := strconv.Atoi(s)
		if err != nil {
			panic(fmt.Sprintf("%q in %q: %v", s, line, err))
		}
		return v
	}
	return row{ID: n(f[0]), Name: f[1], Value: n(f[3]), Worst: n(f[4]), Thresh: n(f[5]), Raw: strings.Join(f[7:], " ")}
}

type jsonRaw struct {
	Value  *uint64 `json:"value,omitempty"`
	String string  `json:"string"`
}

type jsonAttr struct {
	ID     int     `json:"id"`
	Name   string  `json:"name"`
	Value  int     `json:"value"`
	Worst  int     `json:"worst"`
	Thresh int     `json:"thresh"`
	Raw    jsonRaw `json:"raw"`
}

type jsonOut struct {
	FormatVersion [2]int `json:"json_format_version"`
	Device        struct {
		Protocol string `json:"protocol"`
	} `json:"device"`
	ModelFamily     string `json:"model_family,omitempty"`
	ModelName       string `json:"model_name"`
	FirmwareVersion string `json:"firmware_version"`
	UserCapacity    struct {
		Bytes uint64 `json:"bytes"`
	} `json:"user_capacity"`
	LogicalBlockSize int `json:"logical_block_size"`
	ATA              struct {
		Table []jsonAttr `json:"table"`
	} `json:"ata_smart_attributes"`
}

// encodeJSON writes raw.value only where the text shows the whole raw field:
// a plain decimal from an attribute printed in raw48 (or raw24 with no
// "(…)" part). Temperature attributes pack min/max bytes the text does not
// always show, so their raw.value is left out and only raw.string kept.
func encodeJSON(r recording) []byte {
	var o jsonOut
	o.FormatVersion = [2]int{1, 0}
	o.Device.Protocol = "ATA"
	o.ModelFamily, o.ModelName, o.FirmwareVersion = r.ModelFamily, r.ModelName, r.Firmware
	o.UserCapacity.Bytes, o.LogicalBlockSize = r.CapacityBytes, r.LogicalBlockSize
	for _, line := range r.Table {
		rw := parseRow(line)
		a := jsonAttr{ID: rw.ID, Name: rw.Name, Value: rw.Value, Worst: rw.Worst, Thresh: rw.Thresh, Raw: jsonRaw{String: rw.Raw}}
		if v, err := strconv.ParseUint(rw.Raw, 10, 64); err == nil && !r.packedRaw[rw.ID] {
			a.Raw.Value = &v
		}
		o.ATA.Table = append(o.ATA.Table, a)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(o); err != nil {
		panic(err)
	}
	return b.Bytes()
}
