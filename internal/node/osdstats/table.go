package osdstats

import (
	"fmt"

	"github.com/prism-storage/prism/internal/host/cephdaemon"
)

// Data classes of the table, in the seeds' order: what RocksDB writes on the fast tier, what
// spilled, and the objects themselves.
const (
	ClassWAL     = "wal"        // RocksDB's write-ahead log (BlueFS db.wal files)
	ClassBlueFS  = "bluefs-log" // BlueFS's own journal
	ClassSST     = "sst"        // RocksDB's SST files on the DB device (every level)
	ClassSpilled = "spilled"    // BlueFS files on the slow device
	ClassObjects = "objects"    // object data BlueStore wrote to the data device
)

// LevelClass names RocksDB level n's row ("L0", "L1", ...): a breakdown of the SST rows.
func LevelClass(n int) string { return fmt.Sprintf("L%d", n) }

// Row is one data class of one OSD.
type Row struct {
	Class string
	// Breakdown rows (RocksDB levels) split ClassSST and ClassSpilled; they are not added to
	// the OSD's total writes.
	Breakdown bool
	// Occupied is the space the class holds (nil: unknown).
	Occupied *uint64
	// Written is what the class wrote since the OSD started (its counters' life; nil: unknown).
	Written *uint64
	// PerDay is bytes written per day between the last two readings (nil: unknown).
	PerDay *float64
	// Share is the class's part of the OSD's writes between the last two readings (nil: unknown).
	Share *float64
	// Beta is β = Written ÷ Occupied: how many times over the class rewrote its space since
	// the OSD started (nil: unknown or nothing occupied).
	Beta *float64
}

// written is every class's cumulative written bytes in one reading (absent: unknown).
func written(r Reading) map[string]uint64 {
	w := map[string]uint64{}
	if r.BlueFS != nil {
		if v, ok := r.BlueFS.Get("bytes_written_wal"); ok {
			w[ClassWAL] = v
		}
		if v, ok := r.BlueFS.Get("logged_bytes"); ok {
			w[ClassBlueFS] = v
		}
		sst, okSST := r.BlueFS.Get("bytes_written_sst")
		slow, okSlow := r.BlueFS.Get("bytes_written_slow")
		if okSlow {
			w[ClassSpilled] = slow
		}
		// bytes_written_sst counts SSTs on every device; the slow device's part is
		// bytes_written_slow (which on a spill-free OSD is 0).
		if okSST && okSlow {
			w[ClassSST] = sst - min(sst, slow)
		}
	}
	if r.Store != nil {
		big, ok1 := r.Store.GetStore("write_big_bytes")
		small, ok2 := r.Store.GetStore("write_small_bytes")
		if ok1 && ok2 {
			w[ClassObjects] = big + small
		}
	}
	for _, l := range sumLevels(r.Levels) {
		w[LevelClass(l.Level)] = l.WriteBytes
	}
	return w
}

// occupied is every class's space in one reading (absent: unknown). The matrix rows give WAL,
// log and SST space on the fast devices (the WAL and DB columns: allocated, not file bytes).
func occupied(r Reading) map[string]uint64 {
	o := map[string]uint64{}
	if st := r.Stats; st != nil {
		fast := func(row string) (uint64, bool) {
			cells, ok := st.Usage[row]
			if !ok {
				return 0, false
			}
			return cells["WAL"] + cells["DB"], true
		}
		if v, ok := fast(cephdaemon.RowWAL); ok {
			o[ClassWAL] = v
		}
		if v, ok := fast(cephdaemon.RowLog); ok {
			o[ClassBlueFS] = v
		}
		db, ok1 := fast(cephdaemon.RowDB)
		slowRow, ok2 := fast(cephdaemon.RowSlow)
		if ok1 && ok2 {
			o[ClassSST] = db + slowRow
		}
	}
	if r.BlueFS != nil {
		if v, ok := r.BlueFS.Get("slow_used_bytes"); ok {
			o[ClassSpilled] = v
		}
	}
	if r.Store != nil {
		if v, ok := r.Store.GetStore("allocated"); ok {
			o[ClassObjects] = v
		}
	}
	for _, l := range sumLevels(r.Levels) {
		o[LevelClass(l.Level)] = l.SizeBytes
	}
	return o
}

// sumLevels adds the levels of every column family's table, by level, in level order.
func sumLevels(ls []cephdaemon.LevelStat) []cephdaemon.LevelStat {
	by := map[int]*cephdaemon.LevelStat{}
	maxLevel := -1
	for _, l := range ls {
		s, ok := by[l.Level]
		if !ok {
			s = &cephdaemon.LevelStat{Level: l.Level}
			by[l.Level] = s
		}
		s.Files += l.Files
		s.SizeBytes += l.SizeBytes
		s.WriteBytes += l.WriteBytes
		maxLevel = max(maxLevel, l.Level)
	}
	var out []cephdaemon.LevelStat
	for n := 0; n <= maxLevel; n++ {
		if s, ok := by[n]; ok {
			out = append(out, *s)
		}
	}
	return out
}

// Table is the OSD's rows from its latest reading cur and the one before, prev (nil on the
// first reading: no rates). A counter that went down (the OSD restarted) gives no rate.
func Table(prev *Reading, cur Reading) []Row {
	w, o := written(cur), occupied(cur)
	var pw map[string]uint64
	secs := 0.0
	if prev != nil {
		pw = written(*prev)
		secs = cur.Time.Sub(prev.Time).Seconds()
	}
	classes := []string{ClassWAL, ClassBlueFS, ClassSST, ClassSpilled, ClassObjects}
	for _, l := range sumLevels(cur.Levels) {
		classes = append(classes, LevelClass(l.Level))
	}
	deltas := map[string]float64{}
	total, totalKnown := 0.0, secs > 0
	for _, c := range classes {
		now, ok := w[c]
		before, okPrev := pw[c]
		if !ok || !okPrev || secs <= 0 || now < before {
			if !isBreakdown(c) {
				totalKnown = false
			}
			continue
		}
		deltas[c] = float64(now - before)
		if !isBreakdown(c) {
			total += deltas[c]
		}
	}
	var rows []Row
	for _, c := range classes {
		row := Row{Class: c, Breakdown: isBreakdown(c)}
		if v, ok := o[c]; ok {
			row.Occupied = ptr(v)
		}
		if v, ok := w[c]; ok {
			row.Written = ptr(v)
			if occ, ok := o[c]; ok && occ > 0 {
				row.Beta = ptr(float64(v) / float64(occ))
			}
		}
		if d, ok := deltas[c]; ok {
			row.PerDay = ptr(d / secs * 86400)
			if totalKnown && total > 0 {
				row.Share = ptr(d / total)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func isBreakdown(class string) bool {
	return len(class) > 1 && class[0] == 'L' && class[1] >= '0' && class[1] <= '9'
}

func ptr[T any](v T) *T { return &v }
