// Package cachesim is a fast model of one Open CAS cache in front of one
// core device, for replaying long traces (kubectl prism simulate). Its
// semantics are the casadm emulator's cache model (cmd/casadm-emulator,
// model.go; docs/cache.md): per-class caps, eviction of overflown classes
// first, then lowest priority first among classes whose priority value is at
// least the requester's, pinned classes only beyond their own cap, a class at
// its cap recycling its own least recently used line, allocation 0 →
// pass-through, a mapping failure → pass-through, dirty lines written back
// (the cleaner's counters) before they leave, write-back and write-through,
// 4 KiB validity within a line, sequential cut-off. A test in
// cmd/casadm-emulator drives both models with the same requests and
// compares every counter.
//
// While a request maps its lines one by one, eviction never picks a line of
// the request, held or just mapped (OCF write-locks them; its LRU eviction
// skips lines of the request's core between core_line_first and
// core_line_last); when no other line can go, the request is serviced in
// pass-through. It is O(classes) per eviction where the emulator scans every
// line, and it keeps no per-line data the emulator keeps for its state file.
package cachesim

import (
	"fmt"
	"math/bits"
)

// MaxClassID bounds class ids (Open CAS master has 0-33).
const MaxClassID = 63

// Class is one IO class of the cache.
type Class struct {
	ID int
	// Priority is 0 (evicted last) to 255; -1 is pinned.
	Priority int
	// MaxSize is the cap in percent of the lines; 0 sends the class to
	// pass-through.
	MaxSize int
}

// Mode is the cache mode.
type Mode string

// Modes the model knows.
const (
	WriteBack    Mode = "wb"
	WriteThrough Mode = "wt"
	PassThrough  Mode = "pt"
)

// SeqCutoff is the sequential cut-off policy.
type SeqCutoff string

// Sequential cut-off policies.
const (
	SeqAlways SeqCutoff = "always"
	SeqFull   SeqCutoff = "full"
	SeqNever  SeqCutoff = "never"
)

// Config describes a cache.
type Config struct {
	// Lines is the number of cache lines; LineBytes their size, 4 KiB to
	// 64 KiB (the validity mask has one bit per 4 KiB).
	Lines     uint64
	LineBytes uint64
	Mode      Mode
	Classes   []Class
	// SeqCutoffBytes and SeqCutoffPolicy are the core's sequential cut-off
	// (OCF defaults: 1 MiB, full).
	SeqCutoffBytes  uint64
	SeqCutoffPolicy SeqCutoff
}

// Counters are OCF's per-class statistics in bytes and requests, as the
// emulator keeps them.
type Counters struct {
	RdTotal, RdPartialMiss, RdFullMiss, RdPT uint64
	WrTotal, WrPartialMiss, WrFullMiss, WrPT uint64
	CleanerReqs                              uint64
	ExpRd, ExpWr                             uint64
	CoreRd, CoreWr                           uint64
	CacheRd, CacheWr                         uint64
	PTRd, PTWr                               uint64
	CleanerCacheRd, CleanerCoreWr            uint64
}

// Request is one IO at the exported object, already classified.
type Request struct {
	Write bool
	// Offset and Size are in bytes; Size > 0.
	Offset, Size uint64
	Class        int
}

const none = -1

// line is one occupied cache line; prev and next link its class's LRU list.
type line struct {
	addr       uint64
	lru        uint64
	prev, next int32
	class      int8
	dirty      bool
	missing    uint16
}

type classState struct {
	exists     bool
	priority   int
	pinned     bool
	capLines   uint64
	maxSize    int
	lines      uint64
	head, tail int32 // least and most recently used
	// occupancy accumulates lines held, sampled (Occupancy).
	occupancy uint64
	dirty     uint64
}

// Cache is the model. It is not safe for concurrent use.
type Cache struct {
	cfg     Config
	lines   []line
	free    []int32
	idx     addrIndex
	classes [MaxClassID + 1]classState
	stats   [MaxClassID + 1]Counters
	clock   uint64
	// the core's sequential stream
	streamEnd, streamBytes uint64
	// the lines of the request being mapped: never evicted (see the package
	// comment).
	reqFirst, reqLast uint64
	samples           uint64
	dirtyLines        uint64
}

// New returns an empty cache. Without class 0 in cfg.Classes, class 0 is
// what a new cache starts with: priority 255, the whole cache.
func New(cfg Config) (*Cache, error) {
	if cfg.LineBytes < 4096 || cfg.LineBytes > 65536 || cfg.LineBytes&(cfg.LineBytes-1) != 0 {
		return nil, fmt.Errorf("line size %d: want a power of two from 4 KiB to 64 KiB", cfg.LineBytes)
	}
	if cfg.Lines == 0 || cfg.Lines > 1<<31-1 {
		return nil, fmt.Errorf("%d lines: want 1 to 2^31-1", cfg.Lines)
	}
	switch cfg.Mode {
	case WriteBack, WriteThrough, PassThrough:
	default:
		return nil, fmt.Errorf("mode %q: want wb, wt or pt", cfg.Mode)
	}
	switch cfg.SeqCutoffPolicy {
	case SeqAlways, SeqFull, SeqNever:
	default:
		return nil, fmt.Errorf("sequential cut-off policy %q: want always, full or never", cfg.SeqCutoffPolicy)
	}
	c := &Cache{cfg: cfg, lines: make([]line, 0, min(cfg.Lines, 1<<20)), idx: newAddrIndex(cfg.Lines)}
	c.classes[0] = classState{exists: true, priority: 255, maxSize: 100}
	for _, cl := range cfg.Classes {
		if cl.ID < 0 || cl.ID > MaxClassID || cl.MaxSize < 0 || cl.MaxSize > 100 || cl.Priority < -1 || cl.Priority > 255 {
			return nil, fmt.Errorf("class %+v out of range", cl)
		}
		c.classes[cl.ID] = classState{exists: true, priority: cl.Priority, pinned: cl.Priority < 0, maxSize: cl.MaxSize}
	}
	for i := range c.classes {
		s := &c.classes[i]
		s.head, s.tail = none, none
		s.capLines = cfg.Lines * uint64(s.maxSize) / 100
	}
	return c, nil
}

// Stats returns a class's counters.
func (c *Cache) Stats(class int) Counters { return c.stats[class] }

// Lines returns the lines a class holds and how many are dirty.
func (c *Cache) Lines(class int) (lines, dirty uint64) {
	return c.classes[class].lines, c.classes[class].dirty
}

// DirtyLines is the number of dirty lines.
func (c *Cache) DirtyLines() uint64 { return c.dirtyLines }

// LineBytes is the line size.
func (c *Cache) LineBytes() uint64 { return c.cfg.LineBytes }

// Sample adds every class's current occupancy to its running sum; Occupancy
// divides by the number of samples.
func (c *Cache) Sample() {
	c.samples++
	for i := range c.classes {
		c.classes[i].occupancy += c.classes[i].lines
	}
}

// Occupancy is a class's mean occupancy in lines over the samples taken.
func (c *Cache) Occupancy(class int) float64 {
	if c.samples == 0 {
		return 0
	}
	return float64(c.classes[class].occupancy) / float64(c.samples)
}

func (c *Cache) tick() uint64 {
	c.clock++
	return c.clock
}

func (c *Cache) usedLines() uint64 { return uint64(len(c.lines) - len(c.free)) }

// blockMask is the set of 4 KiB blocks of line a that [off, off+size)
// touches, rounded out to whole blocks (the emulator's blockMask).
func blockMask(a, lb, off, size uint64) uint16 {
	start, end := max(off, a*lb), min(off+size, (a+1)*lb)
	if end <= start {
		return 0
	}
	b0, b1 := (start-a*lb)/4096, (end-a*lb+4095)/4096
	return uint16((uint32(1)<<b1)-1) &^ uint16((uint32(1)<<b0)-1)
}

// Submit runs one request.
func (c *Cache) Submit(r Request) {
	class := r.Class
	if class < 0 || class > MaxClassID || !c.classes[class].exists {
		class = 0
	}
	cnt := &c.stats[class]
	size := r.Size
	if r.Write {
		cnt.ExpWr += size
	} else {
		cnt.ExpRd += size
	}
	off, lb := r.Offset, c.cfg.LineBytes
	first, last := off/lb, (off+size-1)/lb
	if off == c.streamEnd && c.streamBytes > 0 {
		c.streamBytes += size
	} else {
		c.streamBytes = size
	}
	c.streamEnd = off + size

	pt := false
	switch {
	case c.classes[class].maxSize == 0, c.cfg.Mode == PassThrough:
		pt = true
	case c.cfg.SeqCutoffPolicy == SeqAlways || (c.cfg.SeqCutoffPolicy == SeqFull && c.usedLines() >= c.cfg.Lines):
		pt = c.streamBytes >= c.cfg.SeqCutoffBytes
	}

	hits, n := uint64(0), last-first+1
	for a := first; a <= last; a++ {
		if i := c.idx.get(a); i != none && c.lines[i].missing&blockMask(a, lb, off, size) == 0 {
			hits++
		}
	}
	if !pt && hits < n {
		c.reqFirst, c.reqLast = first, last
		for a := first; a <= last; a++ {
			if c.idx.get(a) != none {
				continue
			}
			if !c.allocate(class) {
				pt = true
				break
			}
			c.insert(a, class, blockMask(a, lb, a*lb, lb))
		}
	}
	if pt {
		if r.Write {
			cnt.WrPT++
			cnt.PTWr += size
			cnt.CoreWr += size
			for a := first; a <= last; a++ {
				if i := c.idx.get(a); i != none {
					c.clean(i)
					c.drop(i)
				}
			}
		} else {
			cnt.RdPT++
			cnt.PTRd += size
			cnt.CoreRd += size
		}
		return
	}
	if r.Write {
		countRequest(cnt, true, hits, n)
		cnt.CacheWr += size
		lazy := c.cfg.Mode == WriteBack
		if !lazy {
			cnt.CoreWr += size
		}
		for a := first; a <= last; a++ {
			i := c.idx.get(a)
			l := &c.lines[i]
			l.missing &^= blockMask(a, lb, off, size)
			if int(l.class) != class {
				c.unlink(i)
				c.classes[l.class].lines--
				c.classes[class].lines++
				if l.dirty {
					c.classes[l.class].dirty--
					c.classes[class].dirty++
				}
				l.class = int8(class)
				c.linkTail(i)
			}
			c.touch(i)
			if lazy && !l.dirty {
				l.dirty = true
				c.classes[class].dirty++
				c.dirtyLines++
			} else if !lazy && l.dirty {
				l.dirty = false
				c.classes[class].dirty--
				c.dirtyLines--
			}
		}
		return
	}
	countRequest(cnt, false, hits, n)
	if hits == n {
		cnt.CacheRd += size
	} else {
		cnt.CoreRd += size
		cnt.CacheWr += size * (n - hits) / n
	}
	for a := first; a <= last; a++ {
		i := c.idx.get(a)
		c.touch(i)
		c.lines[i].missing &^= blockMask(a, lb, off, size)
	}
}

func countRequest(cnt *Counters, write bool, hits, n uint64) {
	total, full, partial := &cnt.RdTotal, &cnt.RdFullMiss, &cnt.RdPartialMiss
	if write {
		total, full, partial = &cnt.WrTotal, &cnt.WrFullMiss, &cnt.WrPartialMiss
	}
	*total++
	switch {
	case hits == 0:
		*full++
	case hits < n:
		*partial++
	}
}

// Flush writes every dirty line back.
func (c *Cache) Flush() {
	for i := range c.lines {
		if c.lines[i].dirty {
			c.clean(int32(i))
		}
	}
}

func (c *Cache) insert(addr uint64, class int, missing uint16) {
	var i int32
	if n := len(c.free); n > 0 {
		i, c.free = c.free[n-1], c.free[:n-1]
	} else {
		i = int32(len(c.lines))
		c.lines = append(c.lines, line{})
	}
	c.lines[i] = line{addr: addr, class: int8(class), missing: missing, prev: none, next: none}
	c.idx.put(addr, i)
	c.classes[class].lines++
	c.linkTail(i)
	c.lines[i].lru = c.tick()
}

// touch makes line i its class's most recently used.
func (c *Cache) touch(i int32) {
	c.unlink(i)
	c.linkTail(i)
	c.lines[i].lru = c.tick()
}

func (c *Cache) linkTail(i int32) {
	l := &c.lines[i]
	s := &c.classes[l.class]
	l.prev, l.next = s.tail, none
	if s.tail != none {
		c.lines[s.tail].next = i
	} else {
		s.head = i
	}
	s.tail = i
}

func (c *Cache) unlink(i int32) {
	l := &c.lines[i]
	s := &c.classes[l.class]
	if l.prev != none {
		c.lines[l.prev].next = l.next
	} else {
		s.head = l.next
	}
	if l.next != none {
		c.lines[l.next].prev = l.prev
	} else {
		s.tail = l.prev
	}
	l.prev, l.next = none, none
}

// clean writes a dirty line back: the cleaner's counters, on the line's class.
func (c *Cache) clean(i int32) {
	l := &c.lines[i]
	if !l.dirty {
		return
	}
	cnt := &c.stats[l.class]
	cnt.CleanerReqs++
	cnt.CleanerCacheRd += c.cfg.LineBytes
	cnt.CleanerCoreWr += c.cfg.LineBytes
	l.dirty = false
	c.classes[l.class].dirty--
	c.dirtyLines--
}

func (c *Cache) drop(i int32) {
	l := &c.lines[i]
	if l.dirty {
		panic("cachesim: dropping a dirty line")
	}
	c.unlink(i)
	c.idx.del(l.addr)
	c.classes[l.class].lines--
	c.free = append(c.free, i)
}

// inRequest says line i belongs to the request being mapped.
func (c *Cache) inRequest(i int32) bool {
	a := c.lines[i].addr
	return a >= c.reqFirst && a <= c.reqLast
}

// lru returns the least recently used line of a class outside the request.
func (c *Cache) lru(class int) int32 {
	i := c.classes[class].head
	for i != none && c.inRequest(i) {
		i = c.lines[i].next
	}
	return i
}

// allocate makes room for one more line of class (the emulator's allocate).
func (c *Cache) allocate(class int) bool {
	s := &c.classes[class]
	if s.lines >= s.capLines {
		i := c.lru(class)
		if i == none {
			return false
		}
		c.clean(i)
		c.drop(i)
		return true
	}
	if c.usedLines() < c.cfg.Lines {
		return true
	}
	i := c.victim(class)
	if i == none {
		return false
	}
	c.clean(i)
	c.drop(i)
	return true
}

// victim: lines of overflown classes first, then lowest priority first
// (highest value) among classes whose value is at least the requester's;
// pinned classes only when overflown. Least recently used within that rank,
// across classes of equal rank.
func (c *Cache) victim(class int) int32 {
	prio := c.classes[class].priority
	best, bestRank := int32(none), -1
	for id := range c.classes {
		s := &c.classes[id]
		if s.lines == 0 {
			continue
		}
		rank := -1
		switch {
		case !s.exists || s.lines > s.capLines:
			rank = 1000
		case s.pinned:
		case s.priority >= prio:
			rank = s.priority
		}
		if rank < 0 || rank < bestRank {
			continue
		}
		i := c.lru(id)
		if i == none {
			continue
		}
		if rank > bestRank || c.lines[i].lru < c.lines[best].lru {
			best, bestRank = i, rank
		}
	}
	return best
}

// addrIndex maps a core line number to its cache line: open addressing with
// linear probing and backward-shift deletion, at most half full.
type addrIndex struct {
	mask  uint64
	keys  []uint64 // addr+1; 0 is free
	slots []int32
}

func newAddrIndex(lines uint64) addrIndex {
	n := uint64(16)
	for n < 2*lines {
		n *= 2
	}
	return addrIndex{mask: n - 1, keys: make([]uint64, n), slots: make([]int32, n)}
}

func hashAddr(a uint64) uint64 {
	h, _ := bits.Mul64(a+1, 0x9e3779b97f4a7c15)
	return h ^ (a+1)*0x9e3779b97f4a7c15
}

func (x *addrIndex) get(a uint64) int32 {
	k := a + 1
	for i := hashAddr(a) & x.mask; ; i = (i + 1) & x.mask {
		switch x.keys[i] {
		case k:
			return x.slots[i]
		case 0:
			return none
		}
	}
}

func (x *addrIndex) put(a uint64, slot int32) {
	k := a + 1
	i := hashAddr(a) & x.mask
	for x.keys[i] != 0 && x.keys[i] != k {
		i = (i + 1) & x.mask
	}
	x.keys[i], x.slots[i] = k, slot
}

func (x *addrIndex) del(a uint64) {
	k := a + 1
	i := hashAddr(a) & x.mask
	for x.keys[i] != k {
		if x.keys[i] == 0 {
			return
		}
		i = (i + 1) & x.mask
	}
	// Backward shift: move later entries of the probe run into the hole
	// when their home slot does not lie between the hole and them.
	for j := (i + 1) & x.mask; x.keys[j] != 0; j = (j + 1) & x.mask {
		home := hashAddr(x.keys[j]-1) & x.mask
		if (j-home)&x.mask >= (j-i)&x.mask {
			x.keys[i], x.slots[i] = x.keys[j], x.slots[j]
			i = j
		}
	}
	x.keys[i] = 0
}
