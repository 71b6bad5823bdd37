package dbsizing

import (
	"strings"
	"testing"
)

// ceph16Options is Ceph 16.2.15's default bluestore_rocksdb_options, as `config get` answered
// on the OSD of test/ceph (internal/host/cephdaemon/testdata).
var ceph16Options = map[string]string{
	"compression": "kNoCompression", "max_write_buffer_number": "4", "min_write_buffer_number_to_merge": "1",
	"recycle_log_file_num": "4", "write_buffer_size": "268435456", "writable_file_max_buffer_size": "0",
	"compaction_readahead_size": "2097152", "max_background_compactions": "2", "max_total_wal_size": "1073741824",
}

const mib, gib = 1 << 20, 1 << 30

func TestLevelsFromOptions(t *testing.T) {
	l, err := LevelsFromOptions(ceph16Options)
	if err != nil {
		t.Fatal(err)
	}
	want := Levels{WriteBufferBytes: 256 * mib, MaxWriteBuffers: 4, MaxTotalWALBytes: gib, L0Trigger: 4, BaseBytes: 256 * mib, Multiplier: 10, NumLevels: 7}
	if l != want {
		t.Fatalf("Ceph 16.2 defaults: %+v, want %+v", l, want)
	}
	for _, c := range []struct {
		key, value, field string
	}{
		{"write_buffer_size", "0", "write_buffer_size"},
		{"write_buffer_size", "lots", "write_buffer_size"},
		{"max_bytes_for_level_multiplier", "0.5", "max_bytes_for_level_multiplier"},
		{"max_bytes_for_level_multiplier", "NaN", "max_bytes_for_level_multiplier"},
		{"num_levels", "1", "num_levels"},
		{"level_compaction_dynamic_level_bytes", "maybe", "level_compaction_dynamic_level_bytes"},
		{"level0_file_num_compaction_trigger", "-1", "level0_file_num_compaction_trigger"},
	} {
		_, err := LevelsFromOptions(map[string]string{c.key: c.value})
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s=%s: error %v, want one naming %s", c.key, c.value, err, c.field)
		}
	}
}

// The community's rule of thumb (3, 30, 300 GB) is what these levels give for Ceph's defaults:
// L3 needs a 31.3 GiB slot, L4 a 294.5 GiB one.
func TestSlotBytesCeph16Defaults(t *testing.T) {
	l, _ := LevelsFromOptions(ceph16Options)
	for _, c := range []struct {
		k    int
		need uint64
		slot uint64
	}{
		{0, 2 * gib, 2156 * mib},                                 // WAL 1 GiB (max_total_wal_size) + L0 4 × 256 MiB
		{1, 2*gib + 256*mib, 2426 * mib},                         // + L1 256 MiB
		{2, 2*gib + 256*mib + 2560*mib, 5120 * mib},              // + L2 2.5 GiB
		{3, 2*gib + 256*mib + 2560*mib + 25600*mib, 32068 * mib}, // + L3 25 GiB
	} {
		if got := l.NeedBytes(c.k); got != c.need {
			t.Errorf("NeedBytes(%d) = %d MiB, want %d MiB", c.k, got/mib, c.need/mib)
		}
		if got := l.SlotBytes(c.k); got != c.slot {
			t.Errorf("SlotBytes(%d) = %d MiB, want %d MiB", c.k, got/mib, c.slot/mib)
		}
	}
	for _, c := range []struct {
		slot uint64
		want int
	}{{0, -1}, {2 * gib, -1}, {2156 * mib, 0}, {3 * gib, 1}, {30 * gib, 2}, {32068 * mib, 3}, {290 * gib, 3}, {300 * gib, 4}} {
		if got := l.DeepestLevel(c.slot); got != c.want {
			t.Errorf("DeepestLevel(%d MiB) = %d, want %d", c.slot/mib, got, c.want)
		}
	}
}

func TestAdvise(t *testing.T) {
	l, _ := LevelsFromOptions(ceph16Options)
	// A 375 GB Optane shared by 12 QLC OSDs, each with a 30 GiB slot today.
	a := Advise(l, 375e9, 12, 30*gib)
	if a.Current != 2 || a.Best != 2 {
		t.Fatalf("Advise: current L%d best L%d, want L2 and L2 (12 × 31.3 GiB slots do not fit 375 GB)", a.Current, a.Best)
	}
	if o := a.Options[3]; o.SlotsFit != 11 || o.AllFit {
		t.Errorf("L3 option %+v: want 11 slots of %d MiB, not all 12", o, o.SlotBytes/mib)
	}
	// Eleven OSDs: L3 fits them all.
	if a := Advise(l, 375e9, 11, 30*gib); a.Best != 3 {
		t.Errorf("11 OSDs: best L%d, want L3", a.Best)
	}
	if a := Advise(l, gib, 1, gib); a.Best != -1 || a.Current != -1 {
		t.Errorf("1 GiB: %+v, want nothing fits", a)
	}
}

func TestTargetsAndDynamic(t *testing.T) {
	l, _ := LevelsFromOptions(map[string]string{"max_bytes_for_level_base": "67108864", "max_bytes_for_level_multiplier": "8", "num_levels": "4", "level_compaction_dynamic_level_bytes": "true"})
	if !l.Dynamic || l.Target(1) != 64*mib || l.Target(2) != 512*mib || l.Target(3) != 4096*mib || l.Target(4) != 0 || l.Target(0) != 0 {
		t.Fatalf("targets %d %d %d %d, dynamic %v", l.Target(1), l.Target(2), l.Target(3), l.Target(4), l.Dynamic)
	}
	// Without max_total_wal_size, RocksDB's bound: four times the write buffers.
	if w := l.WALBytes(); w != 4*2*64*mib {
		t.Errorf("WALBytes = %d MiB, want 512", w/mib)
	}
}
