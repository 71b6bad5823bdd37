package cephdaemon

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// BlueFSStats is `bluefs stats`: each BlueFS device's size and use, and the volume selector's
// usage matrix. The device lines are exact; the matrix is rounded as Ceph prints it
// (byte_u_t: "282 MiB", "9.5 GiB"), so its cells are within 0.05 of their unit.
type BlueFSStats struct {
	// Devices by BlueFS device id (0 WAL, 1 DB, 2 slow).
	Devices map[int]BlueFSDevice
	// Usage is the matrix's current part: row (LOG, WAL, DB, SLOW, TOTAL: which RocksDB
	// directory the files belong to) -> column (WAL, DB, SLOW: the device holding them;
	// REAL: the bytes the files hold; FILES: their number).
	Usage map[string]map[string]uint64
	// Columns are the matrix's column names in order ("*" columns included).
	Columns []string
	// Totals is the single-device volume selector's line, printed in place of the matrix by
	// an OSD with no DB device (Ceph 20.2); nil when absent.
	Totals *BlueFSTotals
}

// BlueFSTotals is "wal_total:N, db_total:N, slow_total:N": the bytes BlueFS may use per device.
type BlueFSTotals struct {
	WAL, DB, Slow uint64
}

// BlueFSDevice is one "N : device size 0x... : using 0x...(...)" line.
type BlueFSDevice struct {
	SizeBytes, UsedBytes uint64
}

// Matrix rows: where RocksDB put the file (BlueFS's volume selector levels).
const (
	RowLog   = "LOG"
	RowWAL   = "WAL"
	RowDB    = "DB"
	RowSlow  = "SLOW"
	RowTotal = "TOTAL"
)

// ceph20Rows are Ceph 20.2's row names (its volume selector's levels) for Ceph 16.2's.
var ceph20Rows = map[string]string{"log": RowLog, "db.wal": RowWAL, "db": RowDB, "db.slow": RowSlow}

// ParseBlueFSStats reads `bluefs stats` (plain text even with format json in Ceph 16.2).
func ParseBlueFSStats(text string) (BlueFSStats, error) {
	st := BlueFSStats{Devices: map[int]BlueFSDevice{}, Usage: map[string]map[string]uint64{}}
	inMatrix, done := false, false
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || done:
			continue
		case len(f) >= 7 && f[1] == ":" && f[2] == "device":
			id, err := strconv.Atoi(f[0])
			if err != nil || id < 0 || id > 16 {
				return st, fmt.Errorf("bluefs stats line %d: device id %q", i+1, f[0])
			}
			dev, err := parseDeviceLine(f)
			if err != nil {
				return st, fmt.Errorf("bluefs stats line %d (device %d): %w", i+1, id, err)
			}
			st.Devices[id] = dev
		case f[0] == "DEV/LEV" || f[0] == "LEV/DEV": // Ceph 16.2, Ceph 20.2
			st.Columns = f[1:]
			inMatrix = true
		case strings.HasPrefix(f[0], "wal_total:") && !inMatrix:
			t, err := parseTotals(line)
			if err != nil {
				return st, fmt.Errorf("bluefs stats line %d: %w", i+1, err)
			}
			st.Totals = &t
		case f[0] == "MAXIMUMS:":
			done = true
		case inMatrix:
			row, err := parseMatrixRow(f, st.Columns)
			if err != nil {
				return st, fmt.Errorf("bluefs stats line %d (row %s): %w", i+1, f[0], err)
			}
			name := f[0]
			if n, ok := ceph20Rows[name]; ok {
				name = n
			}
			st.Usage[name] = row
		}
	}
	if len(st.Devices) == 0 {
		return st, fmt.Errorf("bluefs stats: no device line (\"N : device size 0x... : using 0x...\")")
	}
	if len(st.Columns) == 0 && st.Totals == nil {
		return st, fmt.Errorf("bluefs stats: no usage matrix (DEV/LEV header) nor totals line (wal_total:N, db_total:N, slow_total:N)")
	}
	return st, nil
}

// parseTotals reads "wal_total:0, db_total:29189673392947, slow_total:0".
func parseTotals(line string) (BlueFSTotals, error) {
	var t BlueFSTotals
	fields := map[string]*uint64{"wal_total": &t.WAL, "db_total": &t.DB, "slow_total": &t.Slow}
	seen := map[string]bool{}
	for _, part := range strings.Split(strings.TrimSpace(line), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
		dst, known := fields[k]
		if !ok || !known || seen[k] {
			return t, fmt.Errorf("totals: %q is not one of wal_total:N, db_total:N, slow_total:N", part)
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return t, fmt.Errorf("totals: %s %q: not a byte count", k, v)
		}
		*dst, seen[k] = n, true
	}
	for k := range fields {
		if !seen[k] {
			return t, fmt.Errorf("totals: no %s", k)
		}
	}
	return t, nil
}

// parseDeviceLine reads ["1", ":", "device", "size", "0x1fffe000", ":", "using", "0x12a00000(298", "MiB)"];
// Ceph 20.2 prints the size with its unit too: "0x40000000(1", "GiB)", ":", "using", ...
func parseDeviceLine(f []string) (BlueFSDevice, error) {
	if len(f) > 5 && strings.Contains(f[4], "(") && strings.HasSuffix(f[5], ")") {
		f = append(f[:5:5], f[6:]...) // the size's unit
	}
	if f[3] != "size" || len(f) < 8 || f[5] != ":" || f[6] != "using" {
		return BlueFSDevice{}, fmt.Errorf("not \"device size 0x... : using 0x...\"")
	}
	sizeHex, _, _ := strings.Cut(f[4], "(")
	size, err := strconv.ParseUint(strings.TrimPrefix(sizeHex, "0x"), 16, 64)
	if err != nil {
		return BlueFSDevice{}, fmt.Errorf("device size %q: %w", f[4], err)
	}
	usedHex, _, _ := strings.Cut(f[7], "(")
	used, err := strconv.ParseUint(strings.TrimPrefix(usedHex, "0x"), 16, 64)
	if err != nil {
		return BlueFSDevice{}, fmt.Errorf("using %q: %w", f[7], err)
	}
	return BlueFSDevice{SizeBytes: size, UsedBytes: used}, nil
}

// parseMatrixRow reads "WAL 0 B 282 MiB 0 B ... 198 KiB 1": a size (number and unit) per
// column, FILES a bare count. The MAXIMUMS rows have no FILES column.
func parseMatrixRow(f []string, cols []string) (map[string]uint64, error) {
	row := map[string]uint64{}
	rest := f[1:]
	for _, c := range cols {
		if len(rest) == 0 {
			break
		}
		if c == "FILES" {
			n, err := strconv.ParseUint(rest[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("FILES %q: %w", rest[0], err)
			}
			row[c] = n
			rest = rest[1:]
			continue
		}
		if len(rest) < 2 {
			return nil, fmt.Errorf("column %s: %q has no unit", c, rest[0])
		}
		v, err := parseByteUnit(rest[0], rest[1])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c, err)
		}
		if c != "*" {
			row[c] = v
		}
		rest = rest[2:]
	}
	return row, nil
}

var byteUnits = map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60}

// parseByteUnit reads Ceph's byte_u_t ("9.5", "GiB").
func parseByteUnit(num, unit string) (uint64, error) {
	mult, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unit %q is not one of B, KiB, MiB, GiB, TiB, PiB, EiB", unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v*mult >= math.MaxUint64/2 {
		return 0, fmt.Errorf("size %q %s is not a non-negative number", num, unit)
	}
	return uint64(math.Round(v * mult)), nil
}
