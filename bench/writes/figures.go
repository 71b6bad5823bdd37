package writes

import (
	"fmt"
	"math"
)

// ReferenceQLCTB is the QLC drive the DWPD figures are for: the seeds' Intel D5-P4320,
// 7.68 TB. A drive of C TB spends QLCPerClient ÷ C DWPD per TB/day of client writes.
const ReferenceQLCTB = 7.68

// Figures are one workload's headline: both layouts' runs side by side.
type Figures struct {
	Workload     string
	Alone, Prism Run
	// AlonePerClient and PrismPerClient are QLC bytes per client byte.
	AlonePerClient, PrismPerClient float64
	// Alpha is the share of Prism's device writes the fast device took: what it kept off QLC.
	Alpha float64
	// FastPerClient is fast-device bytes per client byte in Prism's layout.
	FastPerClient float64
	// AloneDWPD and PrismDWPD are the reference QLC drive's drive writes per day for each
	// TB/day of client writes.
	AloneDWPD, PrismDWPD float64
	// Endurance is how many times longer the QLC drive lasts in Prism's layout under the same
	// client writes: AlonePerClient ÷ PrismPerClient (the seeds' "O+Q vs. QLC").
	Endurance float64
}

// Headline pairs each workload's two runs, in the order the workloads ran. A workload that
// ran on one layout only is an error naming it.
func Headline(c Counters) ([]Figures, error) {
	var order []string
	runs := map[string]map[string]Run{}
	for _, r := range c.Runs {
		if runs[r.Workload] == nil {
			runs[r.Workload] = map[string]Run{}
			order = append(order, r.Workload)
		}
		runs[r.Workload][r.Layout] = r
	}
	var out []Figures
	for _, w := range order {
		a, okA := runs[w][LayoutAlone]
		p, okP := runs[w][LayoutPrism]
		if !okA || !okP {
			return nil, fmt.Errorf("workload %q: want a run on %s and on %s", w, LayoutAlone, LayoutPrism)
		}
		f := Figures{Workload: w, Alone: a, Prism: p,
			AlonePerClient: ratio(a.QLCBytes, a.ClientBytes), PrismPerClient: ratio(p.QLCBytes, p.ClientBytes),
			Alpha: ratio(p.FastBytes, p.FastBytes+p.QLCBytes), FastPerClient: ratio(p.FastBytes, p.ClientBytes)}
		f.AloneDWPD, f.PrismDWPD = f.AlonePerClient/ReferenceQLCTB, f.PrismPerClient/ReferenceQLCTB
		f.Endurance = f.AlonePerClient / f.PrismPerClient // +Inf when nothing reached QLC
		out = append(out, f)
	}
	return out, nil
}

// ratio is a ÷ b, NaN when b is 0.
func ratio(a, b int64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// ClassRow is one row in the seeds' shape: a class's occupancy, writes, α share (its part of
// the OSD's writes) and β (writes ÷ occupancy), and the device it lives on in the layout.
type ClassRow struct {
	Class     string
	Breakdown bool
	Device    string
	Occupied  *int64
	Written   *int64
	Share     *float64
	Beta      *float64
}

// ClassRows is a run's table. Shares are of the non-breakdown classes' writes, unknown when
// one of them is; β is unknown without both figures or with nothing occupied.
func ClassRows(r Run) []ClassRow {
	total, known := int64(0), true
	for _, c := range r.Classes {
		if c.Breakdown {
			continue
		}
		if c.WrittenBytes == nil {
			known = false
			continue
		}
		total += *c.WrittenBytes
	}
	var out []ClassRow
	for _, c := range r.Classes {
		row := ClassRow{Class: c.Class, Breakdown: c.Breakdown, Device: device(r.Layout, c.Class), Occupied: c.OccupiedBytes, Written: c.WrittenBytes}
		if c.WrittenBytes != nil && known && total > 0 {
			row.Share = f64(float64(*c.WrittenBytes) / float64(total))
		}
		if c.WrittenBytes != nil && c.OccupiedBytes != nil && *c.OccupiedBytes > 0 {
			row.Beta = f64(float64(*c.WrittenBytes) / float64(*c.OccupiedBytes))
		}
		out = append(out, row)
	}
	return out
}

// device is where a class of Prism's per-OSD table (internal/node/osdstats) lives: BlueFS's
// files on the DB slot in Prism's layout, everything on the QLC drive alone.
func device(layout, class string) string {
	if layout == LayoutAlone {
		return "QLC"
	}
	switch class {
	case "spilled", "objects":
		return "QLC"
	default:
		return "fast"
	}
}

func f64(v float64) *float64 { return &v }
