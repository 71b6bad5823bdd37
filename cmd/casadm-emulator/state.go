package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/prism-storage/prism/internal/cachesim"
	"github.com/prism-storage/prism/internal/fsutil"
)

// StateEnv names the JSON file that holds the emulator's whole world: the
// block devices it pretends exist, the running caches and what each cache
// device carries after a stop.
const StateEnv = "CASADM_EMULATOR_STATE"

// NowEnv fixes the emulator's clock (unix seconds) so "Dirty for" is
// reproducible in tests; without it the wall clock is used.
const NowEnv = "CASADM_EMULATOR_NOW"

// State is the emulated host: devices and the cas_cache "kernel".
type State struct {
	// Devices are the block devices the emulator knows, by /dev/disk/by-id path.
	Devices map[string]*Device `json:"devices"`
	// Caches are the running cache instances, by ascending id.
	Caches []*Cache `json:"caches"`
	// LostDirtyBytes counts dirty data the emulator threw away (-R -f,
	// -T -n followed by --force, --remove-inactive -f, ...): tests assert
	// it stays 0 when nothing was allowed to drop data.
	LostDirtyBytes uint64 `json:"lostDirtyBytes"`
}

// Device is one block device of the emulated host.
type Device struct {
	// Path is the /dev/disk/by-id link casadm must be given.
	Path string `json:"path"`
	// Kernel is the kernel name the link resolves to (/dev/nvme0n1p3);
	// "" when it does not resolve (casadm then warns and shows the link).
	Kernel    string `json:"kernel,omitempty"`
	SizeBytes int64  `json:"sizeBytes"`
	// Filesystem is what `fsck -n` would find ("" for none).
	Filesystem string `json:"filesystem,omitempty"`
	// Partitions is set for a whole disk that carries partitions.
	Partitions bool `json:"partitions,omitempty"`
	// Metadata is the OCF metadata a stopped cache left on this device.
	Metadata *Cache `json:"metadata,omitempty"`
}

// Cache is a running cache instance (or, in Device.Metadata, one saved on
// its device).
type Cache struct {
	ID      int    `json:"id"`
	Device  string `json:"device"`
	Mode    string `json:"mode"`
	LineKiB int    `json:"lineKiB"`
	// Lines is the number of cache lines the device holds after metadata.
	Lines uint64 `json:"lines"`
	// Failed is set by --emulator-fail-cache: the cache device is gone; the
	// cache is "Not running" and IO that needs the device fails (model.submitFailed).
	Failed bool `json:"failed,omitempty"`
	// DirtyShutdown marks saved metadata of a cache stopped with -n.
	DirtyShutdown bool `json:"dirtyShutdown,omitempty"`

	Params  CacheParams `json:"params"`
	Classes []Class     `json:"classes"`
	Cores   []*Core     `json:"cores"`
	// Blocks are the occupied cache lines.
	Blocks []Line `json:"blocks,omitempty"`
	// Clock orders line accesses (LRU).
	Clock uint64 `json:"clock"`
	// EvictQuota is each class's eviction quota (cachesim.MapLines), by
	// class id; classes without one are left out.
	EvictQuota map[int]int64 `json:"evictQuota,omitempty"`
}

// CacheParams are the cache-wide runtime parameters (-X/-G).
type CacheParams struct {
	Cleaning                 string `json:"cleaning"`
	AlruWakeUp               uint64 `json:"alruWakeUp"`
	AlruStaleness            uint64 `json:"alruStaleness"`
	AlruFlushMaxBuffers      uint64 `json:"alruFlushMaxBuffers"`
	AlruActivityThreshold    uint64 `json:"alruActivityThreshold"`
	AlruDirtyRatioThreshold  uint64 `json:"alruDirtyRatioThreshold"`
	AlruDirtyRatioInertiaMiB uint64 `json:"alruDirtyRatioInertiaMiB"`
	AcpWakeUp                uint64 `json:"acpWakeUp"`
	AcpFlushMaxBuffers       uint64 `json:"acpFlushMaxBuffers"`
	Promotion                string `json:"promotion"`
	NhitThreshold            uint64 `json:"nhitThreshold"`
	NhitTrigger              uint64 `json:"nhitTrigger"`
	Prefetch                 string `json:"prefetch"`
	ReadaheadKiB             uint64 `json:"readaheadKiB"`
}

// defaultCacheParams are OCF's defaults (FORMATS.md §5).
func defaultCacheParams() CacheParams {
	return CacheParams{
		Cleaning: "alru", AlruWakeUp: 20, AlruStaleness: 120, AlruFlushMaxBuffers: 100,
		AlruActivityThreshold: 10000, AlruDirtyRatioThreshold: 100, AlruDirtyRatioInertiaMiB: 128,
		AcpWakeUp: 10, AcpFlushMaxBuffers: 128, Promotion: "always", NhitThreshold: 3, NhitTrigger: 80,
		Prefetch: "none", ReadaheadKiB: 64,
	}
}

// Class is one IO class (OCF partition).
type Class struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	// Priority is 0-255; -1 is pinned.
	Priority int `json:"priority"`
	// MaxSize is the cap in percent of the cache lines (0: pass-through).
	MaxSize int `json:"maxSize"`
}

// Core is one core device of a cache.
type Core struct {
	ID     int    `json:"id"`
	Device string `json:"device"`
	// Inactive cores were missing when the cache was loaded.
	Inactive bool `json:"inactive,omitempty"`

	SeqCutoffBytes    uint64 `json:"seqCutoffBytes"`
	SeqCutoffPolicy   string `json:"seqCutoffPolicy"`
	SeqPromotionCount uint64 `json:"seqPromotionCount"`
	SeqPromotionBytes uint64 `json:"seqPromotionBytes"`

	// Stats are the request and block counters per IO class id.
	Stats map[int]*Counters `json:"stats,omitempty"`
	// StreamEnd and StreamBytes track the current sequential stream
	// (sequential cut-off).
	StreamEnd   uint64 `json:"streamEnd,omitempty"`
	StreamBytes uint64 `json:"streamBytes,omitempty"`
}

// Default core parameters (OCF).
const (
	defaultSeqCutoffBytes = 1 << 20
	defaultSeqPolicy      = "full"
	defaultSeqPromoCount  = 8
)

// Line is one occupied cache line.
type Line struct {
	Core int `json:"core"`
	// Addr is the core line number (core offset / line size).
	Addr  uint64 `json:"addr"`
	Class int    `json:"class"`
	// Missing marks the line's 4 KiB blocks that hold no data yet (bit i: block i): a
	// request smaller than the line maps the whole line but fills only its own blocks, and
	// OCF counts a later request for the other blocks as a miss, not a hit.
	Missing uint16 `json:"missing,omitempty"`
	Dirty   bool   `json:"dirty,omitempty"`
	// DirtyAt is when the line became dirty (unix seconds).
	DirtyAt int64  `json:"dirtyAt,omitempty"`
	LRU     uint64 `json:"lru"`
}

// Counters are OCF's per-core, per-class statistics: requests and bytes, as the simulator
// counts them (cachesim.Counters: the exported object's user IO, what of it reaches the core
// device, the cache device, pass-through, the cleaner's), and the failed IO the emulator's
// fault injection adds. The embedded counters keep their JSON names in the state file.
type Counters struct {
	cachesim.Counters
	CacheErrRd, CacheErrWr uint64
	CoreErrRd, CoreErrWr   uint64
}

func (c *Counters) add(o *Counters) {
	c.Counters.Add(&o.Counters)
	c.CacheErrRd += o.CacheErrRd
	c.CacheErrWr += o.CacheErrWr
	c.CoreErrRd += o.CoreErrRd
	c.CoreErrWr += o.CoreErrWr
}

// stats returns the counters of a class on a core, creating them.
func (k *Core) stats(class int) *Counters {
	if k.Stats == nil {
		k.Stats = map[int]*Counters{}
	}
	c := k.Stats[class]
	if c == nil {
		c = &Counters{}
		k.Stats[class] = c
	}
	return c
}

func (s *State) cache(id int) *Cache {
	for _, c := range s.Caches {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (c *Cache) core(id int) *Core {
	for _, k := range c.Cores {
		if k.ID == id {
			return k
		}
	}
	return nil
}

func (c *Cache) class(id int) *Class {
	for i := range c.Classes {
		if c.Classes[i].ID == id {
			return &c.Classes[i]
		}
	}
	return nil
}

func (s *State) addCache(c *Cache) {
	s.Caches = append(s.Caches, c)
	slices.SortFunc(s.Caches, func(a, b *Cache) int { return a.ID - b.ID })
}

func (s *State) removeCache(id int) {
	s.Caches = slices.DeleteFunc(s.Caches, func(c *Cache) bool { return c.ID == id })
}

// device finds a registered device by its by-id path or kernel name.
func (s *State) device(path string) *Device {
	if d := s.Devices[path]; d != nil {
		return d
	}
	for _, d := range s.Devices {
		if d.Kernel != "" && d.Kernel == path {
			return d
		}
	}
	return nil
}

// store is the state file, held under an exclusive flock for the whole
// command, so concurrent casadm calls see each other's changes in order.
type store struct {
	path string
	lock *os.File
}

func openStore(path string) (*store, *State, error) {
	if path == "" {
		return nil, nil, fmt.Errorf("%s is not set: the emulator keeps its state in that file", StateEnv)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return nil, nil, fmt.Errorf("locking %s: %w", path, err)
	}
	st := &State{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		lock.Close()
		return nil, nil, err
	case len(data) > 0:
		if err := json.Unmarshal(data, st); err != nil {
			lock.Close()
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if st.Devices == nil {
		st.Devices = map[string]*Device{}
	}
	return &store{path: path, lock: lock}, st, nil
}

// save writes the state atomically (temp file, rename) while locked.
func (s *store) save(st *State) error {
	data, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(s.path, data, 0o644)
}

func (s *store) close() { s.lock.Close() }
