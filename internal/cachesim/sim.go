package cachesim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prism-storage/prism/internal/ioclass"
)

// Options of a sizing run.
type Options struct {
	// CapacityBytes is the QLC (core) capacity the fast-tier sizes are
	// fractions of.
	CapacityBytes uint64
	// Percents are the fast-tier sizes to model, in percent of CapacityBytes.
	Percents []float64
	// LineBytes is the cache line size (Open CAS default 4 KiB).
	LineBytes uint64
	Mode      Mode
	// SeqCutoffBytes and SeqCutoffPolicy: OCF's defaults are 1 MiB, full.
	SeqCutoffBytes  uint64
	SeqCutoffPolicy SeqCutoff
	// Optimum also computes the offline optimum per size (memory: 8 bytes
	// per written line plus a map of the distinct lines).
	Optimum bool
	// Workers run the sizes' caches in parallel (at least 1).
	Workers int
}

// ClassResult is one class's outcome at one size.
type ClassResult struct {
	ID           int
	ClientWrite  uint64
	ClientRead   uint64
	MeanOccBytes float64
	// Beta is the class's write invalidation: client write bytes over
	// its mean occupancy (0 when it held nothing).
	Beta float64
	// QLCWrite is the bytes of this class that reached QLC.
	QLCWrite uint64
}

// SizeResult is the outcome at one fast-tier size.
type SizeResult struct {
	Percent   float64
	FastBytes uint64
	Lines     uint64
	// ClientWrite and ClientRead are the bytes written and read at the
	// exported object.
	ClientWrite, ClientRead uint64
	// UserQLCWrite is client writes that went straight to QLC
	// (pass-through, write-through); Flush is the cleaner's write-backs of
	// dirty lines (cleaned so that lines can be evicted, or rewritten by a
	// pass-through write); DirtyEnd is what is still dirty at the end, which
	// will reach QLC too.
	UserQLCWrite, Flush, DirtyEnd uint64
	// Alpha is 1 − (UserQLCWrite + Flush) ÷ ClientWrite: the counters at the
	// end of the trace, dirty lines still cached. AlphaFlushed also counts
	// DirtyEnd. AlphaOpt is the offline optimum (see Optimum), counted like
	// AlphaFlushed; NaN when not computed.
	Alpha, AlphaFlushed, AlphaOpt float64
	// OptQLCWrite is the optimum's QLC bytes.
	OptQLCWrite uint64
	Classes     []ClassResult
}

// Summary is what a run saw besides the sizes.
type Summary struct {
	IOs, Writes, Reads uint64
	// WrittenLines is the number of line writes (a write touching n lines
	// counts n); DistinctLines the distinct lines written.
	WrittenLines, DistinctLines uint64
}

// sampleEvery is how often (in IOs) class occupancy is sampled for β.
const sampleEvery = 1024

// batch is a run of classified requests handed to the workers.
const batchLen = 4096

// Run replays src through the evaluator and one cache per size. The classes
// of cfg give caps, priorities and pinning; ev classifies (core id 1).
func Run(src Source, ev *ioclass.Evaluator, cfg ioclass.Config, opt Options) ([]SizeResult, Summary, error) {
	if opt.LineBytes == 0 {
		opt.LineBytes = 4096
	}
	if opt.Mode == "" {
		opt.Mode = WriteBack
	}
	if opt.SeqCutoffPolicy == "" {
		opt.SeqCutoffPolicy = SeqFull
	}
	if opt.SeqCutoffBytes == 0 && opt.SeqCutoffPolicy != SeqNever {
		opt.SeqCutoffBytes = 1 << 20
	}
	opt.Workers = max(opt.Workers, 1)
	var classes []Class
	for _, cl := range cfg.Classes {
		prio := -1
		if cl.Priority != nil {
			prio = *cl.Priority
		}
		classes = append(classes, Class{ID: cl.ID, Priority: prio, MaxSize: cl.MaxSizePercent()})
	}
	var caches []*Cache
	var results []SizeResult
	for _, p := range opt.Percents {
		if !(p > 0 && p <= 100) {
			return nil, Summary{}, fmt.Errorf("fast-tier size %v %%: want more than 0 and at most 100", p)
		}
		fast := uint64(float64(opt.CapacityBytes) * p / 100)
		lines := fast / opt.LineBytes
		c, err := New(Config{Lines: lines, LineBytes: opt.LineBytes, Mode: opt.Mode, Classes: classes,
			SeqCutoffBytes: opt.SeqCutoffBytes, SeqCutoffPolicy: opt.SeqCutoffPolicy})
		if err != nil {
			return nil, Summary{}, fmt.Errorf("fast-tier size %v %% of %d bytes: %w", p, opt.CapacityBytes, err)
		}
		caches = append(caches, c)
		results = append(results, SizeResult{Percent: p, FastBytes: lines * opt.LineBytes, Lines: lines})
	}

	// Workers each own some caches and replay every batch into them, while
	// the next batch is read and classified (two buffers).
	type job struct {
		reqs []Request
		done *sync.WaitGroup
	}
	var wg sync.WaitGroup
	chans := make([]chan job, opt.Workers)
	for w := range chans {
		chans[w] = make(chan job, 2)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := range chans[w] {
				for ci := w; ci < len(caches); ci += opt.Workers {
					c := caches[ci]
					for i := range j.reqs {
						c.Submit(j.reqs[i])
						if (i+1)%sampleEvery == 0 {
							c.Sample()
						}
					}
				}
				j.done.Done()
			}
		}(w)
	}
	var sum Summary
	var opts optTrace
	var io ioclass.IO
	bufs := [2][]Request{make([]Request, 0, batchLen), make([]Request, 0, batchLen)}
	var pending [2]*sync.WaitGroup
	cur := 0
	send := func() {
		done := &sync.WaitGroup{}
		done.Add(opt.Workers)
		pending[cur] = done
		for _, ch := range chans {
			ch <- job{bufs[cur], done}
		}
		cur ^= 1
		if pending[cur] != nil {
			pending[cur].Wait()
		}
		bufs[cur] = bufs[cur][:0]
	}
	for src.Next(&io) {
		if io.Size == 0 {
			continue
		}
		io.CoreID = 1
		sum.IOs++
		off := io.LBA * 512
		if io.Write {
			sum.Writes++
			first, last := off/opt.LineBytes, (off+io.Size-1)/opt.LineBytes
			sum.WrittenLines += last - first + 1
			if opt.Optimum {
				for a := first; a <= last; a++ {
					opts.add(a)
				}
			}
		} else {
			sum.Reads++
		}
		bufs[cur] = append(bufs[cur], Request{Write: io.Write, Offset: off, Size: io.Size, Class: ev.Classify(io)})
		if len(bufs[cur]) == batchLen {
			send()
		}
	}
	if len(bufs[cur]) > 0 {
		send()
	}
	for _, ch := range chans {
		close(ch)
	}
	wg.Wait()
	if err := src.Err(); err != nil {
		return nil, sum, err
	}
	sum.DistinctLines = uint64(len(opts.ids))

	if opt.Optimum && uint64(len(opts.seq)) >= uint64(never) {
		return nil, sum, fmt.Errorf("%d line writes: the optimum counts positions in 32 bits; replay without it", len(opts.seq))
	}
	var next []uint32
	if opt.Optimum {
		next = opts.nextUse()
	}
	for ci, c := range caches {
		r := &results[ci]
		for _, cl := range classes {
			s := c.Stats(cl.ID)
			occ := c.Occupancy(cl.ID) * float64(opt.LineBytes)
			cr := ClassResult{ID: cl.ID, ClientWrite: s.ExpWr, ClientRead: s.ExpRd, MeanOccBytes: occ,
				QLCWrite: s.CoreWr + s.CleanerCoreWr}
			if occ > 0 {
				cr.Beta = float64(s.ExpWr) / occ
			}
			_, dirty := c.Lines(cl.ID)
			cr.QLCWrite += dirty * opt.LineBytes
			r.Classes = append(r.Classes, cr)
			r.ClientWrite += s.ExpWr
			r.ClientRead += s.ExpRd
			r.UserQLCWrite += s.CoreWr
			r.Flush += s.CleanerCoreWr
		}
		r.DirtyEnd = c.DirtyLines() * opt.LineBytes
		r.Alpha = alpha(r.UserQLCWrite+r.Flush, r.ClientWrite)
		r.AlphaFlushed = alpha(r.UserQLCWrite+r.Flush+r.DirtyEnd, r.ClientWrite)
		r.AlphaOpt = nan()
		if opt.Optimum {
			r.OptQLCWrite = Optimum(opts.seq, next, r.Lines) * opt.LineBytes
			r.AlphaOpt = alpha(r.OptQLCWrite, r.ClientWrite)
		}
	}
	return results, sum, nil
}

func nan() float64 {
	var zero float64
	return zero / zero
}

func alpha(qlc, client uint64) float64 {
	if client == 0 {
		return nan()
	}
	return 1 - float64(qlc)/float64(client)
}

// optTrace records the written lines as dense ids, in order.
type optTrace struct {
	ids map[uint64]uint32
	seq []uint32
}

func (o *optTrace) add(addr uint64) {
	if o.ids == nil {
		o.ids = map[uint64]uint32{}
	}
	id, ok := o.ids[addr]
	if !ok {
		id = uint32(len(o.ids))
		o.ids[addr] = id
	}
	o.seq = append(o.seq, id)
}

// never is the next use of a line not written again.
const never = ^uint32(0)

// nextUse gives, for each position, the next position writing the same line.
func (o *optTrace) nextUse() []uint32 {
	next := make([]uint32, len(o.seq))
	last := make([]uint32, len(o.ids))
	for i := range last {
		last[i] = never
	}
	for i := len(o.seq) - 1; i >= 0; i-- {
		id := o.seq[i]
		next[i] = last[id]
		last[id] = uint32(i)
	}
	return next
}

// Optimum is the fewest lines any write-back cache of capacity lines must
// write to QLC for the line writes seq (dense line ids; next from nextUse),
// knowing the future: Belady's MIN with bypass. A write of a cached line is
// absorbed; any other write is a miss and costs one line write to QLC, now
// (bypass) or when the line leaves the cache, or at the end; on a miss with
// a full cache the line written again furthest in the future, the incoming
// one included, is not kept. Reads are ignored: they never cost QLC writes.
// The result is the number of misses.
func Optimum(seq, next []uint32, capacity uint64) uint64 {
	if capacity == 0 {
		return uint64(len(seq))
	}
	ids := uint32(0)
	for _, id := range seq {
		ids = max(ids, id+1)
	}
	// cached[id] is set while line id is in the cache; its next use is in
	// the heap.
	cached := make([]bool, ids)
	size := uint64(0)
	var h maxHeap
	misses := uint64(0)
	for i, id := range seq {
		n := next[i]
		if cached[id] {
			h.push(entry{n, id})
		} else {
			misses++
			if n == never {
				continue // never written again: keeping it saves nothing
			}
			if size >= capacity {
				// Entries whose line was written since are stale; a valid
				// entry's key is in the future (> i) and a stale one's is
				// not (it was the write that made it stale), so the top is
				// valid while any line is cached.
				top := h.top()
				if top.next <= n {
					continue // bypass
				}
				h.pop()
				cached[top.id] = false
				size--
			}
			cached[id] = true
			size++
			h.push(entry{n, id})
		}
		if uint64(len(h)) > 4*size+1024 {
			// Drop the stale entries: those whose key is not in the future.
			live := h[:0]
			for _, e := range h {
				if e.next > uint32(i) {
					live = append(live, e)
				}
			}
			h = live
			h.init()
		}
	}
	return misses
}

type entry struct{ next, id uint32 }

// maxHeap is a binary max-heap on next.
type maxHeap []entry

func (h maxHeap) top() entry { return h[0] }

func (h *maxHeap) push(e entry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].next >= s[i].next {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *maxHeap) pop() {
	s := *h
	s[0] = s[len(s)-1]
	s = s[:len(s)-1]
	*h = s
	h.down(0)
}

func (h maxHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && h[r].next > h[l].next {
			l = r
		}
		if h[i].next >= h[l].next {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

func (h maxHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// Percents parses "1%..20%" (every whole percent from 1 to 20),
// "1%..20%/5" (from 1 in steps of 5, and 20), or a comma-separated list of
// such items ("1%,2.5%,5%"); the % sign is optional. The result is sorted
// and without duplicates.
func Percents(s string) ([]float64, error) {
	var out []float64
	for _, item := range splitComma(s) {
		lo, hi, isRange := cutString(item, "..")
		step := 1.0
		if isRange {
			var stepText string
			var hasStep bool
			hi, stepText, hasStep = cutString(hi, "/")
			if hasStep {
				v, err := parsePercent(stepText)
				if err != nil || v <= 0 {
					return nil, fmt.Errorf("fast-tier size %q: step %q: want a positive number", item, stepText)
				}
				step = v
			}
		}
		a, err := parsePercent(lo)
		if err != nil || a <= 0 || a > 100 {
			return nil, fmt.Errorf("fast-tier size %q: want a percentage above 0 and at most 100, like 5%% or 1%%..20%%", item)
		}
		if !isRange {
			out = append(out, a)
			continue
		}
		b, err := parsePercent(hi)
		if err != nil || b < a || b > 100 {
			return nil, fmt.Errorf("fast-tier size %q: want LOW%%..HIGH%% with LOW <= HIGH <= 100", item)
		}
		if (b-a)/step > 1000 {
			return nil, fmt.Errorf("fast-tier size %q: more than 1000 sizes", item)
		}
		for k := 0; a+float64(k)*step < b-1e-9; k++ {
			out = append(out, a+float64(k)*step)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fast-tier size %q: no size", s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func splitComma(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func cutString(s, sep string) (string, string, bool) { return strings.Cut(s, sep) }

func parsePercent(s string) (float64, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}
