package cephdaemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrKVStatsOff is the reply of dump_objectstore_kv_stats on an OSD that does not collect
// RocksDB's statistics: Ceph 16.2 fills it only with rocksdb_perf = true and
// rocksdb_collect_compaction_stats = true (both can change at runtime), and answers an empty
// object without them; Ceph 20.2 answers plain text, "error: RocksDB perf is disabled, can't
// probe for stats." (a running OSD under Rook, 2026-12-07).
var ErrKVStatsOff = errors.New("dump_objectstore_kv_stats gives no levels: the OSD collects no RocksDB statistics (rocksdb_perf and rocksdb_collect_compaction_stats are false)")

// ErrKVStatsUnsupported is the reply of an OSD that has no dump_objectstore_kv_stats command
// ("unknown command prefix dump_objectstore_kv_stats"): a Ceph 20.2 OSD that has mounted its
// store but not yet booted (no monitor) answered so; once running it has the command.
var ErrKVStatsUnsupported = errors.New("the OSD has no dump_objectstore_kv_stats command (yet): no RocksDB level statistics")

// kvStatsOffText is how Ceph 20.2 says the OSD collects no RocksDB statistics.
const kvStatsOffText = "RocksDB perf is disabled"

// LevelStat is one row of a RocksDB "Compaction Stats [cf]" table.
type LevelStat struct {
	// ColumnFamily is the table's column family ("default"; newer Ceph prints every shard).
	ColumnFamily string
	Level        int
	Files        uint64
	// SizeBytes is the level's size, rounded as RocksDB prints it ("2.39 KB": 1/100 of the unit).
	SizeBytes uint64
	// WriteBytes is Write(GB): what flushes and compactions wrote into the level since the
	// OSD started, to 0.1 GB.
	WriteBytes uint64
}

// ParseKVStats reads dump_objectstore_kv_stats: a JSON object whose members are the lines of
// RocksDB's "rocksdb.stats" property, almost all under the key "" (so it is read token by
// token, in order, never into a map). It returns the per-level rows of every compaction table.
func ParseKVStats(data []byte) ([]LevelStat, error) {
	lines, err := kvLines(data)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, ErrKVStatsOff
	}
	var out []LevelStat
	cf, header := "", []string(nil)
	for _, line := range lines {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "** Compaction Stats [") && strings.HasSuffix(line, "] **"):
			cf, header = strings.TrimSuffix(strings.TrimPrefix(line, "** Compaction Stats ["), "] **"), nil
		case len(f) > 0 && f[0] == "Level" && cf != "":
			header = f
		case len(f) > 0 && f[0] == "Priority":
			header = nil
		case header != nil && len(f) > 0 && len(f[0]) > 1 && f[0][0] == 'L':
			n, err := strconv.Atoi(f[0][1:])
			if err != nil {
				continue
			}
			row, err := parseLevelRow(f, header)
			if err != nil {
				return out, fmt.Errorf("dump_objectstore_kv_stats [%s] %s: %w", cf, f[0], err)
			}
			row.ColumnFamily, row.Level = cf, n
			out = append(out, row)
		}
	}
	return out, nil
}

// kvLines returns the string values of the reply's members in order.
func kvLines(data []byte) ([]string, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if bytes.Contains(data, []byte("unknown command prefix dump_objectstore_kv_stats")) {
		return nil, ErrKVStatsUnsupported
	}
	if trimmed := bytes.TrimSpace(data); !bytes.HasPrefix(trimmed, []byte("{")) && bytes.Contains(trimmed, []byte(kvStatsOffText)) {
		return nil, ErrKVStatsOff
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("dump_objectstore_kv_stats: not a JSON object (%v)", err)
	}
	var lines []string
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("dump_objectstore_kv_stats: %w", err)
		}
		if tok == json.Delim('}') {
			break
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("dump_objectstore_kv_stats: member %q: %w", tok, err)
		}
		if s, ok := v.(string); ok && tok != "rocksdb_compaction_statistics" {
			lines = append(lines, s)
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("dump_objectstore_kv_stats: data after the object")
	}
	return lines, nil
}

// parseLevelRow reads "L0 2/0 2.39 KB 0.5 0.0 0.0 0.0 0.0 ...": the Size column takes two
// fields (number, unit), so header column j >= 3 is field j+1.
func parseLevelRow(f, header []string) (LevelStat, error) {
	var row LevelStat
	col := func(name string) (string, error) {
		for j, h := range header {
			if h != name {
				continue
			}
			k := j
			if j >= 3 {
				k = j + 1
			}
			if k >= len(f) {
				return "", fmt.Errorf("no %s column", name)
			}
			return f[k], nil
		}
		return "", fmt.Errorf("the header has no %s column", name)
	}
	files, err := col("Files")
	if err != nil {
		return row, err
	}
	total, _, _ := strings.Cut(files, "/")
	if row.Files, err = strconv.ParseUint(total, 10, 64); err != nil {
		return row, fmt.Errorf("Files %q: not a count", files)
	}
	if len(header) < 3 || header[2] != "Size" || len(f) < 4 {
		return row, fmt.Errorf("no Size column (number and unit)")
	}
	if row.SizeBytes, err = rocksdbBytes(f[2], f[3]); err != nil {
		return row, fmt.Errorf("Size: %w", err)
	}
	w, err := col("Write(GB)")
	if err != nil {
		return row, err
	}
	if row.WriteBytes, err = rocksdbBytes(w, "GB"); err != nil {
		return row, fmt.Errorf("Write(GB): %w", err)
	}
	return row, nil
}

// rocksdbUnits are RocksDB's human sizes: binary multiples written KB, MB, GB, TB.
var rocksdbUnits = map[string]float64{"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}

func rocksdbBytes(num, unit string) (uint64, error) {
	mult, ok := rocksdbUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unit %q is not one of B, KB, MB, GB, TB, PB", unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsNaN(v) || v*mult >= math.MaxUint64/2 {
		return 0, fmt.Errorf("%q %s is not a non-negative number", num, unit)
	}
	return uint64(math.Round(v * mult)), nil
}
