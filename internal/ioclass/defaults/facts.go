package defaults

import (
	"github.com/prism-storage/prism/internal/blktrace"

	"fmt"
	"strings"
)

// Workload names of the Ceph OSD trace, in the order test/ceph runs them.
const (
	RBD4KRandWrite = "rbd-4k-randwrite"
	Rados4KWrite   = "rados-4k-write"
	Rados4MWrite   = "rados-4m-write"
	Rados4MRead    = "rados-4m-read"
	RBD4KRandRead  = "rbd-4k-randread"
	Compaction     = "compaction"
)

// CephOSDWorkloads are the workloads a Ceph OSD trace must hold.
var CephOSDWorkloads = []string{RBD4KRandWrite, Rados4KWrite, Rados4MWrite, Rados4MRead, RBD4KRandRead, Compaction}

// qlcWriteUnit is the QLC internal write unit Prism plans for, and
// bluestore_min_alloc_size on the traced OSD.
const qlcWriteUnit = 64 << 10

// Thresholds of the facts below. In the committed trace every one of these
// shares is 100 % or within a few bios of it (docs/ioclass-default-policy.md
// has the figures); the margin absorbs run-to-run noise such as a stray
// 4 KiB metadata bio in a 4 MiB workload, not a change of pattern.
const (
	minShare = 0.99
	// minOSDShare: other processes (udev, LVM scans of a shared machine) may
	// read the devices; the OSD itself must submit its writes.
	minOSDShare = 0.99
	// maxRewriteShare: the tracepoint sees a page each time it is written, BlueFS counts
	// a byte once, and a file's partial last page is written again when the file grows.
	// Traced equalled counted in the committed trace; with test/ceph's 312 MiB slot, where
	// more of the compaction spills, the trace saw 84 pages (2.4 %) more in each of 6 runs.
	maxRewriteShare = 0.05
)

// CheckCephOSDFacts checks, on one trace summary, the facts the default Ceph
// OSD policy rests on. They are about shares of bytes, never byte counts,
// so a fresh trace of the same Ceph satisfies them too.
func CheckCephOSDFacts(s *blktrace.Summary) []error {
	var errs []error
	fail := func(w, format string, a ...any) { errs = append(errs, fmt.Errorf(w+": "+format, a...)) }
	for _, name := range CephOSDWorkloads {
		if _, ok := s.Workload(name); !ok {
			fail(name, "missing from the trace")
		}
	}
	if len(errs) > 0 {
		return errs
	}
	isSmall := func(g blktrace.Group) bool { return g.Size > 0 && g.Size < qlcWriteUnit }
	isUnit := func(g blktrace.Group) bool { return g.Size >= qlcWriteUnit }
	opThreads := func(g blktrace.Group) bool { return g.Comm == "tp_osd_tp" || g.Comm == "bstore_kv_final" }
	rocksDB := func(g blktrace.Group) bool { return strings.HasPrefix(g.Comm, "rocksdb:") }
	walWriter := func(g blktrace.Group) bool { return g.Comm == "bstore_kv_sync" }

	for _, name := range []string{RBD4KRandWrite, Rados4KWrite, Rados4MWrite, Compaction} {
		w, _ := s.Workload(name)
		if sh := osdShare(w.Data, blktrace.Write); sh < minOSDShare {
			fail(name, "the OSD submitted %.1f %% of the data device's write bytes, want at least %.0f %%: process_name would see other tasks", 100*sh, 100*minOSDShare)
		}
	}
	for _, name := range []string{RBD4KRandWrite, Rados4KWrite} {
		w, _ := s.Workload(name)
		if sh := share(w.Data, blktrace.Write, isSmall); sh < minShare {
			fail(name, "%.1f %% of the data device's write bytes are in bios under 64 KiB, want at least %.0f %%", 100*sh, 100*minShare)
		}
		if sh := share(w.Data, blktrace.Write, opThreads); sh < minShare {
			fail(name, "tp_osd_tp and bstore_kv_final submitted %.1f %% of the data device's write bytes, want at least %.0f %%", 100*sh, 100*minShare)
		}
		if sh := share(w.DB, blktrace.Write, walWriter); sh < minShare {
			fail(name, "bstore_kv_sync (the RocksDB WAL) wrote %.1f %% of the DB partition's bytes, want at least %.0f %%", 100*sh, 100*minShare)
		}
	}
	for _, c := range []struct {
		name string
		dir  blktrace.Direction
	}{{Rados4MWrite, blktrace.Write}, {Rados4MRead, blktrace.Read}} {
		w, _ := s.Workload(c.name)
		if sh := share(w.Data, c.dir, isUnit); sh < minShare {
			fail(c.name, "%.1f %% of the data device's %s bytes are in bios of 64 KiB or more, want at least %.0f %%", 100*sh, c.dir, 100*minShare)
		}
		if sh := alignedShare(w.Data, c.dir, isUnit); sh < minShare {
			fail(c.name, "%.1f %% of the 64 KiB-or-larger %s bytes start on a 64 KiB boundary, want at least %.0f %%", 100*sh, c.dir, 100*minShare)
		}
	}
	// RocksDB's threads and the WAL writer send no data to the data device
	// unless BlueFS spills, which the client workloads do not provoke.
	for _, name := range []string{RBD4KRandWrite, Rados4KWrite, Rados4MWrite, Rados4MRead, RBD4KRandRead} {
		w, _ := s.Workload(name)
		if w.BlueFS.SlowUsedAfter != 0 {
			fail(name, "BlueFS spilled (slow_used_bytes %d) before the compaction", w.BlueFS.SlowUsedAfter)
		}
		if n := sumBytes(w.Data, blktrace.Write, func(g blktrace.Group) bool { return rocksDB(g) || walWriter(g) }); n != 0 {
			fail(name, "RocksDB's threads or bstore_kv_sync wrote %d bytes to the data device without a spill", n)
		}
	}
	w, _ := s.Workload(Compaction)
	if w.BlueFS.SlowUsedBefore != 0 || w.BlueFS.SlowUsedAfter == 0 {
		fail(Compaction, "BlueFS slow_used_bytes %d -> %d: want 0 -> more, the compaction spilling", w.BlueFS.SlowUsedBefore, w.BlueFS.SlowUsedAfter)
	}
	if sh := share(w.Data, blktrace.Write, rocksDB); sh < minShare {
		fail(Compaction, "RocksDB's threads wrote %.1f %% of the data device's write bytes, want at least %.0f %%", 100*sh, 100*minShare)
	}
	// The tracepoint sees what BlueFS says it wrote to the slow device, and little more.
	traced, counted := float64(sumBytes(w.Data, blktrace.Write, rocksDB)), float64(w.BlueFS.WrittenSlowAfter-w.BlueFS.WrittenSlowBefore)
	if counted <= 0 || traced < minShare*counted || traced > (1+maxRewriteShare)*counted {
		fail(Compaction, "traced %.0f bytes from RocksDB's threads on the data device, BlueFS counted %.0f (bytes_written_slow)", traced, counted)
	}
	return errs
}

// sumBytes sums the OSD's bytes of one direction in the groups that match.
func sumBytes(d blktrace.DeviceTrace, dir blktrace.Direction, match func(blktrace.Group) bool) uint64 {
	var n uint64
	for _, g := range d.Groups {
		if g.Dir() == dir && match(g) {
			n += g.Bytes()
		}
	}
	return n
}

// share is sumBytes(match) over all the OSD's bytes of that direction; 0 when
// there are none.
func share(d blktrace.DeviceTrace, dir blktrace.Direction, match func(blktrace.Group) bool) float64 {
	all := sumBytes(d, dir, func(blktrace.Group) bool { return true })
	if all == 0 {
		return 0
	}
	return float64(sumBytes(d, dir, match)) / float64(all)
}

// alignedShare is the share of the matching bytes whose bio starts on a
// 64 KiB boundary.
func alignedShare(d blktrace.DeviceTrace, dir blktrace.Direction, match func(blktrace.Group) bool) float64 {
	var all, aligned uint64
	for _, g := range d.Groups {
		if g.Dir() == dir && match(g) {
			all += g.Bytes()
			aligned += (g.Count - g.Unaligned) * g.Size
		}
	}
	if all == 0 {
		return 0
	}
	return float64(aligned) / float64(all)
}

// osdShare is the OSD's share of a direction's bytes on the device.
func osdShare(d blktrace.DeviceTrace, dir blktrace.Direction) float64 {
	osd := sumBytes(d, dir, func(blktrace.Group) bool { return true })
	var others uint64
	for _, r := range d.Others {
		if r.Dir == dir {
			others += r.Bytes
		}
	}
	if osd+others == 0 {
		return 0
	}
	return float64(osd) / float64(osd+others)
}
