// Package writes turns the counters that `make bench-writes` records (test/ceph's
// TestBenchWrites: the kernel's write counters of each loop device, the client's own byte
// count, and Prism's per-OSD table before and after each workload) into the tables and the
// chart of docs/benchmarks.md. The recorder and the report share these types, so the report
// reads exactly what the run wrote.
package writes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Layouts of the run.
const (
	// LayoutAlone is the QLC drive alone: BlueFS, the WAL and the objects on one device,
	// Ceph's defaults.
	LayoutAlone = "qlc-alone"
	// LayoutPrism is Prism's layout: the DB (and WAL) on a planned slot of the fast device,
	// bluestore_min_alloc_size from the QLC drive's write unit.
	LayoutPrism = "prism"
)

// Counters is one recorded run.
type Counters struct {
	// Date is when the run started (RFC 3339, UTC).
	Date string `json:"date"`
	// Machine, Versions and Settings are free text for the note, key by key.
	Machine  map[string]string `json:"machine"`
	Versions map[string]string `json:"versions"`
	Settings map[string]string `json:"settings"`
	Runs     []Run             `json:"runs"`
}

// Run is one workload on one layout, between two readings of an idle OSD.
type Run struct {
	Workload string `json:"workload"`
	Layout   string `json:"layout"`
	Command  string `json:"command"`
	// ClientBytes is what the client says it wrote (fio's io_bytes, rados bench's writes ×
	// size × destinations); ClientReadBytes what it read (the mixed workload).
	ClientBytes     int64 `json:"clientBytes"`
	ClientReadBytes int64 `json:"clientReadBytes,omitempty"`
	// FastBytes and QLCBytes are the kernel's sectors written × 512 (/sys/block/<dev>/stat)
	// of the layout's fast device (0 without one) and QLC device, after minus before.
	FastBytes int64   `json:"fastBytes"`
	QLCBytes  int64   `json:"qlcBytes"`
	Seconds   float64 `json:"seconds"`
	// Load is /proc/loadavg's three averages after the run.
	Load string `json:"load"`
	// Classes are Prism's per-OSD table rows (internal/node/osdstats) around the run.
	Classes []Class `json:"classes"`
	// LevelFiles is each RocksDB column family's SST files per level after the run, from the
	// OSD log (LevelFiles); absent when the run did not record it.
	LevelFiles map[string][]int `json:"levelFiles,omitempty"`
}

// Class is one row of Prism's per-OSD table.
type Class struct {
	Class string `json:"class"`
	// Breakdown rows (RocksDB levels) split the sst row; they do not add to the total.
	Breakdown bool `json:"breakdown,omitempty"`
	// OccupiedBytes is the space the class held after the run (nil: unknown).
	OccupiedBytes *int64 `json:"occupiedBytes,omitempty"`
	// WrittenBytes is what the class wrote during the run (nil: unknown).
	WrittenBytes *int64 `json:"writtenBytes,omitempty"`
}

// Parse reads a counters file strictly: unknown fields, a layout Prism does not know, and
// negative or missing byte counts are errors that name the run and the field.
func Parse(data []byte) (Counters, error) {
	var c Counters
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Counters{}, fmt.Errorf("counters: %w", err)
	}
	if dec.More() {
		return Counters{}, errors.New("counters: data after the JSON document")
	}
	if len(c.Runs) == 0 {
		return Counters{}, errors.New("counters: runs: none")
	}
	seen := map[[2]string]bool{}
	for i, r := range c.Runs {
		at := fmt.Sprintf("counters: runs[%d] (%s on %s)", i, r.Workload, r.Layout)
		switch {
		case r.Workload == "":
			return Counters{}, fmt.Errorf("%s: workload: empty", at)
		case r.Layout != LayoutAlone && r.Layout != LayoutPrism:
			return Counters{}, fmt.Errorf("%s: layout: %q is neither %q nor %q", at, r.Layout, LayoutAlone, LayoutPrism)
		case r.ClientBytes <= 0:
			return Counters{}, fmt.Errorf("%s: clientBytes: %d, want > 0", at, r.ClientBytes)
		case r.ClientReadBytes < 0:
			return Counters{}, fmt.Errorf("%s: clientReadBytes: %d, want >= 0", at, r.ClientReadBytes)
		case r.FastBytes < 0:
			return Counters{}, fmt.Errorf("%s: fastBytes: %d, want >= 0", at, r.FastBytes)
		case r.QLCBytes < 0:
			return Counters{}, fmt.Errorf("%s: qlcBytes: %d, want >= 0", at, r.QLCBytes)
		case r.Layout == LayoutAlone && r.FastBytes != 0:
			return Counters{}, fmt.Errorf("%s: fastBytes: %d on the layout without a fast device", at, r.FastBytes)
		case seen[[2]string{r.Workload, r.Layout}]:
			return Counters{}, fmt.Errorf("%s: recorded twice", at)
		}
		seen[[2]string{r.Workload, r.Layout}] = true
		for cf, files := range r.LevelFiles {
			for l, n := range files {
				if n < 0 {
					return Counters{}, fmt.Errorf("%s: levelFiles[%q][%d]: %d, want >= 0", at, cf, l, n)
				}
			}
		}
		for j, cl := range r.Classes {
			switch {
			case cl.Class == "":
				return Counters{}, fmt.Errorf("%s: classes[%d]: class: empty", at, j)
			case cl.OccupiedBytes != nil && *cl.OccupiedBytes < 0:
				return Counters{}, fmt.Errorf("%s: classes[%d] (%s): occupiedBytes: %d, want >= 0", at, j, cl.Class, *cl.OccupiedBytes)
			case cl.WrittenBytes != nil && *cl.WrittenBytes < 0:
				return Counters{}, fmt.Errorf("%s: classes[%d] (%s): writtenBytes: %d, want >= 0", at, j, cl.Class, *cl.WrittenBytes)
			}
		}
	}
	return c, nil
}
