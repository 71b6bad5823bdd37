// Package drivedb maps the model string a block device reports (NVMe Identify
// MN, ATA IDENTIFY model, sysfs device/model) to a known drive family, its
// media and the Prism tier it belongs to.
//
// The data lives in drives.csv, embedded at build time. Each row names a
// model_pattern, a glob where '*' matches any run of characters and '?'
// exactly one. Patterns and models are compared case-insensitively after
// trimming, treating '_' as a space and collapsing runs of whitespace to one
// space (MatchKey), because drives pad their model fields with spaces and tools
// print them inconsistently (udev's ID_MODEL and by-id names turn spaces into
// underscores). NormalizeModel turns each source's string into one form first.
//
// Lookup never guesses: a model no row matches is unknown. Among matching
// rows it prefers, in order:
//  1. a row whose capacity_bytes is within ±10 % of the device size
//     (vendors reuse one model code for several capacities, and a namespace
//     is never exactly the nominal capacity);
//  2. a family-wide row (empty capacity_bytes).
//
// A capacity-specific row never matches a device of another size, and with a
// device size of 0 (unknown) only family-wide rows can match. Within the
// chosen group the most specific pattern wins: most literal characters, then
// fewest wildcards, then the earliest line, so the result is deterministic.
package drivedb

import (
	"bytes"
	_ "embed"
	"sync"
)

// Tier is the role a device can play in a hybrid layout.
type Tier string

const (
	TierFast     Tier = "Fast"     // 3D XPoint, SLC, SCM: high endurance
	TierCapacity Tier = "Capacity" // QLC: dense, low endurance
	TierOther    Tier = "Other"    // TLC/MLC, HDD, anything else
)

// Media is the storage medium of a drive family.
type Media string

const (
	Media3DXPoint Media = "3DXPoint"
	MediaSLC      Media = "SLC"
	MediaQLC      Media = "QLC"
	MediaTLC      Media = "TLC"
)

// tierOf is the only tier each medium may be filed under.
var tierOf = map[Media]Tier{
	Media3DXPoint: TierFast,
	MediaSLC:      TierFast,
	MediaQLC:      TierCapacity,
	MediaTLC:      TierOther,
}

// Entry is one row of the database.
type Entry struct {
	ModelPattern         string
	Vendor, Family       string
	Media                Media
	Tier                 Tier
	CapacityBytes        uint64  // 0 = any capacity
	RatedDWPD            float64 // 0 = unpublished
	RatedTBW             float64 // terabytes written; 0 = unpublished
	WarrantyYears        int     // 0 = unpublished
	IndirectionUnitBytes uint32  // 0 = unknown
	Source               string  // one or more URLs separated by spaces
	Notes                string
	Line                 int // line number in the CSV, for errors and traceability
}

// DB is a parsed, read-only drive database; it is safe for concurrent use.
type DB struct {
	rows []row
}

type row struct {
	Entry
	glob      []rune // normalised pattern
	literals  int    // characters that are not wildcards
	wildcards int
}

// maxModelLen bounds the work Lookup does; real model fields are 40 bytes
// (plus padding, hence the larger limit on the raw string).
const (
	maxModelLen    = 256
	maxRawModelLen = 4096
)

// capacityTolerance is the allowed deviation, as a fraction denominator, of
// the device size from a row's nominal capacity (10 => ±10 %).
const capacityTolerance = 10

//go:embed drives.csv
var drivesCSV []byte

var defaultDB = sync.OnceValue(func() *DB {
	db, err := Parse(bytes.NewReader(drivesCSV))
	if err != nil {
		// TestEmbeddedDatabaseParses keeps this from ever shipping.
		panic("drivedb: embedded drives.csv is broken: " + err.Error())
	}
	return db
})

// Default returns the embedded database, parsed once.
func Default() *DB { return defaultDB() }

// Entries returns a copy of all rows in file order.
func (db *DB) Entries() []Entry {
	if db == nil {
		return nil
	}
	out := make([]Entry, len(db.rows))
	for i := range db.rows {
		out[i] = db.rows[i].Entry
	}
	return out
}

// Lookup finds the row describing a drive that reports model and has
// sizeBytes of capacity. See the package comment for the matching rules.
func (db *DB) Lookup(model string, sizeBytes uint64) (Entry, bool) {
	if db == nil || len(model) > maxRawModelLen {
		return Entry{}, false
	}
	m := normalize(model)
	if m == "" || len(m) > maxModelLen {
		return Entry{}, false
	}
	s := []rune(m)
	var best *row
	bestGroup := 0
	for i := range db.rows {
		r := &db.rows[i]
		group, ok := capacityGroup(r.CapacityBytes, sizeBytes)
		if !ok || !globMatch(r.glob, s) {
			continue
		}
		if best == nil || group < bestGroup || (group == bestGroup && moreSpecific(r, best)) {
			best, bestGroup = r, group
		}
	}
	if best == nil {
		return Entry{}, false
	}
	return best.Entry, true
}

// capacityGroup ranks a row for a device size: 0 = capacity matches,
// 1 = family-wide row; ok is false when the row cannot apply.
func capacityGroup(capacity, size uint64) (group int, ok bool) {
	if capacity == 0 {
		return 1, true
	}
	if size == 0 {
		return 0, false
	}
	diff := size - capacity
	if size < capacity {
		diff = capacity - size
	}
	return 0, diff <= capacity/capacityTolerance
}

// moreSpecific reports whether a should win over b. Rows are visited in file
// order, so on a full tie the earlier line already held wins.
func moreSpecific(a, b *row) bool {
	if a.literals != b.literals {
		return a.literals > b.literals
	}
	return a.wildcards < b.wildcards
}

// normalize is MatchKey: patterns and models are compared in the same form.
func normalize(s string) string { return MatchKey(s) }

//go:generate go run ./internal/pciidsgen -in /usr/share/hwdata/pci.ids -status /var/lib/dpkg/status -out pciids_gen.go
