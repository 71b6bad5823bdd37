package casadm

// Stats is one record of `casadm -P ... -o csv`: the whole cache (-P -i),
// one core (-j), or one IO class (-d, one record per class). Sections the
// filter (-f) left out, and columns the release does not print, are nil.
type Stats struct {
	// Exactly one of Cache, Core and Class is set when the conf section is
	// present (it carries the id); all are nil with -f usage,req,blk,err.
	Cache *CacheInfo
	Core  *CoreInfo
	Class *ClassInfo

	Usage    *Usage
	Requests *Requests
	Blocks   *Blocks
	Errors   *Errors

	// Other holds, by column title, the columns this package does not know
	// (a newer casadm); nil when there are none.
	Other map[string]string
}

// CacheInfo is the cache conf section.
type CacheInfo struct {
	ID int
	// SizeBlocks is the cache size in 4 KiB blocks; SizeGiB the same in GiB
	// as casadm rounds it.
	SizeBlocks uint64
	SizeGiB    float64
	// Device is the cache device (by-id link or resolved name).
	Device string
	// ExportedObject is "" for a cache (casadm prints "-").
	ExportedObject      string
	CoreDevices         int
	InactiveCoreDevices int
	// WritePolicy is the cache mode: wt, wb, wa, pt, wo.
	WritePolicy     string
	CleaningPolicy  string
	PromotionPolicy string
	// PrefetchPolicy is printed by master only ("" otherwise).
	PrefetchPolicy string
	LineSizeKiB    int
	// MetadataFootprintBytes is the metadata memory footprint, converted
	// from the column's unit (KiB, MiB, GiB...).
	MetadataFootprintBytes uint64
	// DirtyForSeconds is how long the oldest dirty data has waited;
	// DirtyFor is casadm's text ("Cache clean" when nothing is dirty).
	DirtyForSeconds uint64
	DirtyFor        string
	Status          Status
}

// CoreInfo is the core conf section (-j).
type CoreInfo struct {
	ID             int
	Device         string
	ExportedObject string
	// SizeBlocks is the core size in 4 KiB blocks.
	SizeBlocks      uint64
	SizeGiB         float64
	DirtyForSeconds uint64
	DirtyFor        string
	Status          Status
	// SeqCutoffThresholdKiB and SeqCutoffPolicy (always, full, never) are the
	// sequential cut-off settings.
	SeqCutoffThresholdKiB uint64
	SeqCutoffPolicy       string
}

// ClassInfo is the IO class conf section (-d).
type ClassInfo struct {
	ID int
	// Name is the class's rule text ("unclassified" for class 0).
	Name string
	// Pinned classes have no Priority.
	Pinned   bool
	Priority int
	// MaxSizePercent is the allocation cap in percent of the cache.
	MaxSizePercent int
}

// Counter is one statistic: Value in the column's unit (4 KiB blocks or
// requests) and the "[%]" column next to it. Percentages are relative to
// different totals per row and can exceed 100.
type Counter struct {
	Value   uint64
	Percent float64
}

// Usage is the usage section, in 4 KiB blocks whatever the cache line size.
// Free is absent for IO classes; Inactive* appear only for an incomplete cache.
type Usage struct {
	Occupancy, Free, Clean, Dirty                   *Counter
	InactiveOccupancy, InactiveClean, InactiveDirty *Counter
}

// Requests is the request section. Deferred counters appear from v26.03;
// PrefetchReadahead, Cleaner and User on master only.
type Requests struct {
	ReadHits, ReadDeferred, ReadPartialMisses, ReadFullMisses, ReadTotal      *Counter
	WriteHits, WriteDeferred, WritePartialMisses, WriteFullMisses, WriteTotal *Counter
	PassThroughReads, PassThroughWrites, Serviced                             *Counter
	PrefetchReadahead, Cleaner, User, Total                                   *Counter
}

// Blocks is the block section, in 4 KiB blocks. casadm titles cache-level
// rows "core(s)" / "exported object(s)"; both spellings land here. The
// prefetch and cleaner rows are printed by master only.
type Blocks struct {
	CoreReads, CoreWrites, CoreTotal                         *Counter
	CacheReads, CacheWrites, CacheTotal                      *Counter
	ExportedReads, ExportedWrites, ExportedTotal             *Counter
	PrefetchCoreReadsReadahead, PrefetchCacheWritesReadahead *Counter
	CleanerCacheReads, CleanerCoreWrites                     *Counter
}

// Errors is the error section (not printed for IO classes).
type Errors struct {
	CacheRead, CacheWrite, CacheTotal *Counter
	CoreRead, CoreWrite, CoreTotal    *Counter
	Total                             *Counter
}
