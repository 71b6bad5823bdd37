package main

import (
	"cmp"
	"slices"

	"github.com/prism-storage/prism/internal/cachesim"
	"github.com/prism-storage/prism/internal/ioclass"
)

// The cache model: which core lines a cache holds, for which IO class,
// dirty or clean, and the counters OCF keeps. It follows the OCF semantics
// FORMATS.md §1.2 describes (caps, priorities, pinning, allocation 0 →
// pass-through) at the granularity of cache lines, with no data, and OCF
// v26.03.x's eviction (ocf d54f2fc9): only clean lines are evicted, a
// request that cannot be mapped goes pass-through and cleans 32 dirty lines
// per class, a hit in the hot half of an LRU list does not move the line,
// and the classes give lines as cachesim.MapLines decides (shared with the
// simulator, internal/cachesim, which TestSimulatorParity checks against
// this model request by request).

const (
	kib = 1024
	mib = 1 << 20
	gib = 1 << 30
)

// metadataBytes is the emulator's stand-in for the OCF metadata that a
// cache device holds besides its lines: 32 MiB plus 1/256 of the device.
// (Real OCF's reservation depends on its version and the line size.)
func metadataBytes(size int64) int64 { return 32*mib + size/256 }

// cacheLines is how many lines of lineKiB fit on a device of size bytes.
func cacheLines(size int64, lineKiB int) uint64 {
	md := metadataBytes(size)
	if size <= md {
		return 0
	}
	return uint64(size-md) / uint64(lineKiB*kib)
}

// footprintBytes is the emulator's stand-in for the metadata memory
// footprint casadm prints: 16 MiB plus 330 bytes per line.
func footprintBytes(lines uint64) uint64 { return 16*mib + 330*lines }

// newCache is a freshly started cache: OCF defaults, class 0 (and, with prefetch, master's
// class 33 "prefetch") only, empty.
func newCache(id int, dev *Device, mode string, lineKiB int, prefetch bool) *Cache {
	ca := &Cache{
		ID: id, Device: dev.Path, Mode: mode, LineKiB: lineKiB,
		Lines:   cacheLines(dev.SizeBytes, lineKiB),
		Params:  defaultCacheParams(),
		Classes: []Class{{ID: 0, Name: ioclass.UnclassifiedName, Priority: 255, MaxSize: 100}},
	}
	if prefetch {
		ca.Classes = append(ca.Classes, Class{ID: prefetchClassID, Name: "prefetch", Priority: 255, MaxSize: 100})
	}
	return ca
}

// prefetchClassID is master's reserved class (OCF_IO_CLASS_PREFETCH).
const prefetchClassID = 33

func newCore(id int, dev string) *Core {
	return &Core{ID: id, Device: dev, SeqCutoffBytes: defaultSeqCutoffBytes, SeqCutoffPolicy: defaultSeqPolicy,
		SeqPromotionCount: defaultSeqPromoCount}
}

// lineKey identifies a cache line by the core line it holds.
type lineKey struct {
	core int
	addr uint64
}

// model indexes a cache's lines for one command.
type model struct {
	c   *Cache
	idx map[lineKey]*Line
	// all holds the lines densely (fast scans); pos is each line's index in it.
	all      []*Line
	pos      map[*Line]int
	perClass map[int]uint64
	now      int64
	// lost counts dirty bytes dropped by this command.
	lost uint64
	// quota is each class's eviction quota (Cache.EvictQuota while the
	// command runs).
	quota [maxClassID + 1]int64
	// inFlight are the lines of the request being mapped: core, first and last
	// core line. OCF write-locks them, and its eviction skips any line of the
	// request's core in that range, so a request never evicts its own lines.
	// next is the next of its core lines to look at when a line is mapped,
	// class its class, mapped the lines it mapped.
	inFlight struct {
		set               bool
		core, class       int
		first, last, next uint64
		mapped            []*Line
	}
}

// locked says a line belongs to the request being mapped.
func (m *model) locked(l *Line) bool {
	r := &m.inFlight
	return r.set && l.Core == r.core && l.Addr >= r.first && l.Addr <= r.last
}

func newModel(c *Cache, now int64) *model {
	m := &model{c: c, idx: make(map[lineKey]*Line, len(c.Blocks)), pos: make(map[*Line]int, len(c.Blocks)),
		perClass: map[int]uint64{}, now: now}
	for i := range c.Blocks {
		l := c.Blocks[i]
		m.insert(&l)
	}
	for id, q := range c.EvictQuota {
		if id >= 0 && id <= maxClassID {
			m.quota[id] = q
		}
	}
	return m
}

func (m *model) insert(l *Line) {
	m.idx[lineKey{l.Core, l.Addr}] = l
	m.pos[l] = len(m.all)
	m.all = append(m.all, l)
	m.perClass[l.Class]++
}

// commit writes the index back into the cache, in a stable order.
func (m *model) commit() {
	out := make([]Line, 0, len(m.all))
	for _, l := range m.all {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Line) int {
		return cmp.Or(cmp.Compare(a.Core, b.Core), cmp.Compare(a.Addr, b.Addr))
	})
	m.c.Blocks = out
	m.c.EvictQuota = nil
	for id, q := range m.quota {
		if q != 0 {
			if m.c.EvictQuota == nil {
				m.c.EvictQuota = map[int]int64{}
			}
			m.c.EvictQuota[id] = q
		}
	}
}

func (m *model) lineBytes() uint64 { return uint64(m.c.LineKiB) * kib }

func (m *model) free() uint64 { return m.c.Lines - uint64(len(m.idx)) }

// capLines is a class's cap in lines: OCF's ocf_user_part_get_max_size, size * max_size / 100
// rounded up.
func (m *model) capLines(class int) uint64 {
	cl := m.c.class(class)
	if cl == nil {
		return 0 // not configured (parts gives a removed class the whole cache)
	}
	return (m.c.Lines*uint64(cl.MaxSize) + 99) / 100
}

// clean writes a dirty line back to its core (the cleaner's counters).
// It reports false when the cache device has failed and cannot be read.
func (m *model) clean(l *Line) bool {
	if !l.Dirty {
		return true
	}
	if m.c.Failed {
		return false
	}
	k := m.c.core(l.Core)
	if k == nil || k.Inactive {
		return false // the core device is missing
	}
	cnt := k.stats(l.Class)
	cnt.CleanerReqs++
	cnt.CleanerCacheRd += m.lineBytes()
	cnt.CleanerCoreWr += m.lineBytes()
	l.Dirty, l.DirtyAt = false, 0
	l.LRU = m.tick() // the head of the clean list
	return true
}

func (m *model) drop(l *Line) {
	if l.Dirty {
		m.lost += m.lineBytes()
	}
	delete(m.idx, lineKey{l.Core, l.Addr})
	i, last := m.pos[l], m.all[len(m.all)-1]
	m.all[i], m.pos[last] = last, i
	m.all = m.all[:len(m.all)-1]
	delete(m.pos, l)
	m.perClass[l.Class]--
}

// stranded says a dirty line cannot be written back (its core is missing).
func (m *model) stranded(l *Line) bool {
	k := m.c.core(l.Core)
	return k == nil || k.Inactive
}

func lessKey(a, b *Line) bool {
	return a.Core < b.Core || (a.Core == b.Core && a.Addr < b.Addr)
}

// The LRU lists. OCF keeps two per class, clean and dirty lines
// (src/ocf_lru.c); every line enters its list at the head, and the more
// recently used half of a list is hot: a hit there does not move the line.
// Here a list is the lines of one class and dirtiness, ordered by Line.LRU
// (the head has the highest); entering the head is taking a new tick.
// internal/cachesim keeps the same lists linked.

// coldest orders lines least recently used first.
func coldest(a, b *Line) int {
	if a.LRU != b.LRU {
		return cmp.Compare(a.LRU, b.LRU)
	}
	if lessKey(a, b) {
		return -1
	}
	return 1
}

// hot says l is in the more recently used half of its list: fewer than
// n/2 of the list's n lines are more recent.
func (m *model) hot(l *Line) bool {
	n, newer := 0, 0
	for _, o := range m.all {
		if o.Class == l.Class && o.Dirty == l.Dirty {
			n++
			if o.LRU > l.LRU {
				newer++
			}
		}
	}
	return newer < n/2
}

// parts is the cache's classes as eviction sees them, in OCF's order: the
// configured ones, and removed ones that still hold lines.
func (m *model) parts() []cachesim.Part {
	var ps []cachesim.Part
	for _, cl := range m.c.Classes {
		ps = append(ps, cachesim.Part{ID: cl.ID, Priority: cl.Priority, Cap: m.capLines(cl.ID)})
	}
	for id, n := range m.perClass {
		if n > 0 && m.c.class(id) == nil {
			ps = append(ps, cachesim.Part{ID: id, Priority: 255, Removed: true, Cap: m.c.Lines})
		}
	}
	cachesim.EvictionOrder(ps)
	return ps
}

// space is the model as cachesim.MapLines sees it, while it maps the
// request in m.inFlight.
type space struct{ m *model }

func (s space) Lines(id int) uint64 { return s.m.perClass[id] }
func (s space) Free() uint64        { return s.m.free() }

func (s space) TakeFree(n uint64) uint64 {
	n = min(n, s.m.free())
	for range n {
		s.m.mapNext()
	}
	return n
}

// Evict evicts up to n clean lines of class id, least recently used first,
// none of the request's.
func (s space) Evict(id int, n uint64) uint64 {
	m := s.m
	var clean []*Line
	for _, l := range m.all {
		if l.Class == id && !l.Dirty && !m.locked(l) {
			clean = append(clean, l)
		}
	}
	slices.SortFunc(clean, coldest)
	n = min(n, uint64(len(clean)))
	for _, l := range clean[:n] {
		m.drop(l)
		m.mapNext()
	}
	return n
}

func (s space) Quota(id int) *int64 { return &s.m.quota[id] }

// mapNext maps the request's next missing core line to a free line, at the
// head of its class's clean list.
func (m *model) mapNext() {
	r := &m.inFlight
	for m.idx[lineKey{r.core, r.next}] != nil {
		r.next++
	}
	lb := m.lineBytes()
	l := &Line{Core: r.core, Addr: r.next, Class: r.class, LRU: m.tick(), Missing: cachesim.BlockMask(r.next, lb, r.next*lb, lb)}
	m.insert(l)
	r.mapped = append(r.mapped, l)
}

// cleanForEviction cleans the cachesim.EvictionCleanLines least recently
// used dirty lines of every class, as OCF does after a request it could not
// map; they join the clean lists in core line order (OCF's cleaner sorts
// them). Lines of a missing core cannot be cleaned.
func (m *model) cleanForEviction() {
	for _, cl := range m.c.Classes {
		var dirty []*Line
		for _, l := range m.all {
			if l.Class == cl.ID && l.Dirty && !m.stranded(l) {
				dirty = append(dirty, l)
			}
		}
		slices.SortFunc(dirty, coldest)
		dirty = dirty[:min(len(dirty), cachesim.EvictionCleanLines)]
		slices.SortFunc(dirty, func(a, b *Line) int {
			return cmp.Or(cmp.Compare(a.Core, b.Core), cmp.Compare(a.Addr, b.Addr))
		})
		for _, l := range dirty {
			m.clean(l)
		}
	}
}

func (m *model) tick() uint64 {
	m.c.Clock++
	return m.c.Clock
}

// submit runs one request on core k, classified by ev. It reports false when the
// request fails (the cache device failed and the request needed it).
func (m *model) submit(k *Core, ev *ioclass.Evaluator, req ioclass.IO) bool {
	req.CoreID = k.ID
	class := ev.Classify(req)
	if m.c.class(class) == nil {
		class = 0
	}
	cnt := k.stats(class)
	size := req.Size
	if req.Write {
		cnt.ExpWr += size
	} else {
		cnt.ExpRd += size
	}
	off := req.LBA * 512
	lb := m.lineBytes()
	first, last := off/lb, (off+size-1)/lb

	// Sequential cut-off: one stream per core.
	if off == k.StreamEnd && k.StreamBytes > 0 {
		k.StreamBytes += size
	} else {
		k.StreamBytes = size
	}
	k.StreamEnd = off + size

	cl := m.c.class(class)
	pt := false
	switch {
	case cl.MaxSize == 0, m.c.Mode == "pt":
		pt = true
	case k.SeqCutoffPolicy == "always" || (k.SeqCutoffPolicy == "full" && m.free() == 0):
		pt = k.StreamBytes >= k.SeqCutoffBytes
	}

	// A line is a hit only when the blocks the request touches hold data (OCF's
	// LOOKUP_HIT with valid sectors); a mapped line without them is a miss.
	var present []*Line
	hits := uint64(0)
	for a := first; a <= last; a++ {
		if l := m.idx[lineKey{k.ID, a}]; l != nil {
			present = append(present, l)
			if l.Missing&cachesim.BlockMask(a, lb, off, size) == 0 {
				hits++
			}
		}
	}
	n := last - first + 1

	if m.c.Failed && !pt {
		return m.submitFailed(cnt, req, hits, n)
	}
	if !pt {
		switch {
		case req.Write && m.c.Mode == "wa" && hits < n:
			pt = true // write-around: a write that is not a full hit bypasses the cache (and invalidates)
		case !req.Write && m.c.Mode == "wo":
			dirty := uint64(0)
			for _, l := range present {
				if l.Dirty {
					dirty++
				}
			}
			if dirty < n {
				pt = true // write-only: reads come from the core
			}
		}
	}
	if !pt && uint64(len(present)) < n {
		// Map the missing lines (cachesim.MapLines: free lines, then clean
		// lines of the classes OCF takes them from). If not all can be had,
		// OCF unmaps what it mapped, services the request in pass-through
		// and cleans dirty lines of every class for the requests after it.
		// The request's lines, held or just mapped, are locked against
		// eviction.
		r := &m.inFlight
		r.set, r.core, r.class, r.first, r.last, r.next, r.mapped = true, k.ID, class, first, last, first, r.mapped[:0]
		repart := uint64(0)
		for _, l := range present {
			if l.Class != class {
				repart++
			}
		}
		target := cachesim.Part{ID: class, Priority: cl.Priority, Cap: m.capLines(class)}
		if !cachesim.MapLines(space{m}, m.parts(), target, n-uint64(len(present)), repart) {
			for _, l := range r.mapped {
				m.drop(l)
			}
			m.cleanForEviction()
			pt = true
		}
		r.set = false
	}
	if !pt {
		// The lines the request found mapped become hot; the new ones
		// entered at the head already.
		for _, l := range present {
			if !m.hot(l) {
				l.LRU = m.tick()
			}
		}
	}

	if pt {
		if req.Write {
			cnt.WrPT++
			cnt.PTWr += size
			cnt.CoreWr += size
			// The write supersedes what the cache holds for those lines:
			// write dirty ones back first (never drop data), then invalidate.
			if !m.c.Failed {
				for a := first; a <= last; a++ {
					if l := m.idx[lineKey{k.ID, a}]; l != nil {
						m.clean(l)
						m.drop(l)
					}
				}
			}
		} else {
			cnt.RdPT++
			cnt.PTRd += size
			cnt.CoreRd += size
		}
		return true
	}

	// Serviced by the cache.
	missPart := func(total uint64) uint64 { return total * (n - hits) / n }
	if req.Write {
		cachesim.CountRequest(&cnt.Counters, true, hits, n)
		cnt.CacheWr += size
		lazy := m.c.Mode == "wb" || m.c.Mode == "wo"
		if !lazy {
			cnt.CoreWr += size
		}
		for a := first; a <= last; a++ {
			l := m.idx[lineKey{k.ID, a}]
			l.Missing &^= cachesim.BlockMask(a, lb, off, size)
			if l.Class != class {
				m.perClass[l.Class]--
				m.perClass[class]++
				l.Class = class
				l.LRU = m.tick() // the head of its new class's list
			}
			if lazy && !l.Dirty {
				l.Dirty, l.DirtyAt, l.LRU = true, m.now, m.tick() // the head of the dirty list
			} else if !lazy && l.Dirty {
				l.Dirty, l.DirtyAt, l.LRU = false, 0, m.tick()
			}
		}
		return true
	}
	cachesim.CountRequest(&cnt.Counters, false, hits, n)
	if hits == n {
		cnt.CacheRd += size
	} else {
		cnt.CoreRd += size
		cnt.CacheWr += missPart(size)
	}
	for a := first; a <= last; a++ {
		m.idx[lineKey{k.ID, a}].Missing &^= cachesim.BlockMask(a, lb, off, size) // a read miss fills what it read
	}
	return true
}

// flush writes back every dirty line of core (all active cores when core < 0;
// an inactive core's dirty lines stay, they cannot be written anywhere).
// It reports false when a dirty line could not be written back.
func (m *model) flush(core int) bool {
	ok := true
	for _, l := range m.sortedLines() {
		if (core >= 0 && l.Core != core) || (core < 0 && m.stranded(l)) {
			continue
		}
		if !m.clean(l) {
			ok = false
		}
	}
	return ok
}

// dropCore removes every line of a core; dirty ones are lost.
func (m *model) dropCore(core int) {
	for _, l := range m.sortedLines() {
		if l.Core == core {
			m.drop(l)
		}
	}
}

func (m *model) sortedLines() []*Line {
	out := make([]*Line, 0, len(m.all))
	for _, l := range m.all {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *Line) int {
		return cmp.Or(cmp.Compare(a.Core, b.Core), cmp.Compare(a.Addr, b.Addr))
	})
	return out
}

// dirtyLines counts dirty lines of a core (all when core < 0).
func dirtyLines(c *Cache, core int) uint64 {
	var n uint64
	for _, l := range c.Blocks {
		if l.Dirty && (core < 0 || l.Core == core) {
			n++
		}
	}
	return n
}

// submitFailed runs a request the cache would service on a cache whose device failed, as
// the real v26.03.2 module did with its device gone (docs/opencas-real-module.md): a write
// fails (OCF tries the cache device and counts a cache write error); a read that touches a
// line holding data fails (cache read error: the core's copy may be stale); a read of
// nothing cached is served from the core, and the fill of the cache that follows fails.
// Nothing is mapped or invalidated: the metadata cannot be written.
func (m *model) submitFailed(cnt *Counters, req ioclass.IO, hits, n uint64) bool {
	size := req.Size
	if req.Write {
		cachesim.CountRequest(&cnt.Counters, true, hits, n)
		cnt.CacheWr += size
		cnt.CacheErrWr++
		return false
	}
	cachesim.CountRequest(&cnt.Counters, false, hits, n)
	if hits == 0 {
		cnt.CoreRd += size
		cnt.CacheWr += size
		cnt.CacheErrWr++
		return true
	}
	cnt.CacheRd += size
	cnt.CacheErrRd++
	return false
}

// dirtyLines counts the cache's dirty lines.
func (m *model) dirtyLines() int {
	n := 0
	for _, l := range m.all {
		if l.Dirty {
			n++
		}
	}
	return n
}
