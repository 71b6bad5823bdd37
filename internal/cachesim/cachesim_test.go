package cachesim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/ioclass"
)

func TestPercents(t *testing.T) {
	for in, want := range map[string][]float64{
		"5%":           {5},
		"5":            {5},
		"1%..5%":       {1, 2, 3, 4, 5},
		"1%..20%/5":    {1, 6, 11, 16, 20},
		"20%,1%, 2.5":  {1, 2.5, 20},
		"1%..3%,2%":    {1, 2, 3},
		"0.5%..1%/.25": {0.5, 0.75, 1},
	} {
		got, err := Percents(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Percents(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", ",", "0%", "101%", "-1%", "20%..1%", "1%..200%", "x", "1%..5%/0", "1%..5%/x", "NaN", "1%..100%/0.01"} {
		if got, err := Percents(in); err == nil {
			t.Errorf("Percents(%q) = %v, want an error", in, got)
		}
	}
}

func TestParseDeviceFilter(t *testing.T) {
	for in, want := range map[string]DeviceFilter{"8:16": {true, 8, 16}, "259,3": {true, 259, 3}} {
		if got, err := ParseDeviceFilter(in); err != nil || got != want {
			t.Errorf("ParseDeviceFilter(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "8", "8:", ":1", "a:b", "8:-1", "4294967296:0"} {
		if _, err := ParseDeviceFilter(in); err == nil {
			t.Errorf("ParseDeviceFilter(%q): no error", in)
		}
	}
}

// TestExpandSummary: groups become evenly spaced bios, interleaved in
// proportion, 4 KiB aligned when both ends are; flushes are skipped.
func TestExpandSummary(t *testing.T) {
	s := &blktrace.Summary{Workloads: []blktrace.Workload{
		{Name: "w1", Data: blktrace.DeviceTrace{Groups: []blktrace.Group{
			{Comm: "a", RWBS: "WS", Size: 4096, Count: 3, FirstSector: 0, LastSector: 24},
			{Comm: "k", RWBS: "FWS", Size: 0, Count: 9},
			{Comm: "b", RWBS: "R", Size: 8192, Count: 1, FirstSector: 100, LastSector: 100},
		}}},
		{Name: "w2", Data: blktrace.DeviceTrace{Groups: []blktrace.Group{
			{Comm: "c", RWBS: "W", Size: 512, Count: 2, FirstSector: 1, LastSector: 4},
			{Comm: "d", RWBS: "D", Size: 4096, Count: 2, FirstSector: 0, LastSector: 8},
		}}},
	}}
	got, err := ExpandSummary(s)
	if err != nil {
		t.Fatal(err)
	}
	w := func(comm string, lba, size uint64, write bool) ioclass.IO {
		return ioclass.IO{Comm: comm, LBA: lba, Size: size, Write: write}
	}
	want := []ioclass.IO{
		w("a", 0, 4096, true), // at 1/6
		w("a", 8, 4096, true), // at 3/6 (12 → aligned down to 8), ties with b's 1/2 and comes first
		w("b", 100, 8192, false),
		w("a", 24, 4096, true), // at 5/6
		w("c", 1, 512, false),  /* placeholder */
	}
	want[4] = w("c", 1, 512, true)
	want = append(want, w("c", 4, 512, true))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExpandSummary:\n got %v\nwant %v", got, want)
	}
	for _, bad := range []blktrace.Group{
		{RWBS: "W", Size: 1000, Count: 1},
		{RWBS: "W", Size: 4096, Count: 0},
		{RWBS: "W", Size: 4096, Count: 1, FirstSector: 9, LastSector: 8},
		{RWBS: "W", Size: 4096, Count: maxGroupIOs + 1},
		{RWBS: "W", Size: 4096, Count: 1, FirstSector: math.MaxUint64, LastSector: math.MaxUint64},
	} {
		s := &blktrace.Summary{Workloads: []blktrace.Workload{{Name: "x", Data: blktrace.DeviceTrace{Groups: []blktrace.Group{bad}}}}}
		if _, err := ExpandSummary(s); err == nil || !strings.Contains(err.Error(), "workload x group 0") {
			t.Errorf("group %+v: error %v", bad, err)
		}
	}
}

// TestExpandSummaryBios: a workload that lists its bios (prism-agent trace)
// replays them in order, rewrites included, reads and writes with data only,
// with the submitting thread's id as the pid Open CAS compares (none from a
// trace that predates it, which has only the process's id); one without
// them is still expanded from its groups.
func TestExpandSummaryBios(t *testing.T) {
	s := &blktrace.Summary{Workloads: []blktrace.Workload{
		{Name: "capture", Data: blktrace.DeviceTrace{
			Groups: []blktrace.Group{{Comm: "ignored", RWBS: "W", Size: 4096, Count: 1}},
			Bios: []blktrace.Bio{
				{Sector: 8, Bytes: 4096, RWBS: "WS", Comm: "dd", TGID: 7, PID: 8, Timed: true},
				{Sector: 0, Bytes: 0, RWBS: "FWS", Comm: "dd", TGID: 7, PID: 8, Micros: 5, Timed: true},
				{Sector: 8, Bytes: 4096, RWBS: "WS", Comm: "dd", TGID: 7, PID: 7, Micros: 9, Timed: true},
				{Sector: 0, Bytes: 65536, RWBS: "DS", Comm: "blkdiscard"},
				{Sector: 2, Bytes: 512, RWBS: "RA", Comm: "cat", TGID: 9},
			}}},
		{Name: "groups", Data: blktrace.DeviceTrace{Groups: []blktrace.Group{{Comm: "g", RWBS: "W", Size: 4096, Count: 1, FirstSector: 16, LastSector: 16}}}},
	}}
	got, err := ExpandSummary(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []ioclass.IO{
		{Size: 4096, Write: true, Comm: "dd", LBA: 8, PID: 8},
		{Size: 4096, Write: true, Comm: "dd", LBA: 8, PID: 7},
		{Size: 512, Comm: "cat", LBA: 2},
		{Size: 4096, Write: true, Comm: "g", LBA: 16},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExpandSummary:\n got %v\nwant %v", got, want)
	}
	s.Workloads[0].Data.Bios[0].Sector = math.MaxUint64 / 512
	if _, err := ExpandSummary(s); err == nil || !strings.Contains(err.Error(), "workload capture bio 0") {
		t.Errorf("a bio beyond a 64-bit offset: error %v", err)
	}
}

// TestExpandCommittedTrace: the committed trace expands to its groups' bios
// and bytes, direction by direction.
func TestExpandCommittedTrace(t *testing.T) {
	f, err := os.Open("../ioclass/defaults/testdata/ceph-osd-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, capacity, err := Open(f, DeviceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if capacity != 10<<30 {
		t.Errorf("capacity %d, want the data device's 10 GiB", capacity)
	}
	var n, wbytes, rbytes uint64
	var io ioclass.IO
	for src.Next(&io) {
		n++
		if io.Write {
			wbytes += io.Size
		} else {
			rbytes += io.Size
		}
	}
	s, err := blktrace.LoadSummary("../ioclass/defaults/testdata/ceph-osd-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var wantN, wantW, wantR uint64
	for _, wl := range s.Workloads {
		for _, g := range wl.Data.Groups {
			switch g.Dir() {
			case blktrace.Write:
				if g.Size > 0 {
					wantN += g.Count
					wantW += g.Bytes()
				}
			case blktrace.Read:
				wantN += g.Count
				wantR += g.Bytes()
			}
		}
	}
	if n != wantN || wbytes != wantW || rbytes != wantR {
		t.Errorf("expanded %d bios, %d written, %d read; the summary has %d, %d, %d", n, wbytes, rbytes, wantN, wantW, wantR)
	}
}

const tracefsText = `# tracer: nop
#
tp_osd_tp-12 (   10) [000] ..... 1.0: block_bio_queue: 8,16 WS 2048 + 8 [tp_osd_tp]
bstore_kv_sync-11 (   10) [000] ..... 1.1: block_bio_queue: 8,16 FWS 0 + 0 [bstore_kv_sync]
tp_osd_tp-13 (   10) [000] ..... 1.2: block_bio_queue: 8,32 R 64 + 128 [tp_osd_tp]
osd-1 (   10) [000] ..... 1.3: block_bio_queue: 8,16 D 4096 + 8 [tp_osd_tp]
osd-1 (   10) [000] ..... 1.4: block_rq_issue: 8,16 WS 2048 + 8 [tp_osd_tp]
`

func TestTracefsSource(t *testing.T) {
	read := func(dev DeviceFilter) ([]ioclass.IO, *tracefsSource) {
		src, _, err := Open(strings.NewReader(tracefsText), dev)
		if err != nil {
			t.Fatal(err)
		}
		var out []ioclass.IO
		var io ioclass.IO
		for src.Next(&io) {
			out = append(out, io)
		}
		if src.Err() != nil {
			t.Fatal(src.Err())
		}
		return out, src.(*tracefsSource)
	}
	all, src := read(DeviceFilter{})
	// pid is the thread's id (TASK-PID), not the process's (TGID): Open CAS compares current->pid.
	want := []ioclass.IO{{Size: 4096, Write: true, Comm: "tp_osd_tp", LBA: 2048, PID: 12}, {Size: 65536, Comm: "tp_osd_tp", LBA: 64, PID: 13}}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("all disks: %v, want %v", all, want)
	}
	if got := src.Devices(); !reflect.DeepEqual(got, []string{"8:16", "8:32"}) {
		t.Errorf("devices %v", got)
	}
	one, _ := read(DeviceFilter{true, 8, 16})
	if !reflect.DeepEqual(one, want[:1]) {
		t.Errorf("8:16: %v", one)
	}
	src2, _, _ := Open(strings.NewReader("x-1 [000] ..... 1.0: block_bio_queue: 8,16 W x + 8 [dd]\n"), DeviceFilter{})
	var io ioclass.IO
	if src2.Next(&io) || src2.Err() == nil || !strings.Contains(src2.Err().Error(), "line 1") {
		t.Errorf("bad line: err %v", src2.Err())
	}
}

func TestZipf(t *testing.T) {
	z := &Zipf{VolumeBytes: 1 << 30, BlockBytes: 4096, Theta: 0.99, Count: 200000, Comm: "tp_osd_tp", Seed: 3}
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	counts := map[uint64]int{}
	var io ioclass.IO
	n := 0
	for z.Next(&io) {
		n++
		if io.Size != 4096 || !io.Write || io.Comm != "tp_osd_tp" || io.LBA%8 != 0 || io.LBA*512 >= 1<<30 {
			t.Fatalf("io %v", io)
		}
		counts[io.LBA]++
	}
	if n != 200000 {
		t.Fatalf("%d writes", n)
	}
	// Zipf 0.99 over 2^18 blocks: the most popular block gets 1/ζ(n) ≈ 1/13.0
	// of the draws, the second half as many.
	var top, second int
	for _, c := range counts {
		if c > top {
			top, second = c, top
		} else if c > second {
			second = c
		}
	}
	if f := float64(top) / float64(n); f < 0.07 || f > 0.085 {
		t.Errorf("top block share %.4f, want about 0.077", f)
	}
	if r := float64(top) / float64(second); r < 1.8 || r > 2.2 {
		t.Errorf("top/second %.2f, want about 2", r)
	}
	for _, bad := range []Zipf{{VolumeBytes: 1 << 20, BlockBytes: 4096, Theta: 1}, {VolumeBytes: 1 << 20, BlockBytes: 4096, Theta: 0},
		{VolumeBytes: 4096, BlockBytes: 4096, Theta: 0.5}, {VolumeBytes: 1 << 20, BlockBytes: 1000, Theta: 0.5}} {
		if err := bad.Start(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// bruteOptimum tries every choice of what to keep: the fewest misses of a
// write-back cache of capacity lines over seq.
func bruteOptimum(seq []uint32, capacity int) uint64 {
	var best uint64 = math.MaxUint64
	var rec func(i int, cache []uint32, misses uint64)
	rec = func(i int, cache []uint32, misses uint64) {
		if misses >= best {
			return
		}
		if i == len(seq) {
			best = misses
			return
		}
		for _, c := range cache {
			if c == seq[i] {
				rec(i+1, cache, misses)
				return
			}
		}
		rec(i+1, cache, misses+1) // bypass
		if len(cache) < capacity {
			rec(i+1, append(append([]uint32(nil), cache...), seq[i]), misses+1)
			return
		}
		for j := range cache {
			next := append([]uint32(nil), cache...)
			next[j] = seq[i]
			rec(i+1, next, misses+1)
		}
	}
	rec(0, nil, 0)
	return best
}

func TestOptimumIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 300; trial++ {
		var o optTrace
		for range 4 + rng.IntN(9) {
			o.add(uint64(rng.IntN(5)))
		}
		next := o.nextUse()
		for capacity := 0; capacity <= 3; capacity++ {
			if got, want := Optimum(o.seq, next, uint64(capacity)), bruteOptimum(o.seq, capacity); got != want {
				t.Fatalf("seq %v capacity %d: Optimum %d, exhaustive search %d", o.seq, capacity, got, want)
			}
		}
	}
}

// TestRequestKeepsItsOwnLines: the emulator's case (cmd/casadm-emulator,
// TestRequestKeepsItsOwnLines), in write-through so that every line is clean
// and may be evicted. A full cache of two lines holding 0 and 1: a 12 KiB
// write to lines 1-3 must take its two lines from class 0 itself (two more
// would put it over its cap); line 0 can go, line 1 is the request's own, so
// the request cannot be mapped whole and goes pass-through, invalidating
// line 1. Line 0's slot, mapped for line 2, is unmapped again.
func TestRequestKeepsItsOwnLines(t *testing.T) {
	c, err := New(Config{Lines: 2, LineBytes: 4096, Mode: WriteThrough, SeqCutoffPolicy: SeqNever})
	if err != nil {
		t.Fatal(err)
	}
	c.Submit(Request{Write: true, Offset: 0, Size: 4096})
	c.Submit(Request{Write: true, Offset: 4096, Size: 4096})
	c.Submit(Request{Write: true, Offset: 4096, Size: 12288})
	if s := c.Stats(0); s.WrPT != 1 || s.PTWr != 12288 || s.WrTotal != 2 {
		t.Errorf("%d pass-through (%d bytes), %d serviced; want 1, 12288, 2", s.WrPT, s.PTWr, s.WrTotal)
	}
	if got := cached(c, 0, 4); len(got) != 0 {
		t.Errorf("lines %v cached; line 0 was evicted for line 2, which was unmapped again, and the pass-through invalidates 1", got)
	}
	// A line of the request further on is not evicted either. Class 1
	// (priority 200) holds 3 and then 0, 3 least recently used; the write of
	// class 0 to 1-3 maps 1 into the free line, then takes line 2 from class
	// 1, whose least recently used line, 3, is the request's: it evicts 0.
	c, err = New(Config{Lines: 3, LineBytes: 4096, Mode: WriteThrough, SeqCutoffPolicy: SeqNever,
		Classes: []Class{{ID: 0, Priority: 22, MaxSize: 100}, {ID: 1, Priority: 200, MaxSize: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	c.Submit(Request{Write: true, Offset: 3 * 4096, Size: 4096, Class: 1})
	c.Submit(Request{Write: true, Offset: 0, Size: 4096, Class: 1})
	c.Submit(Request{Write: true, Offset: 4096, Size: 12288})
	if s := c.Stats(0); s.WrPT != 0 || s.WrTotal != 1 || s.WrPartialMiss != 1 {
		t.Errorf("write to 1-3: %d pass-through, %d serviced, %d partial misses; want 0, 1, 1", s.WrPT, s.WrTotal, s.WrPartialMiss)
	}
	if got := cached(c, 0, 4); fmt.Sprint(got) != "[1:0 2:0 3:0]" {
		t.Errorf("cached %v, want lines 1-3 in class 0", got)
	}
}

// cached lists the lines of [from, to) the cache holds, as line:class.
func cached(c *Cache, from, to uint64) []string {
	var out []string
	for a := from; a < to; a++ {
		if i := c.idx.get(a); i != none {
			out = append(out, fmt.Sprintf("%d:%d", a, c.lines[i].class))
		}
	}
	return out
}

// TestCacheSemantics: hand-checked cases of the model.
func TestCacheSemantics(t *testing.T) {
	c, err := New(Config{Lines: 2, LineBytes: 4096, Mode: WriteBack, SeqCutoffPolicy: SeqNever,
		Classes: []Class{{ID: 0, Priority: 22, MaxSize: 100}, {ID: 1, Priority: -1, MaxSize: 50}, {ID: 2, Priority: 5, MaxSize: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	w := func(off uint64, class int) { c.Submit(Request{Write: true, Offset: off, Size: 4096, Class: class}) }
	w(0, 1) // pinned class, cap 1 line: miss, dirty
	w(0, 1) // hit
	// At its cap, the class may only take its own line, which is dirty: the
	// write goes pass-through and the line is cleaned for the next request.
	w(4096, 1)
	if s := c.Stats(1); s.WrTotal != 2 || s.WrFullMiss != 1 || s.WrPT != 1 || s.CleanerCoreWr != 4096 || s.CoreWr != 4096 {
		t.Errorf("class 1, the third write: %+v", s)
	}
	w(4096, 1) // now it recycles line 0, clean
	if got := cached(c, 0, 4); fmt.Sprint(got) != "[1:1]" {
		t.Errorf("cached %v, want line 1 in class 1", got)
	}
	w(8192, 0)  // a free line
	w(12288, 0) // full: the pinned class is within its cap and class 0's line is dirty: pass-through, both cleaned
	if s := c.Stats(0); s.WrPT != 1 || s.WrTotal != 1 || s.CleanerCoreWr != 4096 {
		t.Errorf("class 0: %+v", s)
	}
	if s := c.Stats(1); s.CleanerCoreWr != 2*4096 {
		t.Errorf("class 1's dirty line was not cleaned when class 0 could not map: %+v", s)
	}
	w(12288, 0) // class 0 evicts its own clean line 2
	if got := cached(c, 0, 4); fmt.Sprint(got) != "[1:1 3:0]" {
		t.Errorf("cached %v, want line 1 in class 1, 3 in class 0", got)
	}
	w(16384, 2) // allocation 0: pass-through
	if s := c.Stats(2); s.WrPT != 1 || s.CoreWr != 4096 {
		t.Errorf("class 2: %+v", s)
	}
	if c.DirtyLines() != 1 {
		t.Errorf("%d dirty lines, want 1", c.DirtyLines())
	}
	c.Flush()
	if c.DirtyLines() != 0 {
		t.Errorf("dirty after flush")
	}
	if _, err := New(Config{Lines: 1, LineBytes: 3000, Mode: WriteBack, SeqCutoffPolicy: SeqFull}); err == nil {
		t.Error("line size 3000 accepted")
	}
}

// TestRunFullCacheMatchesOptimum: a fast tier as large as the volume never
// evicts, so with the final flush it writes each distinct line once, which
// is the optimum.
func TestRunFullCacheMatchesOptimum(t *testing.T) {
	cfg, err := ioclass.Compile(&ioclass.DefaultCephOSD().Spec)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ioclass.NewEvaluator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	z := &Zipf{VolumeBytes: 64 << 20, BlockBytes: 4096, Theta: 0.99, Count: 50000, Comm: "tp_osd_tp", Seed: 1}
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	res, sum, err := Run(z, ev, cfg, Options{CapacityBytes: 64 << 20, Percents: []float64{1, 100}, Optimum: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	full := res[1]
	if full.Flush != 0 || full.DirtyEnd != sum.DistinctLines*4096 || full.OptQLCWrite != full.DirtyEnd || full.AlphaFlushed != full.AlphaOpt {
		t.Errorf("100 %%: %+v, %d distinct lines", full, sum.DistinctLines)
	}
	small := res[0]
	if !(small.AlphaFlushed < small.AlphaOpt) || small.ClientWrite != 50000*4096 {
		t.Errorf("1 %%: α %.3f not below the optimum %.3f, or client writes %d", small.AlphaFlushed, small.AlphaOpt, small.ClientWrite)
	}
}

// FuzzExpandSummary: any JSON either fails with an error or expands to
// exactly its groups' data bios, or its listed bios with data where a
// workload lists them.
func FuzzExpandSummary(f *testing.F) {
	data, err := os.ReadFile("../ioclass/defaults/testdata/ceph-osd-trace.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"workloads":[{"name":"w","data":{"groups":[{"comm":"a","rwbs":"W","size":4096,"count":3,"firstSector":1,"lastSector":9}]}}]}`))
	f.Add([]byte(`{"workloads":[{"data":{"groups":[{"rwbs":"R","size":512,"count":1,"firstSector":18446744073709551615,"lastSector":18446744073709551615}]}}]}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(`{"workloads":[{"name":"capture","data":{"groups":[],"bios":[[8,4096,"WS","dd",7],[0,0,"FWS","dd",7],[2,512,"RA","cat",0]]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSummary(bytes.NewReader(data))
		if err != nil {
			return
		}
		var want uint64
		for _, w := range s.Workloads {
			if len(w.Data.Bios) > 0 { // listed bios are replayed, not the groups
				for _, b := range w.Data.Bios {
					if d := b.Dir(); b.Bytes > 0 && (d == blktrace.Read || d == blktrace.Write) {
						want++
					}
				}
				continue
			}
			for _, g := range w.Data.Groups {
				if d := g.Dir(); g.Size > 0 && (d == blktrace.Read || d == blktrace.Write) {
					if g.Count > 1<<16 {
						return // memory, not logic
					}
					want += g.Count
				}
			}
		}
		ios, err := ExpandSummary(s)
		if err != nil {
			return
		}
		if uint64(len(ios)) != want {
			t.Fatalf("%d bios, the groups and listed bios hold %d", len(ios), want)
		}
		for _, io := range ios {
			if io.Size == 0 || io.Size%512 != 0 {
				t.Fatalf("bio %v", io)
			}
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzPercents: what parses is sorted, unique, within (0, 100].
func FuzzPercents(f *testing.F) {
	for _, s := range []string{"1%..20%", "5%", "1,2,3", "1%..20%/5", "0.5%..1%/.25", "..", "/", "1%..%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := Percents(s)
		if err != nil {
			return
		}
		for i, p := range ps {
			if !(p > 0 && p <= 100) || (i > 0 && ps[i-1] >= p) {
				t.Fatalf("Percents(%q) = %v", s, ps)
			}
		}
	})
}

// FuzzCache: random requests never break the model's invariants: occupancy
// within the lines, dirty within occupancy, every byte written counted.
func FuzzCache(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, uint8(4), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, lines uint8, lineShift uint8) {
		lb := uint64(4096) << (lineShift % 5)
		c, err := New(Config{Lines: uint64(lines%64) + 1, LineBytes: lb, Mode: WriteBack, SeqCutoffPolicy: SeqFull, SeqCutoffBytes: 16384,
			Classes: []Class{{ID: 0, Priority: 22, MaxSize: 100}, {ID: 1, Priority: -1, MaxSize: 30}, {ID: 2, Priority: 1, MaxSize: 60}, {ID: 3, Priority: 200, MaxSize: 0}}})
		if err != nil {
			t.Fatal(err)
		}
		var written uint64
		for i := 0; i+3 <= len(data); i += 3 {
			r := Request{Write: data[i]&1 != 0, Class: int(data[i]>>1) % 5, Offset: uint64(data[i+1]) * 2048, Size: 512 * (1 + uint64(data[i+2]%64))}
			c.Submit(r)
			if r.Write {
				written += r.Size
			}
			var occ, dirty, exp uint64
			for id := 0; id <= 3; id++ {
				n, d := c.Lines(id)
				occ, dirty = occ+n, dirty+d
				exp += c.Stats(id).ExpWr
			}
			if occ > c.cfg.Lines || dirty > occ || dirty != c.DirtyLines() || exp != written {
				t.Fatalf("after %d requests: %d lines of %d, %d dirty (%d), %d of %d bytes counted", i/3+1, occ, c.cfg.Lines, dirty, c.DirtyLines(), exp, written)
			}
		}
	})
}
