package dbsizing

import (
	"fmt"
	"math"
	"strconv"
)

// RocksDB's own defaults (rocksdb/options.h, advanced_options.h), used for what the OSD's
// bluestore_rocksdb_options leave out.
const (
	DefaultWriteBufferBytes = 64 << 20
	DefaultMaxWriteBuffers  = 2
	DefaultL0Trigger        = 4
	DefaultLevelBaseBytes   = 256 << 20
	DefaultMultiplier       = 10
	DefaultNumLevels        = 7
)

// DBPathShare is the part of the DB device BlueStore tells RocksDB it may fill (95 %).
const DBPathShare = 0.95

// Levels is what decides the size of each RocksDB level, as the OSD is configured.
type Levels struct {
	WriteBufferBytes uint64 // write_buffer_size
	MaxWriteBuffers  uint64 // max_write_buffer_number
	MaxTotalWALBytes uint64 // max_total_wal_size (0: RocksDB derives it from the buffers)
	L0Trigger        uint64 // level0_file_num_compaction_trigger
	BaseBytes        uint64 // max_bytes_for_level_base: L1's target
	Multiplier       float64
	NumLevels        int
	// Dynamic is level_compaction_dynamic_level_bytes: targets then follow the last
	// level's size, and the static targets below are upper bounds.
	Dynamic bool
}

// LevelsFromOptions reads the level settings from RocksDB options (bluestore_rocksdb_options
// and its annex, merged by the caller), with RocksDB's defaults for what is absent. A value
// that is not a number is an error naming the option.
func LevelsFromOptions(opts map[string]string) (Levels, error) {
	l := Levels{WriteBufferBytes: DefaultWriteBufferBytes, MaxWriteBuffers: DefaultMaxWriteBuffers, L0Trigger: DefaultL0Trigger,
		BaseBytes: DefaultLevelBaseBytes, Multiplier: DefaultMultiplier, NumLevels: DefaultNumLevels}
	for _, u := range []struct {
		key string
		dst *uint64
		min uint64
	}{
		{"write_buffer_size", &l.WriteBufferBytes, 1},
		{"max_write_buffer_number", &l.MaxWriteBuffers, 1},
		{"max_total_wal_size", &l.MaxTotalWALBytes, 0},
		{"level0_file_num_compaction_trigger", &l.L0Trigger, 1},
		{"max_bytes_for_level_base", &l.BaseBytes, 1},
	} {
		v, ok := opts[u.key]
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < u.min || n > 1<<50 {
			return l, fmt.Errorf("RocksDB option %s = %q: want an integer from %d to 2^50", u.key, v, u.min)
		}
		*u.dst = n
	}
	if v, ok := opts["max_bytes_for_level_multiplier"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 1 && f <= 1000) {
			return l, fmt.Errorf("RocksDB option max_bytes_for_level_multiplier = %q: want a number from 1 to 1000", v)
		}
		l.Multiplier = f
	}
	if v, ok := opts["num_levels"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 || n > 20 {
			return l, fmt.Errorf("RocksDB option num_levels = %q: want an integer from 2 to 20", v)
		}
		l.NumLevels = n
	}
	if v, ok := opts["level_compaction_dynamic_level_bytes"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return l, fmt.Errorf("RocksDB option level_compaction_dynamic_level_bytes = %q: want true or false", v)
		}
		l.Dynamic = b
	}
	return l, nil
}

// WALBytes is what the WAL can grow to. BlueStore's database has several column families
// (bluestore_rocksdb_cfs), and RocksDB deletes a WAL file only once every column family has
// flushed what it holds, so the WAL grows until max_total_wal_size forces the flushes (RocksDB:
// when that is 0, four times the write buffers, counted here for one column family). On the
// OSD of test/ceph with 16 MiB write buffers the WAL held 108 MiB after 30 s of writes, far
// more than its four memtables.
func (l Levels) WALBytes() uint64 {
	if l.MaxTotalWALBytes > 0 {
		return l.MaxTotalWALBytes
	}
	return 4 * l.WriteBufferBytes * l.MaxWriteBuffers
}

// L0Bytes is L0 when a compaction into L1 triggers: the trigger's number of flushed memtables.
func (l Levels) L0Bytes() uint64 { return l.L0Trigger * l.WriteBufferBytes }

// Target is level n's target size (n >= 1): base × multiplier^(n-1); L0 has none (0).
func (l Levels) Target(n int) uint64 {
	if n < 1 || n >= l.NumLevels {
		return 0
	}
	v := float64(l.BaseBytes) * math.Pow(l.Multiplier, float64(n-1))
	if v >= 1<<62 {
		return 1 << 62
	}
	return uint64(v)
}

// NeedBytes is what levels L0..Lk need on the fast tier with the WAL: WAL + L0 + Σ targets
// of L1..Lk (k = 0: WAL and L0 only).
func (l Levels) NeedBytes(k int) uint64 {
	n := l.WALBytes() + l.L0Bytes()
	for i := 1; i <= k; i++ {
		n = satAdd(n, l.Target(i))
	}
	return n
}

// SlotBytes is the DB slot that keeps L0..Lk on the fast tier: NeedBytes(k) ÷ DBPathShare,
// rounded up to a MiB.
func (l Levels) SlotBytes(k int) uint64 {
	const mib = 1 << 20
	s := uint64(math.Ceil(float64(l.NeedBytes(k)) / DBPathShare))
	return (s + mib - 1) / mib * mib
}

// DeepestLevel is the deepest level k whose SlotBytes(k) fits in slot bytes; -1 when not
// even the WAL and L0 do.
func (l Levels) DeepestLevel(slot uint64) int {
	k := -1
	for i := 0; i < l.NumLevels; i++ {
		if l.SlotBytes(i) > slot {
			break
		}
		k = i
	}
	return k
}

func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}
