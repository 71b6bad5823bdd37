package blktrace

import (
	"cmp"
	"fmt"
	"slices"
)

// Summary is the committed evidence for a default policy: what reached an
// OSD's devices during each traced workload, with the versions it was
// measured on. testdata/ceph-osd-trace.json is one.
type Summary struct {
	Host      Host       `json:"host"`
	Workloads []Workload `json:"workloads"`
	// Capture is set by `prism-agent trace`: what it recorded and how.
	Capture *Capture `json:"capture,omitempty"`
}

// Host is what the trace was taken on.
type Host struct {
	Kernel string `json:"kernel"`
	Ceph   string `json:"ceph"`
	// Config holds the OSD settings that shape its IO, as the running OSD
	// reported them (bluestore_min_alloc_size, bluefs_buffered_io, ...).
	Config map[string]string `json:"config"`
	// DataBytes and DBBytes are the sizes of the traced devices.
	DataBytes int64 `json:"dataBytes"`
	DBBytes   int64 `json:"dbBytes"`
}

// Workload is one traced client workload.
type Workload struct {
	// Name is a stable key: rbd-4k-randwrite, rados-4m-write, compaction, ...
	Name string `json:"name"`
	// Command is what ran, with the cluster's config path elided.
	Command string `json:"command"`
	// ClientBytes is what the client wrote (0 for a compaction).
	ClientBytes int64 `json:"clientBytes"`
	// BlueFS are the OSD's bluefs counters before and after the workload.
	BlueFS BlueFSDelta `json:"bluefs"`
	// Data is the OSD's data device (the one Open CAS would cache); DB its
	// block.db partition, sectors relative to the partition's start.
	Data DeviceTrace `json:"data"`
	DB   DeviceTrace `json:"db"`
}

// BlueFSDelta are `perf dump bluefs` counters around a workload.
type BlueFSDelta struct {
	SlowUsedBefore    int64 `json:"slowUsedBefore"`
	SlowUsedAfter     int64 `json:"slowUsedAfter"`
	WrittenSlowBefore int64 `json:"writtenSlowBefore"`
	WrittenSlowAfter  int64 `json:"writtenSlowAfter"`
	DBUsedAfter       int64 `json:"dbUsedAfter"`
}

// DeviceTrace is every bio queued to one device during a workload: the OSD's
// grouped, other processes' summed by task.
type DeviceTrace struct {
	Groups []Group `json:"groups"`
	// Others are bios from tasks outside the OSD process (udev or LVM scans,
	// other tools on the machine, kernel writeback threads), by task name.
	Others []Row `json:"others,omitempty"`
	// Bios are every bio in queue order, when the recorder kept them
	// (`prism-agent trace` does; the committed OSD trace does not): a replay
	// then needs no reconstruction from the groups.
	Bios []Bio `json:"bios,omitempty"`
}

// Group is every bio with the same submitter, operation, size and region.
type Group struct {
	Comm   string `json:"comm"`
	RWBS   string `json:"rwbs"`
	Region string `json:"region"`
	// Size is each bio's size in bytes (what request_size compares).
	Size  uint64 `json:"size"`
	Count uint64 `json:"count"`
	// FirstSector and LastSector bound the bios' start sectors, relative to
	// the device (what lba compares).
	FirstSector uint64 `json:"firstSector"`
	LastSector  uint64 `json:"lastSector"`
	// Unaligned counts the bios that do not start on a 64 KiB boundary (the
	// QLC internal write unit Prism plans for).
	Unaligned uint64 `json:"unaligned64KiB"`
}

// Bytes is the group's total.
func (g Group) Bytes() uint64 { return g.Size * g.Count }

// Dir is the group's direction.
func (g Group) Dir() Direction { return DirOf(g.RWBS) }

// Device selects one device's records: those on the disk major:minor whose
// start sector lies in [Start, Start+Sectors); a partition's bios appear on
// its disk at the remapped sector.
type Device struct {
	Major, Minor   uint32
	Start, Sectors uint64
}

// Aggregate groups the records of one device, sectors made relative to its
// start. Records of process tgid (the OSD) are grouped; the others are
// summed by task name. tgid 0 takes every record as the OSD's.
func Aggregate(recs []Record, dev Device, tgid int) DeviceTrace {
	a := NewAggregator(dev, tgid)
	for _, r := range recs {
		a.Add(r)
	}
	return a.Result()
}

// Aggregator is Aggregate one record at a time, for a trace too long to hold:
// its memory is one entry per group.
type Aggregator struct {
	dev    Device
	tgid   int
	groups map[groupKey]*Group
	others map[groupKey]*Group
}

type groupKey struct {
	comm, rwbs, region string
	size               uint64
}

// NewAggregator groups the records of dev (see Aggregate).
func NewAggregator(dev Device, tgid int) *Aggregator {
	return &Aggregator{dev: dev, tgid: tgid, groups: map[groupKey]*Group{}, others: map[groupKey]*Group{}}
}

// In says a record is on the device: its disk, its start sector in the range.
func (d Device) In(r Record) bool {
	return r.Major == d.Major && r.Minor == d.Minor && r.Sector >= d.Start && r.Sector-d.Start < d.Sectors
}

// Add counts a record; false when it is not on the device.
func (a *Aggregator) Add(r Record) bool {
	if !a.dev.In(r) {
		return false
	}
	s := r.Sector - a.dev.Start
	if a.tgid != 0 && r.TGID != a.tgid {
		k := groupKey{comm: r.Comm, rwbs: r.RWBS, size: r.Bytes}
		g, ok := a.others[k]
		if !ok {
			g = &Group{Comm: r.Comm, RWBS: r.RWBS, Size: r.Bytes}
			a.others[k] = g
		}
		g.Count++
		return true
	}
	k := groupKey{r.Comm, r.RWBS, Region(s), r.Bytes}
	g, ok := a.groups[k]
	if !ok {
		g = &Group{Comm: r.Comm, RWBS: r.RWBS, Region: k.region, Size: r.Bytes, FirstSector: s, LastSector: s}
		a.groups[k] = g
	}
	g.Count++
	g.FirstSector, g.LastSector = min(g.FirstSector, s), max(g.LastSector, s)
	if s*sectorSize%(64*kib) != 0 {
		g.Unaligned++
	}
	return true
}

// Result is the device's trace so far: groups in a stable order, others by task.
func (a *Aggregator) Result() DeviceTrace {
	others := DeviceTrace{Groups: []Group{}}
	for _, g := range a.others {
		others.Groups = append(others.Groups, *g)
	}
	d := DeviceTrace{Groups: []Group{}, Others: others.ByComm()}
	for _, g := range a.groups {
		d.Groups = append(d.Groups, *g)
	}
	slices.SortFunc(d.Groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(a.Comm, b.Comm), cmp.Compare(a.RWBS, b.RWBS),
			cmp.Compare(a.FirstSector, b.FirstSector), cmp.Compare(a.Size, b.Size))
	})
	return d
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// Region names where a start sector lies: BlueStore's label block (and the
// BlueFS superblock on a DB device) at the start, the rest of the first MiB,
// then whole GiB.
func Region(sector uint64) string {
	b := sector * sectorSize
	switch {
	case b < 8*kib:
		return "0-8KiB"
	case b < mib:
		return "8KiB-1MiB"
	case b < gib:
		return "1MiB-1GiB"
	}
	return fmt.Sprintf("%d-%dGiB", b/gib, b/gib+1)
}

// sizeBuckets are inclusive upper bounds for request sizes, split where the
// policy splits: under 64 KiB (the QLC internal write unit Prism plans for)
// and from 64 KiB.
var sizeBuckets = []struct {
	max   uint64
	label string
}{
	{0, "0 (flush)"},
	{4 * kib, "<=4KiB"},
	{16 * kib, "4-16KiB"},
	{64*kib - 1, "16-<64KiB"},
	{mib - 1, "64KiB-<1MiB"},
	{4 * mib, "1-4MiB"},
}

// SizeBucket names the request-size bucket of a bio.
func SizeBucket(size uint64) string {
	for _, b := range sizeBuckets {
		if size <= b.max {
			return b.label
		}
	}
	return ">4MiB"
}

// Row is one line of a breakdown.
type Row struct {
	Key   string    `json:"key"`
	Dir   Direction `json:"dir"`
	Count uint64    `json:"count"`
	Bytes uint64    `json:"bytes"`
}

// By sums the groups by key and direction, largest bytes first (then count, key).
func (d DeviceTrace) By(key func(Group) string) []Row {
	type k struct {
		key string
		dir Direction
	}
	sums := map[k]*Row{}
	for _, g := range d.Groups {
		kk := k{key(g), g.Dir()}
		r, ok := sums[kk]
		if !ok {
			r = &Row{Key: kk.key, Dir: kk.dir}
			sums[kk] = r
		}
		r.Count += g.Count
		r.Bytes += g.Bytes()
	}
	rows := make([]Row, 0, len(sums))
	for _, r := range sums {
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Dir, b.Dir), cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key))
	})
	return rows
}

// Totals sums bytes and count per direction.
func (d DeviceTrace) Totals() map[Direction]Row {
	out := map[Direction]Row{}
	for _, r := range d.By(func(Group) string { return "" }) {
		out[r.Dir] = r
	}
	return out
}

// ByComm, BySize and ByRegion are the breakdowns the docs show.
func (d DeviceTrace) ByComm() []Row   { return d.By(func(g Group) string { return g.Comm }) }
func (d DeviceTrace) BySize() []Row   { return d.By(func(g Group) string { return SizeBucket(g.Size) }) }
func (d DeviceTrace) ByRegion() []Row { return d.By(func(g Group) string { return g.Region }) }

// Workload returns the named workload.
func (s *Summary) Workload(name string) (*Workload, bool) {
	for i := range s.Workloads {
		if s.Workloads[i].Name == name {
			return &s.Workloads[i], true
		}
	}
	return nil, false
}
