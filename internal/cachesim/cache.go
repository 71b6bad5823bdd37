// Package cachesim is a fast model of one Open CAS cache in front of one
// core device, for replaying long traces (kubectl prism simulate). Its
// semantics are the casadm emulator's cache model (cmd/casadm-emulator,
// model.go; docs/cache.md), which follows OCF v26.03.x (ocf d54f2fc9):
// per-class caps, allocation 0 → pass-through, write-back and
// write-through, 4 KiB validity within a line, sequential cut-off, and
// OCF's eviction rules:
//
//   - Only clean lines are evicted. A request that cannot get all its lines
//     is serviced in pass-through, and the 32 least recently used dirty
//     lines of every class are cleaned (the cleaner's counters) so that
//     later requests find clean lines.
//   - Each class keeps a clean and a dirty LRU list whose more recently used
//     half is hot: a hit there does not move the line.
//   - Which classes give lines (MapLines): a class at its cap takes them
//     from itself; otherwise free lines, then classes over their cap, then
//     classes of priority value at least the requester's, not pinned, by
//     eviction quotas in proportion to their size, lowest priority first.
//
// A test in cmd/casadm-emulator drives both models with the same requests
// and compares every counter after every request, and the lines they hold.
//
// While a request maps its lines, eviction never picks a line of the
// request, held or just mapped (OCF write-locks them; its LRU eviction
// skips lines of the request's core between core_line_first and
// core_line_last). Each step is O(1) per line (the emulator scans every
// line), and it keeps no per-line data the emulator keeps for its state
// file. Not modelled: OCF's 32 LRU lists per class (one list each here) and
// its preference for the cache line after the one just evicted.
package cachesim

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
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

// Add adds o's counts to c.
func (c *Counters) Add(o *Counters) {
	c.RdTotal += o.RdTotal
	c.RdPartialMiss += o.RdPartialMiss
	c.RdFullMiss += o.RdFullMiss
	c.RdPT += o.RdPT
	c.WrTotal += o.WrTotal
	c.WrPartialMiss += o.WrPartialMiss
	c.WrFullMiss += o.WrFullMiss
	c.WrPT += o.WrPT
	c.CleanerReqs += o.CleanerReqs
	c.ExpRd += o.ExpRd
	c.ExpWr += o.ExpWr
	c.CoreRd += o.CoreRd
	c.CoreWr += o.CoreWr
	c.CacheRd += o.CacheRd
	c.CacheWr += o.CacheWr
	c.PTRd += o.PTRd
	c.PTWr += o.PTWr
	c.CleanerCacheRd += o.CleanerCacheRd
	c.CleanerCoreWr += o.CleanerCoreWr
}

// Request is one IO at the exported object, already classified.
type Request struct {
	Write bool
	// Offset and Size are in bytes; Size > 0.
	Offset, Size uint64
	Class        int
}

const none = -1

// line is one occupied cache line. prev and next link it into one of its
// class's two LRU lists (clean, dirty): prev toward the head, the most
// recently used end, next toward the tail.
type line struct {
	addr       uint64
	prev, next int32
	class      int8
	dirty      bool
	// hot: in the more recently used half of its list (see lruList).
	hot     bool
	missing uint16
}

// lruList is one of OCF's LRU lists (src/ocf_lru.c): the first n/2 lines
// from the head are hot, lastHot the last of them. A hit on a hot line does
// not move it; a hit on a cold one moves it to the head. Every line that
// enters a list enters at its head.
type lruList struct {
	head, tail, lastHot int32
	n, hot              uint32
}

type classState struct {
	exists   bool
	priority int
	pinned   bool
	capLines uint64
	maxSize  int
	lines    uint64
	// lists[0] holds the clean lines, lists[1] the dirty ones.
	lists [2]lruList
	// quota is the class's eviction quota (MapLines).
	quota int64
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
	// order is the configured classes in EvictionOrder.
	order []Part
	stats [MaxClassID + 1]Counters
	// the core's sequential stream
	streamEnd, streamBytes uint64
	// The request being mapped: its lines are never evicted (see the
	// package comment); req holds the cache line of each of its core
	// lines (none while missing), reqNew marks those it mapped (unmapped
	// again when it cannot be mapped whole), next is the next core line to
	// look at and reqClass its class.
	reqFirst, reqLast, next uint64
	reqClass                int
	// newDirty: the request's new lines go straight to the head of the
	// dirty list (see Submit).
	newDirty bool
	req      []int32
	reqNew   []bool
	// partOf is each configured class's index in order.
	partOf     [MaxClassID + 1]int
	cleanBuf   []int32
	samples    uint64
	dirtyLines uint64
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
		s.lists = [2]lruList{{head: none, tail: none, lastHot: none}, {head: none, tail: none, lastHot: none}}
		s.capLines = (cfg.Lines*uint64(s.maxSize) + 99) / 100 // OCF rounds up (ocf_user_part_get_max_size)
		if s.exists {
			c.order = append(c.order, Part{ID: i, Priority: s.priority, Cap: s.capLines})
		}
	}
	EvictionOrder(c.order)
	for i, p := range c.order {
		c.partOf[p.ID] = i
	}
	return c, nil
}

// Stats returns a class's counters.
func (c *Cache) Stats(class int) Counters { return c.stats[class] }

// Lines returns the lines a class holds and how many are dirty.
func (c *Cache) Lines(class int) (lines, dirty uint64) {
	return c.classes[class].lines, c.classes[class].dirty
}

// Cached says whether core line addr is cached, in which class, and whether
// it is dirty.
func (c *Cache) Cached(addr uint64) (class int, dirty, ok bool) {
	i := c.idx.get(addr)
	if i == none {
		return 0, false, false
	}
	return int(c.lines[i].class), c.lines[i].dirty, true
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

func (c *Cache) usedLines() uint64 { return uint64(len(c.lines) - len(c.free)) }

// BlockMask is the set of 4 KiB blocks of core line a (lb bytes long) that the byte range
// [off, off+size) touches, rounded out to whole blocks (OCF tracks 512-byte sectors; the
// requests modelled are 4 KiB multiples in practice). The casadm emulator's model uses it too.
func BlockMask(a, lb, off, size uint64) uint16 {
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

	// Lines already mapped (hits when the blocks asked for hold data), and
	// how many of them another class holds.
	hits, mapped, repart, n := uint64(0), uint64(0), uint64(0), last-first+1
	c.req, c.reqNew = c.req[:0], c.reqNew[:0]
	for a := first; a <= last; a++ {
		i := c.idx.get(a)
		c.req, c.reqNew = append(c.req, i), append(c.reqNew, false)
		if i != none {
			mapped++
			if int(c.lines[i].class) != class {
				repart++
			}
			if c.lines[i].missing&BlockMask(a, lb, off, size) == 0 {
				hits++
			}
		}
	}
	if !pt && mapped < n {
		c.reqFirst, c.reqLast, c.next, c.reqClass = first, last, first, class
		// A write-back write that found none of its lines mapped puts its
		// new lines at the head of the clean list, moves none of its own,
		// then moves each new line to the head of the dirty list: the clean
		// list ends as it was (its hot half is by position), the dirty list
		// as if they had gone there straight, which is cheaper.
		c.newDirty = r.Write && c.cfg.Mode == WriteBack && mapped == 0
		if !MapLines(space{c}, c.order, c.order[c.partOf[class]], n-mapped, repart) {
			// OCF unmaps what it mapped, services the request in
			// pass-through and cleans dirty lines of every class so that
			// later requests find clean ones.
			for k, i := range c.req {
				if c.reqNew[k] {
					c.unmap(i)
				}
			}
			c.cleanForEviction()
			pt = true
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
	// The lines the request found mapped become hot (the new ones entered
	// at the head already).
	if mapped > 0 {
		for k, i := range c.req {
			if i != none && !c.reqNew[k] {
				c.setHot(i)
			}
		}
	}
	if r.Write {
		CountRequest(cnt, true, hits, n)
		cnt.CacheWr += size
		lazy := c.cfg.Mode == WriteBack
		if !lazy {
			cnt.CoreWr += size
		}
		for a := first; a <= last; a++ {
			i := c.req[a-first]
			l := &c.lines[i]
			l.missing &^= BlockMask(a, lb, off, size)
			if int(l.class) != class {
				c.unlink(i)
				c.classes[l.class].lines--
				c.classes[class].lines++
				if l.dirty {
					c.classes[l.class].dirty--
					c.classes[class].dirty++
				}
				l.class = int8(class)
				c.pushHead(i)
			}
			if lazy != l.dirty {
				c.setDirty(i, lazy)
			}
		}
		return
	}
	CountRequest(cnt, false, hits, n)
	if hits == n {
		cnt.CacheRd += size
	} else {
		cnt.CoreRd += size
		cnt.CacheWr += size * (n - hits) / n
	}
	for a := first; a <= last; a++ {
		c.lines[c.req[a-first]].missing &^= BlockMask(a, lb, off, size)
	}
}

// CountRequest counts a request the cache services (or tries to): a hit, a partial or a full
// miss of its n lines.
func CountRequest(cnt *Counters, write bool, hits, n uint64) {
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

// mapNext maps the request's next missing core line to cache line i, at
// the head of its class's clean list.
func (c *Cache) mapNext(i int32) {
	for c.req[c.next-c.reqFirst] != none {
		c.next++
	}
	a := c.next
	c.lines[i] = line{addr: a, class: int8(c.reqClass), missing: BlockMask(a, c.cfg.LineBytes, a*c.cfg.LineBytes, c.cfg.LineBytes), prev: none, next: none}
	c.idx.put(a, i)
	s := &c.classes[c.reqClass]
	s.lines++
	if c.newDirty {
		c.lines[i].dirty = true
		s.dirty++
		c.dirtyLines++
	}
	c.pushHead(i)
	c.req[a-c.reqFirst], c.reqNew[a-c.reqFirst] = i, true
}

// unmap frees a line the request mapped and could not keep; one that went
// straight to the dirty list holds no data to write back.
func (c *Cache) unmap(i int32) {
	if l := &c.lines[i]; l.dirty {
		c.unlink(i)
		l.dirty = false
		c.classes[l.class].dirty--
		c.dirtyLines--
		c.pushHead(i)
	}
	c.drop(i)
}

// space is the Cache as MapLines sees it.
type space struct{ *Cache }

func (s space) Lines(id int) uint64           { return s.classes[id].lines }
func (s space) Free() uint64                  { return s.cfg.Lines - s.usedLines() }
func (s space) TakeFree(n uint64) uint64      { return s.takeFree(n) }
func (s space) Evict(id int, n uint64) uint64 { return s.evict(id, n) }
func (s space) Quota(id int) *int64           { return &s.classes[id].quota }

// takeFree maps up to n missing lines of the request to free lines.
func (c *Cache) takeFree(n uint64) uint64 {
	for k := range n {
		if c.usedLines() >= c.cfg.Lines {
			return k
		}
		var i int32
		if f := len(c.free); f > 0 {
			i, c.free = c.free[f-1], c.free[:f-1]
		} else {
			i = int32(len(c.lines))
			c.lines = append(c.lines, line{})
		}
		c.mapNext(i)
	}
	return n
}

// evict evicts up to n clean lines of class id, from the tail of its clean
// list, skipping the request's own, and maps the request's missing lines to
// them.
func (c *Cache) evict(id int, n uint64) uint64 {
	got := uint64(0)
	for i := c.classes[id].lists[0].tail; i != none && got < n; {
		prev := c.lines[i].prev
		if !c.inRequest(i) {
			c.drop(i)
			c.free = c.free[:len(c.free)-1] // drop freed it; it is taken at once
			c.mapNext(i)
			got++
		}
		i = prev
	}
	return got
}

// The lists.

func (c *Cache) list(i int32) *lruList {
	l := &c.lines[i]
	d := 0
	if l.dirty {
		d = 1
	}
	return &c.classes[l.class].lists[d]
}

// pushHead puts line i at the head of its list, hot (OCF's add to head:
// the first line of an empty list is not).
func (c *Cache) pushHead(i int32) {
	s, l := c.list(i), &c.lines[i]
	l.prev, l.next, l.hot = none, s.head, false
	if s.n == 0 {
		s.head, s.tail = i, i
	} else {
		if !c.lines[s.head].hot {
			s.lastHot = i
		}
		c.lines[s.head].prev = i
		s.head = i
		l.hot = true
		s.hot++
	}
	s.n++
	c.balance(s)
}

// unlink takes line i out of its list.
func (c *Cache) unlink(i int32) {
	s, l := c.list(i), &c.lines[i]
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
	if s.lastHot == i {
		s.lastHot = l.prev
	}
	s.n--
	if l.hot {
		s.hot--
	}
	l.prev, l.next, l.hot = none, none, false
	c.balance(s)
}

// balance moves the hot boundary by one line so that the first n/2 lines
// are hot (every change of a list changes n/2 by at most one).
func (c *Cache) balance(s *lruList) {
	switch target := s.n / 2; {
	case target > s.hot:
		if s.lastHot == none {
			s.lastHot = s.head
		} else {
			s.lastHot = c.lines[s.lastHot].next
		}
		c.lines[s.lastHot].hot = true
		s.hot++
	case target < s.hot:
		c.lines[s.lastHot].hot = false
		s.lastHot = c.lines[s.lastHot].prev
		s.hot--
	}
}

// setHot moves a cold line to the head of its list; a hot one stays.
func (c *Cache) setHot(i int32) {
	if c.lines[i].hot {
		return
	}
	c.unlink(i)
	c.pushHead(i)
}

// setDirty moves line i to the head of its class's dirty or clean list.
func (c *Cache) setDirty(i int32, dirty bool) {
	l := &c.lines[i]
	c.unlink(i)
	l.dirty = dirty
	s := &c.classes[l.class]
	if dirty {
		s.dirty++
		c.dirtyLines++
	} else {
		s.dirty--
		c.dirtyLines--
	}
	c.pushHead(i)
}

// clean writes a dirty line back: the cleaner's counters, on the line's
// class; the line moves to the head of the clean list.
func (c *Cache) clean(i int32) {
	l := &c.lines[i]
	if !l.dirty {
		return
	}
	cnt := &c.stats[l.class]
	cnt.CleanerReqs++
	cnt.CleanerCacheRd += c.cfg.LineBytes
	cnt.CleanerCoreWr += c.cfg.LineBytes
	c.setDirty(i, false)
}

// cleanForEviction cleans the EvictionCleanLines least recently used dirty
// lines of every class, as OCF does after a request it could not map; they
// join the clean lists in core line order (OCF's cleaner sorts them).
func (c *Cache) cleanForEviction() {
	for _, p := range c.order {
		b := c.cleanBuf[:0]
		for i := c.classes[p.ID].lists[1].tail; i != none && len(b) < EvictionCleanLines; i = c.lines[i].prev {
			b = append(b, i)
		}
		slices.SortFunc(b, func(x, y int32) int { return cmp.Compare(c.lines[x].addr, c.lines[y].addr) })
		for _, i := range b {
			c.clean(i)
		}
		c.cleanBuf = b
	}
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
