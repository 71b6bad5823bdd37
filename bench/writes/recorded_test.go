package writes

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

// recorded is the counters file of the run docs/benchmarks.md publishes (make bench-writes).
const recorded = "testdata/counters.json"

func readRecorded(t *testing.T) Counters {
	t.Helper()
	data, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", recorded, err)
	}
	return c
}

// near reports whether a and b agree to a relative 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestRecordedFigures replays the recorded run through the report and checks each figure
// against the counters it comes from.
func TestRecordedFigures(t *testing.T) {
	c := readRecorded(t)
	figs, err := Headline(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 5 || len(c.Runs) != 10 {
		t.Fatalf("%d workloads from %d runs; the run has 5 workloads on 2 layouts", len(figs), len(c.Runs))
	}
	for _, f := range figs {
		a, p := f.Alone, f.Prism
		if a.Layout != LayoutAlone || p.Layout != LayoutPrism || a.Workload != f.Workload || p.Workload != f.Workload {
			t.Fatalf("%s: paired %s/%s with %s/%s", f.Workload, a.Workload, a.Layout, p.Workload, p.Layout)
		}
		// Byte for byte: the same workload wrote the same client bytes on both layouts.
		if a.ClientBytes != p.ClientBytes {
			t.Errorf("%s: client wrote %d bytes alone and %d in Prism's layout", f.Workload, a.ClientBytes, p.ClientBytes)
		}
		if !near(f.AlonePerClient*float64(a.ClientBytes), float64(a.QLCBytes)) || !near(f.PrismPerClient*float64(p.ClientBytes), float64(p.QLCBytes)) {
			t.Errorf("%s: QLC per client byte %.4f / %.4f do not give back the QLC bytes", f.Workload, f.AlonePerClient, f.PrismPerClient)
		}
		if f.Alpha < 0 || f.Alpha > 1 || !near(f.Alpha*float64(p.FastBytes+p.QLCBytes), float64(p.FastBytes)) {
			t.Errorf("%s: α %.4f is not the fast device's share of %d + %d bytes", f.Workload, f.Alpha, p.FastBytes, p.QLCBytes)
		}
		if !near(f.Endurance*f.PrismPerClient, f.AlonePerClient) || !near(f.AloneDWPD*ReferenceQLCTB, f.AlonePerClient) || !near(f.PrismDWPD*ReferenceQLCTB, f.PrismPerClient) {
			t.Errorf("%s: endurance %.4f or DWPD %.4f/%.4f inconsistent with %.4f/%.4f", f.Workload, f.Endurance, f.AloneDWPD, f.PrismDWPD, f.AlonePerClient, f.PrismPerClient)
		}
		// Every client byte lands on QLC once at least: the data lives there.
		if f.AlonePerClient < 0.9 || f.PrismPerClient < 0.5 {
			t.Errorf("%s: QLC received %.2f / %.2f × the client bytes; the objects live there", f.Workload, f.AlonePerClient, f.PrismPerClient)
		}
		for _, r := range []Run{a, p} {
			checkClassRows(t, r)
		}
	}
}

// checkClassRows: the α shares of the classes that make up the OSD's writes add up to 1, and
// β × occupancy gives back the writes.
func checkClassRows(t *testing.T, r Run) {
	t.Helper()
	sum, shares := 0.0, 0
	for _, row := range ClassRows(r) {
		if row.Share != nil && !row.Breakdown {
			sum += *row.Share
			shares++
		}
		if row.Beta != nil && !near(*row.Beta*float64(*row.Occupied), float64(*row.Written)) {
			t.Errorf("%s on %s: %s: β %.4f × %d occupied ≠ %d written", r.Workload, r.Layout, row.Class, *row.Beta, *row.Occupied, *row.Written)
		}
		if want := map[bool]string{true: "QLC", false: "fast"}[r.Layout == LayoutAlone || row.Class == "objects" || row.Class == "spilled"]; row.Device != want {
			t.Errorf("%s on %s: %s on %s, want %s", r.Workload, r.Layout, row.Class, row.Device, want)
		}
	}
	if shares > 0 && !near(sum, 1) {
		t.Errorf("%s on %s: the classes' α shares add up to %.9f", r.Workload, r.Layout, sum)
	}
}

// TestRecordedSVG: the chart is well-formed XML with two bars per workload, each as long as
// its figure on one scale.
func TestRecordedSVG(t *testing.T) {
	c := readRecorded(t)
	figs, _ := Headline(c)
	var b strings.Builder
	if err := SVG(&b, c); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(b.String()))
	var widths []float64
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			var w, h string
			for _, a := range se.Attr {
				switch a.Name.Local {
				case "width":
					w = a.Value
				case "height":
					h = a.Value
				}
			}
			if h == "14" { // svgBarH - 2: a bar, not the background or the legend
				var px float64
				if _, err := fmt.Sscan(w, &px); err != nil {
					t.Fatalf("bar width %q: %v", w, err)
				}
				widths = append(widths, px)
			}
		}
	}
	if len(widths) != 2*len(figs) {
		t.Fatalf("%d bars for %d workloads", len(widths), len(figs))
	}
	top := 0.0
	for _, f := range figs {
		top = math.Max(top, math.Max(f.AlonePerClient, f.PrismPerClient))
	}
	for i, f := range figs {
		for j, v := range []float64{f.AlonePerClient, f.PrismPerClient} {
			if want := math.Round(v / top * svgBarMaxW); widths[2*i+j] != want {
				t.Errorf("%s bar %d: %v px, want %v (%.3f of %.3f)", f.Workload, j, widths[2*i+j], want, v, top)
			}
		}
	}
}

// TestRecordedHeadlineRow checks one row of the published headline against arithmetic done by
// hand on the recorded counters of the RGW-like workload:
//
//	client 805306368 bytes (98304 ops × 4096 × 2: object and omap) on each layout;
//	QLC alone: 2170060800 ÷ 805306368 = 2.6947 QLC bytes per client byte → 2.69;
//	Prism: QLC 402690048 ÷ 805306368 = 0.5000 → 0.50 (the objects' 4 KiB: the omap stays on
//	the fast device); fast 1790832640 ÷ 805306368 = 2.2238 → 2.22;
//	α = 1790832640 ÷ (1790832640 + 402690048) = 0.8164 → 81.6 %;
//	DWPD per TB/day on 7.68 TB: 2.6947 ÷ 7.68 = 0.351, 0.5000 ÷ 7.68 = 0.065;
//	endurance 2.6947 ÷ 0.5000 = 5.39×;
//	deepest level: the runs' levelFiles have files in L2 (p-0, p-1, p-2 on both layouts).
func TestRecordedHeadlineRow(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, readRecorded(t)); err != nil {
		t.Fatal(err)
	}
	want := "| RADOS 4 KiB objects + 4 KiB omap (RGW-like) | 768 / 768 | 2.69 | 0.50 | 2.22 | 81.6 % | 0.351 / 0.065 | 5.39× | L2 / L2 |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("the headline has no row\n%s\nin\n%s", want, b.String())
	}
}
