package cephdaemon

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	return recordedFrom(t, "ceph-16.2.15", name)
}

func recordedFrom(t *testing.T, release, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", release, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParsePerfDumpRecorded(t *testing.T) {
	for _, c := range []struct {
		file, logger string
		want         map[string]uint64
	}{
		{"perf-dump-bluefs-fresh", "bluefs", map[string]uint64{"db_total_bytes": 671080448, "db_used_bytes": 35651584, "slow_used_bytes": 0,
			"bytes_written_wal": 319488, "bytes_written_sst": 8192, "bytes_written_slow": 0, "logged_bytes": 118784}},
		{"perf-dump-bluefs-spilled", "bluefs", map[string]uint64{"db_total_bytes": 671080448, "db_used_bytes": 659554304, "slow_used_bytes": 66256896,
			"bytes_written_wal": 333541376, "bytes_written_sst": 197021696, "bytes_written_slow": 11132928, "logged_bytes": 71520256, "alloc_slow_fallback": 1}},
		{"perf-dump-bluestore-spilled", "bluestore", map[string]uint64{"bluestore_allocated": 1030914048, "bluestore_write_big_bytes": 1030815744, "bluestore_write_small_bytes": 30198}},
	} {
		got, err := ParsePerfDump(recorded(t, c.file), c.logger)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		for k, v := range c.want {
			if g, ok := got.Get(k); !ok || g != v {
				t.Errorf("%s: %s = %d (%v), want %d", c.file, k, g, ok, v)
			}
		}
		if _, ok := got["compact_lat"]; ok {
			t.Errorf("%s: the compact_lat average is not a counter", c.file)
		}
	}
}

// Ceph 20.2: bluefs has gauges in seconds beside its counters, BlueStore's counters have lost
// their bluestore_ prefix.
func TestParsePerfDumpRecordedCeph20(t *testing.T) {
	fs, err := ParsePerfDump(recordedFrom(t, "ceph-20.2.4", "perf-dump-bluefs-fresh"), "bluefs")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := fs.Get("db_total_bytes"); !ok || v != 1<<30 {
		t.Errorf("db_total_bytes %d %v, want 1 GiB (the DB file)", v, ok)
	}
	if _, ok := fs.Get("alloc_db_max_lat"); ok {
		t.Errorf("alloc_db_max_lat (seconds) taken as a counter")
	}
	st, err := ParsePerfDump(recordedFrom(t, "ceph-20.2.4", "perf-dump-bluestore-fresh"), "bluestore")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := st.GetStore("allocated"); !ok || v != 4096 {
		t.Errorf("allocated %d %v", v, ok)
	}
	old, err := ParsePerfDump(recorded(t, "perf-dump-bluestore-fresh"), "bluestore")
	if _, ok := old.GetStore("allocated"); err != nil || !ok {
		t.Errorf("Ceph 16.2's bluestore_allocated: %v %v", ok, err)
	}
}

func TestParsePerfDumpErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"bluestore":{}}`, `no "bluefs" section`},
		{`{"bluefs":{"db_used_bytes":-1}}`, "db_used_bytes = -1"},
		{`{"bluefs":{"db_used_bytes":-1.5}}`, "db_used_bytes = -1.5"},
		{`{"bluefs":{"db_used_bytes":"1"}}`, `db_used_bytes = "1"`},
		{`{"bluefs":[]}`, `section "bluefs"`},
		{`not json`, "perf dump bluefs"},
	} {
		if _, err := ParsePerfDump([]byte(c.in), "bluefs"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
}

// A fraction is a gauge (seconds), not a counter: left out, as averages are.
func TestParsePerfDumpLeavesGaugesOut(t *testing.T) {
	c, err := ParsePerfDump([]byte(`{"bluefs":{"db_used_bytes":7,"alloc_db_max_lat":0.000006961,"x":1e-3}}`), "bluefs")
	if err != nil || !reflect.DeepEqual(c, Counters{"db_used_bytes": 7}) {
		t.Errorf("%v, %v", c, err)
	}
}

func TestParseBlueFSStatsRecorded(t *testing.T) {
	const mib = 1 << 20
	st, err := ParseBlueFSStats(string(recorded(t, "bluefs-stats-spilled")))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]BlueFSDevice{1: {0x27ffe000, 0x27500000}, 2: {0x280000000, 0x4165a000}}; !reflect.DeepEqual(st.Devices, want) {
		t.Errorf("devices %+v, want %+v", st.Devices, want)
	}
	if want := []string{"WAL", "DB", "SLOW", "*", "*", "REAL", "FILES"}; !reflect.DeepEqual(st.Columns, want) {
		t.Errorf("columns %v", st.Columns)
	}
	want := map[string]map[string]uint64{
		RowLog:   {"WAL": 0, "DB": 14 * mib, "SLOW": 0, "REAL": 12 * mib, "FILES": 1},
		RowWAL:   {"WAL": 0, "DB": 450 * mib, "SLOW": 0, "REAL": 250 * mib, "FILES": 17},
		RowDB:    {"WAL": 0, "DB": 165 * mib, "SLOW": 0, "REAL": 147 * mib, "FILES": 20},
		RowSlow:  {"WAL": 0, "DB": 0, "SLOW": 0, "REAL": 0, "FILES": 0},
		RowTotal: {"WAL": 0, "DB": 629 * mib, "SLOW": 0, "REAL": 0, "FILES": 38},
	}
	if !reflect.DeepEqual(st.Usage, want) {
		t.Errorf("usage %v\nwant  %v", st.Usage, want)
	}
	fresh, err := ParseBlueFSStats(string(recorded(t, "bluefs-stats-fresh")))
	if err != nil || fresh.Usage[RowLog]["REAL"] != 276<<10 || fresh.Devices[2].UsedBytes != 0x1a000 {
		t.Errorf("fresh: %+v, %v", fresh, err)
	}
}

// Ceph 20.2's matrix is headed LEV/DEV, names its rows after the volume selector's levels (log,
// db.wal, db, db.slow) and prints each device's size with its unit.
func TestParseBlueFSStatsRecordedCeph20(t *testing.T) {
	const mib = 1 << 20
	st, err := ParseBlueFSStats(string(recordedFrom(t, "ceph-20.2.4", "bluefs-stats-fresh")))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]BlueFSDevice{1: {0x40000000, 0x2400000}, 2: {0x280000000, 0x6000}}; !reflect.DeepEqual(st.Devices, want) {
		t.Errorf("devices %+v, want %+v", st.Devices, want)
	}
	if want := []string{"WAL", "DB", "SLOW", "*", "*", "REAL", "FILES"}; !reflect.DeepEqual(st.Columns, want) {
		t.Errorf("columns %v", st.Columns)
	}
	want := map[string]map[string]uint64{
		RowLog:   {"WAL": 0, "DB": 4 * mib, "SLOW": 0, "REAL": 328 << 10, "FILES": 1},
		RowWAL:   {"WAL": 0, "DB": 18 * mib, "SLOW": 0, "REAL": 10 << 10, "FILES": 1},
		RowDB:    {"WAL": 0, "DB": 13 * mib, "SLOW": 0, "REAL": 114 << 10, "FILES": 11},
		RowSlow:  {"WAL": 0, "DB": 0, "SLOW": 0, "REAL": 0, "FILES": 0},
		RowTotal: {"WAL": 0, "DB": 35 * mib, "SLOW": 0, "REAL": 0, "FILES": 13},
	}
	if !reflect.DeepEqual(st.Usage, want) {
		t.Errorf("usage %v\nwant  %v", st.Usage, want)
	}
}

// An OSD without a DB device (Rook's entry with no metadataDevice) has no volume selector
// matrix in Ceph 20.2: its one BlueFS device and the selector's totals line (recorded from the
// e2e's QLC-alone OSD, 2026-12-07).
func TestParseBlueFSStatsRecordedCeph20Collocated(t *testing.T) {
	st, err := ParseBlueFSStats(string(recordedFrom(t, "ceph-20.2.4", "bluefs-stats-collocated")))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]BlueFSDevice{1: {0x1bf1f2a56000, 0x1a92000}}; !reflect.DeepEqual(st.Devices, want) {
		t.Errorf("devices %+v, want %+v", st.Devices, want)
	}
	if want := (&BlueFSTotals{WAL: 0, DB: 29189673392947, Slow: 0}); !reflect.DeepEqual(st.Totals, want) {
		t.Errorf("totals %+v, want %+v", st.Totals, want)
	}
	if len(st.Usage) != 0 || st.Columns != nil {
		t.Errorf("a matrix from no matrix: %v %v", st.Columns, st.Usage)
	}
}

func TestParseBlueFSStatsErrors(t *testing.T) {
	matrix := "DEV/LEV     WAL         DB          SLOW        *           *           REAL        FILES\n"
	for _, c := range []struct{ in, want string }{
		{"", "no device line"},
		{"1 : device size 0x10 : using 0x1(1 B)\n", "no usage matrix"},
		{"1 : device size 0x10 : using 0x1(1 B)\nwal_total:0, db_total:x, slow_total:0\n", "db_total"},
		{"1 : device size 0x10 : using 0x1(1 B)\nwal_total:0, db_total:1\n", "slow_total"},
		{"1 : device size zz : using 0x1(1 B)\n" + matrix, "device size"},
		{"x : device size 0x10 : using 0x1(1 B)\n" + matrix, `device id "x"`},
		{"1 : device size 0x10 : using 0x1(1 B)\n" + matrix + "WAL 1 XiB\n", `column WAL: unit "XiB"`},
		{"1 : device size 0x10 : using 0x1(1 B)\n" + matrix + "WAL -1 B\n", "column WAL"},
		{"1 : device size 0x10 : using 0x1(1 B)\n" + matrix + "WAL 0 B 0 B 0 B 0 B 0 B 0 B many\n", "FILES"},
	} {
		if _, err := ParseBlueFSStats(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestParseKVStatsRecorded(t *testing.T) {
	if _, err := ParseKVStats(recorded(t, "kv-stats-off")); !errors.Is(err, ErrKVStatsOff) {
		t.Errorf("kv-stats-off: %v, want ErrKVStatsOff", err)
	}
	rows, err := ParseKVStats(recorded(t, "kv-stats-on"))
	if err != nil {
		t.Fatal(err)
	}
	want := []LevelStat{
		{ColumnFamily: "default", Level: 0, Files: 0, SizeBytes: 0, WriteBytes: 0},
		{ColumnFamily: "default", Level: 1, Files: 1, SizeBytes: 66365, WriteBytes: 0}, // "64.81 KB"
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
}

// A running Ceph 20.2 OSD without rocksdb_perf answers plain text (the e2e's OSD under Rook):
// statistics off, not a failed read.
func TestParseKVStatsOffCeph20(t *testing.T) {
	if _, err := ParseKVStats(recordedFrom(t, "ceph-20.2.4", "kv-stats-off")); !errors.Is(err, ErrKVStatsOff) {
		t.Errorf("kv-stats-off: %v, want ErrKVStatsOff", err)
	}
}

// A Ceph 20.2 OSD that has not booted has no dump_objectstore_kv_stats yet.
func TestParseKVStatsUnknownCommand(t *testing.T) {
	if _, err := ParseKVStats(recordedFrom(t, "ceph-20.2.4", "kv-stats-unknown-command")); !errors.Is(err, ErrKVStatsUnsupported) {
		t.Errorf("kv-stats-unknown-command: %v, want ErrKVStatsUnsupported", err)
	}
}

func TestParseKVStatsErrors(t *testing.T) {
	head := `{"":"** Compaction Stats [m-0] **","":"Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB)",`
	for _, c := range []struct{ in, want string }{
		{`[]`, "not a JSON object"},
		{`{"":"x"`, "dump_objectstore_kv_stats"},
		{`{"":"x"} {}`, "data after the object"},
		{head + `"":"  L2      x/0    1.00 KB   0.0      0.0     0.0      0.0       1.5      0.0"}`, `[m-0] L2: Files "x/0"`},
		{head + `"":"  L2      1/0    1.00 QB   0.0      0.0     0.0      0.0       1.5      0.0"}`, `Size: unit "QB"`},
		{head + `"":"  L2      1/0    1.00 KB   0.0      0.0     0.0      0.0"}`, "no Write(GB) column"},
	} {
		if _, err := ParseKVStats([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
	// A sharded table (newer Ceph prints one per column family) with Write(GB) to 0.1 GB.
	rows, err := ParseKVStats([]byte(head + `"":"  L2      3/0   12.50 MB   0.9      0.0     0.0      0.0       1.5      0.0"}`))
	if err != nil || len(rows) != 1 || rows[0] != (LevelStat{ColumnFamily: "m-0", Level: 2, Files: 3, SizeBytes: 12.5 * (1 << 20), WriteBytes: 1.5 * (1 << 30)}) {
		t.Errorf("sharded row: %+v, %v", rows, err)
	}
}

func TestParseConfigRecorded(t *testing.T) {
	v, err := ParseConfigGet(recorded(t, "config-get-bluestore_rocksdb_options"), "bluestore_rocksdb_options")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := ParseRocksDBOptions(v)
	if err != nil {
		t.Fatal(err)
	}
	if opts["write_buffer_size"] != "16777216" || opts["max_bytes_for_level_base"] != "67108864" || opts["max_total_wal_size"] != "1073741824" || len(opts) != 10 {
		t.Errorf("options %v", opts)
	}
	annex, err := ParseConfigGet(recorded(t, "config-get-bluestore_rocksdb_options_annex"), "bluestore_rocksdb_options_annex")
	if err != nil || annex != "" {
		t.Errorf("annex %q, %v", annex, err)
	}
	if _, err := ParseConfigGet([]byte(`{"other":"1"}`), "write_buffer_size"); err == nil || !strings.Contains(err.Error(), "write_buffer_size") {
		t.Errorf("missing option: %v", err)
	}
}

func TestParseRocksDBOptions(t *testing.T) {
	got, err := ParseRocksDBOptions("a=1, b={x=1;y=2};c=3,a=4")
	if err != nil || !reflect.DeepEqual(got, map[string]string{"a": "4", "b": "{x=1;y=2}", "c": "3"}) {
		t.Errorf("%v %v", got, err)
	}
	for _, in := range []string{"a", "=1", "a={b=1", "a=1}"} {
		if _, err := ParseRocksDBOptions(in); err == nil || !strings.Contains(err.Error(), "RocksDB options") {
			t.Errorf("%q: error %v", in, err)
		}
	}
}
