package cachesim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/ioclass"
)

// TestEvictionSpreadBySize: a burst measured on real OCF (pyocf, ocf
// d54f2fc9; docs/cache.md, "Against real OCF"): a cache of 16 384 lines;
// class A (priority 10) writes 12 000 new lines, class B (priority 200)
// 4 384, then A 2 000 more. In write-through (every line clean) OCF ends
// with A 12 540 and B 3 844: B gave 540 of the 2 000, not all of them as
// it would if the lowest priority were emptied first. In write-back (NOP
// cleaning) only cleaned lines can go: OCF passed 46 of A's writes through
// and ended with A 12 512 lines (12 482 dirty), B 3 872 (2 912 dirty).
func TestEvictionSpreadBySize(t *testing.T) {
	for _, run := range []struct {
		mode Mode
		want string
	}{
		{WriteThrough, "A 12540 lines (0 dirty), 14000 serviced, 0 passed through; B 3844 lines (0 dirty)"},
		{WriteBack, "A 12512 lines (12482 dirty), 13954 serviced, 46 passed through; B 3872 lines (2912 dirty)"},
	} {
		c, err := New(Config{Lines: 16384, LineBytes: 4096, Mode: run.mode, SeqCutoffPolicy: SeqNever,
			Classes: []Class{{ID: 1, Priority: 10, MaxSize: 100}, {ID: 2, Priority: 200, MaxSize: 100}}})
		if err != nil {
			t.Fatal(err)
		}
		next := uint64(0)
		write := func(class, n int) {
			for range n {
				c.Submit(Request{Write: true, Offset: next * 4096, Size: 4096, Class: class})
				next++
			}
		}
		write(1, 12000)
		write(2, 4384)
		write(1, 2000)
		a, aDirty := c.Lines(1)
		b, bDirty := c.Lines(2)
		s := c.Stats(1)
		got := fmt.Sprintf("A %d lines (%d dirty), %d serviced, %d passed through; B %d lines (%d dirty)", a, aDirty, s.WrTotal, s.WrPT, b, bDirty)
		if got != run.want {
			t.Errorf("%s: %s; real OCF: %s", run.mode, got, run.want)
		}
	}
}

// TestZipfAgainstOCF: the 300 000 zipf writes run through real OCF (pyocf,
// ocf d54f2fc9; docs/cache.md): a write-back cache of 16 384 lines, NOP
// cleaning, cut-off never, the writes in one class (Prism's default policy
// puts them all in class 11). OCF passed 2 478 writes through, wrote 79 296
// lines back (32 per pass-through) and wrote 334 946 304 bytes to the core;
// it counted 201 892 write hits. The model gives the same pass-throughs,
// write-backs and core bytes; its write hits are within 0.01 % of OCF's
// (OCF's 32 LRU lists per class, which the model does not have, move a few).
func TestZipfAgainstOCF(t *testing.T) {
	c, err := New(Config{Lines: 16384, LineBytes: 4096, Mode: WriteBack, SeqCutoffPolicy: SeqNever,
		Classes: []Class{{ID: 0, Priority: 22, MaxSize: 100}, {ID: 1, Priority: -1, MaxSize: 50}, {ID: 2, Priority: 255, MaxSize: 0},
			{ID: 3, Priority: 255, MaxSize: 0}, {ID: 10, Priority: 1, MaxSize: 100}, {ID: 11, Priority: 5, MaxSize: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	z := &Zipf{VolumeBytes: 1280 << 20, BlockBytes: 4096, Theta: 0.99, Count: 300000, Comm: "tp_osd_tp", Seed: 1}
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	var io ioclass.IO
	for z.Next(&io) {
		c.Submit(Request{Write: io.Write, Offset: io.LBA * 512, Size: io.Size, Class: 11})
	}
	s := c.Stats(11)
	if s.WrPT != 2478 || s.CleanerReqs != 79296 || s.CoreWr+s.CleanerCoreWr != 334946304 {
		t.Errorf("%d pass-through, %d written back, %d bytes to the core; real OCF: 2478, 79296, 334946304",
			s.WrPT, s.CleanerReqs, s.CoreWr+s.CleanerCoreWr)
	}
	hits := s.WrTotal - s.WrFullMiss - s.WrPartialMiss
	if d := int64(hits) - 201892; d < -30 || d > 30 {
		t.Errorf("%d write hits, real OCF 201892", hits)
	}
}

// TestZipfReadsAgainstOCF: the hot half on its own. The same 300 000 zipf
// offsets read through a write-through cache of 16 384 lines (every line
// clean, nothing passes through) on real OCF (pyocf, ocf d54f2fc9,
// 2026-11-26): 201 821 read hits. An exact LRU list gives 202 993; the
// model's hot half within 0.01 % of OCF's (201 837 when measured).
func TestZipfReadsAgainstOCF(t *testing.T) {
	c, err := New(Config{Lines: 16384, LineBytes: 4096, Mode: WriteThrough, SeqCutoffPolicy: SeqNever})
	if err != nil {
		t.Fatal(err)
	}
	z := &Zipf{VolumeBytes: 1280 << 20, BlockBytes: 4096, Theta: 0.99, Count: 300000, Comm: "tp_osd_tp", Seed: 1}
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	var io ioclass.IO
	for z.Next(&io) {
		c.Submit(Request{Offset: io.LBA * 512, Size: io.Size})
	}
	s := c.Stats(0)
	hits := s.RdTotal - s.RdFullMiss - s.RdPartialMiss
	if d := int64(hits) - 201821; s.RdPT != 0 || d < -30 || d > 30 {
		t.Errorf("%d read hits, %d passed through; real OCF 201821, 0", hits, s.RdPT)
	}
}

// TestOnlyCleanLinesAreEvicted: a full write-back cache of dirty lines
// cannot map a new line: the write goes pass-through and every dirty line
// (up to 32 per class) is cleaned, in core line order; the next write
// evicts the least recently used clean line, line 0.
func TestOnlyCleanLinesAreEvicted(t *testing.T) {
	c, err := New(Config{Lines: 4, LineBytes: 4096, Mode: WriteBack, SeqCutoffPolicy: SeqNever})
	if err != nil {
		t.Fatal(err)
	}
	w := func(a uint64) { c.Submit(Request{Write: true, Offset: a * 4096, Size: 4096}) }
	for a := range uint64(4) {
		w(a)
	}
	w(4)
	if s := c.Stats(0); s.WrPT != 1 || s.CleanerReqs != 4 || c.DirtyLines() != 0 {
		t.Errorf("write to a full dirty cache: %d pass-through, %d written back, %d dirty left; want 1, 4, 0", s.WrPT, s.CleanerReqs, c.DirtyLines())
	}
	w(4)
	if got := fmt.Sprint(cached(c, 0, 5)); got != "[1:0 2:0 3:0 4:0]" || c.DirtyLines() != 1 {
		t.Errorf("after the second write: cached %s, %d dirty; want line 0 evicted, line 4 dirty", got, c.DirtyLines())
	}
	if s := c.Stats(0); s.WrPT != 1 || s.WrTotal != 5 {
		t.Errorf("%d pass-through, %d serviced; want 1, 5", s.WrPT, s.WrTotal)
	}
}

// TestHotHalfStays: lines 0-3 written in order fill a write-through cache
// (head to tail 3 2 1 0; 3 and 2 hot). Reading 3 and 2 moves neither; 1
// and 0 are cold, so reading them moves them to the head (0 1 3 2). The
// next write evicts line 2, where an exact LRU list (0 1 2 3) would evict 3.
func TestHotHalfStays(t *testing.T) {
	c, err := New(Config{Lines: 4, LineBytes: 4096, Mode: WriteThrough, SeqCutoffPolicy: SeqNever})
	if err != nil {
		t.Fatal(err)
	}
	for a := range uint64(4) {
		c.Submit(Request{Write: true, Offset: a * 4096, Size: 4096})
	}
	for _, a := range []uint64{3, 2, 1, 0} {
		c.Submit(Request{Offset: a * 4096, Size: 4096})
	}
	c.Submit(Request{Write: true, Offset: 4 * 4096, Size: 4096})
	if got := fmt.Sprint(cached(c, 0, 5)); got != "[0:0 1:0 3:0 4:0]" {
		t.Errorf("cached %s; want line 2 evicted", got)
	}
}

// TestLRUListsKeepHotHalf: after any sequence of requests every list's hot
// lines are exactly its first n/2 from the head, and the list links agree
// with the class counters.
func TestLRUListsKeepHotHalf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, mode := range []Mode{WriteBack, WriteThrough} {
		c, err := New(Config{Lines: 64, LineBytes: 8192, Mode: mode, SeqCutoffPolicy: SeqNever,
			Classes: []Class{{ID: 0, Priority: 22, MaxSize: 100}, {ID: 1, Priority: -1, MaxSize: 30}, {ID: 2, Priority: 100, MaxSize: 60}}})
		if err != nil {
			t.Fatal(err)
		}
		for n := range 20000 {
			c.Submit(Request{Write: rng.IntN(3) != 0, Offset: rng.Uint64N(256) * 4096, Size: 4096 * (1 + rng.Uint64N(4)), Class: rng.IntN(3)})
			for id := range 3 {
				total := uint64(0)
				for d, s := range c.classes[id].lists {
					k, hot := uint32(0), uint32(0)
					for i := s.head; i != none; i = c.lines[i].next {
						l := c.lines[i]
						if l.hot != (k < s.n/2) || int(l.class) != id || l.dirty != (d == 1) {
							t.Fatalf("%s, request %d, class %d list %d: line %d at %d of %d hot=%v", mode, n, id, d, l.addr, k, s.n, l.hot)
						}
						if l.hot {
							hot++
						}
						k++
					}
					if k != s.n || hot != s.hot {
						t.Fatalf("%s, request %d, class %d list %d: %d linked, n %d; %d hot, counted %d", mode, n, id, d, k, s.n, hot, s.hot)
					}
					total += uint64(k)
				}
				if lines, dirty := c.Lines(id); total != lines || uint64(c.classes[id].lists[1].n) != dirty {
					t.Fatalf("%s, request %d, class %d: %d lines, %d dirty; lists hold %d and %d", mode, n, id, lines, dirty, total, c.classes[id].lists[1].n)
				}
			}
		}
	}
}

// TestPinnedClassNeverRefills: OCF refills the eviction quotas with the
// requester's priority as an unsigned 16-bit number, so a pinned class
// (-1, read as 65535) never refills them (ocf_evict_counters_update).
// Measured on real OCF (pyocf, ocf d54f2fc9, 2026-11-26): a write-through
// cache of 16 384 lines; pinned class P writes 1 000 lines, class B
// (priority 10) the other 15 384; P's next 100 writes all pass through
// though B's lines are clean. One write of B refills the quotas (B holds
// 15 384 lines, the smallest class: 256) and spends one on itself; of P's
// next 300 writes 255 evict B's lines and 45 pass through. OCF ended with
// P 1 255 lines and 145 pass-throughs, B 15 129.
func TestPinnedClassNeverRefills(t *testing.T) {
	c, err := New(Config{Lines: 16384, LineBytes: 4096, Mode: WriteThrough, SeqCutoffPolicy: SeqNever,
		Classes: []Class{{ID: 1, Priority: -1, MaxSize: 100}, {ID: 2, Priority: 10, MaxSize: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	next := uint64(0)
	write := func(class, n int) {
		for range n {
			c.Submit(Request{Write: true, Offset: next * 4096, Size: 4096, Class: class})
			next++
		}
	}
	write(1, 1000)
	write(2, 15384)
	write(1, 100)
	if s := c.Stats(1); s.WrPT != 100 {
		t.Errorf("pinned writes before any refill: %d passed through; real OCF 100", s.WrPT)
	}
	write(2, 1)
	write(1, 300)
	p, _ := c.Lines(1)
	b, _ := c.Lines(2)
	if s := c.Stats(1); p != 1255 || s.WrPT != 145 || b != 15129 {
		t.Errorf("P %d lines, %d passed through; B %d lines; real OCF 1255, 145, 15129", p, s.WrPT, b)
	}
}

// TestCephTraceAgainstOCF: the committed Ceph trace, expanded, through a
// write-back cache of 13 108 lines (cut-off never), as it ran through real
// OCF (pyocf, ocf d54f2fc9; docs/cache.md records its figures to 0.1 MiB).
// All in class 0, OCF wrote 663.2 MiB to the core, 175.3 MiB of it passed
// through and 487.9 MiB written back, and ended with 51.1 MiB dirty. With
// Prism's default policy it wrote 714.4 MiB and ended with nothing dirty
// (the pinned class's pass-throughs clean every class).
func TestCephTraceAgainstOCF(t *testing.T) {
	data, err := os.ReadFile("../ioclass/defaults/testdata/ceph-osd-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var sum blktrace.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	ios, err := ExpandSummary(&sum)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ioclass.Compile(&ioclass.DefaultCephOSD().Spec)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ioclass.NewEvaluator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var policy []Class
	for _, cl := range cfg.Classes {
		prio := -1
		if cl.Priority != nil {
			prio = *cl.Priority
		}
		policy = append(policy, Class{ID: cl.ID, Priority: prio, MaxSize: cl.MaxSizePercent()})
	}
	mib := func(b uint64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
	for _, run := range []struct {
		name    string
		classes []Class
		want    string
	}{
		{"class 0 only", nil, "core 663.2 (pass-through 175.3, written back 487.9), dirty 51.1"},
		{"default policy", policy, "core 714.4, dirty 0.0"},
	} {
		c, err := New(Config{Lines: 13108, LineBytes: 4096, Mode: WriteBack, SeqCutoffPolicy: SeqNever, Classes: run.classes})
		if err != nil {
			t.Fatal(err)
		}
		for _, io := range ios {
			class := 0
			if run.classes != nil {
				class = ev.Classify(io)
			}
			c.Submit(Request{Write: io.Write, Offset: io.LBA * 512, Size: io.Size, Class: class})
		}
		var pt, wb uint64
		for id := range MaxClassID + 1 {
			s := c.Stats(id)
			pt, wb = pt+s.PTWr, wb+s.CleanerCoreWr
		}
		got := fmt.Sprintf("core %s (pass-through %s, written back %s), dirty %s", mib(pt+wb), mib(pt), mib(wb), mib(c.DirtyLines()*4096))
		if run.classes != nil {
			got = fmt.Sprintf("core %s, dirty %s", mib(pt+wb), mib(c.DirtyLines()*4096))
		}
		if got != run.want {
			t.Errorf("%s: MiB %s; real OCF %s", run.name, got, run.want)
		}
	}
}
