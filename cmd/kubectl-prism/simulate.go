package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prism-storage/prism/internal/bytesize"
	"github.com/prism-storage/prism/internal/cachesim"
	"github.com/prism-storage/prism/internal/ioclass"
)

// runSimulate replays a trace through the classifier and an Open CAS cache
// model at several fast-tier sizes: `kubectl prism simulate --trace F
// --fast-size 1%..20%`, or `--synthetic zipf` for a generated overwrite trace.
func runSimulate(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	traceFile := fs.String("trace", "", "a trace: tracefs text of block_bio_queue events, or a trace summary (JSON, like internal/ioclass/defaults/testdata/ceph-osd-trace.json)")
	synthetic := fs.String("synthetic", "", "zipf: generate a 4 KiB overwrite trace instead of reading one (see --volume, --ios, --theta)")
	policyFile := fs.String("policy", "", "a ClassificationPolicy manifest (default: Prism's Ceph OSD policy)")
	sizes := fs.String("fast-size", "1%..20%", "fast-tier sizes in percent of the QLC capacity: 5%, 1%..20%, 1%..20%/5, or a comma-separated list")
	capacity := fs.String("capacity", "", "QLC capacity (bytes, or with KiB/MiB/GiB/TiB); default: the summary's data device, or the synthetic volume")
	device := fs.String("device", "", "tracefs: only this disk's records, MAJOR:MINOR")
	lineSize := fs.String("line-size", "4KiB", "cache line size, 4KiB to 64KiB")
	mode := fs.String("mode", "wb", "cache mode: wb, wt or pt")
	seqPolicy := fs.String("seq-cutoff", "full", "sequential cut-off policy: full, always or never (threshold 1 MiB)")
	optimum := fs.Bool("optimum", true, "also compute the offline optimum per size (Belady's MIN over written lines)")
	volume := fs.String("volume", "64GiB", "zipf: the volume written (also the default capacity)")
	ios := fs.Uint64("ios", 10_000_000, "zipf: number of writes")
	theta := fs.Float64("theta", 0.99, "zipf: exponent, 0 < theta < 1")
	seed := fs.Uint64("seed", 1, "zipf: random seed")
	svg := fs.String("svg", "", "also write the curves as an SVG plot to this file")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "sizes replayed in parallel")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	percents, err := cachesim.Percents(*sizes)
	if err != nil {
		return err
	}
	lb, err := parseSize(*lineSize)
	if err != nil {
		return fmt.Errorf("--line-size: %w", err)
	}
	policy, cfg, err := compiledClassification(*policyFile)
	if err != nil {
		return err
	}
	ev, err := ioclass.NewEvaluator(cfg)
	if err != nil {
		return err
	}
	var capBytes uint64
	if *capacity != "" {
		if capBytes, err = parseSize(*capacity); err != nil {
			return fmt.Errorf("--capacity: %w", err)
		}
	}
	var src cachesim.Source
	var what string
	switch {
	case (*traceFile == "") == (*synthetic == ""):
		return fmt.Errorf("give exactly one of --trace FILE or --synthetic zipf")
	case *synthetic != "":
		if *synthetic != "zipf" {
			return fmt.Errorf("--synthetic %q: the generator is zipf", *synthetic)
		}
		vol, err := parseSize(*volume)
		if err != nil {
			return fmt.Errorf("--volume: %w", err)
		}
		z := &cachesim.Zipf{VolumeBytes: vol, BlockBytes: 4096, Theta: *theta, Count: *ios, Comm: "tp_osd_tp", Seed: *seed}
		if err := z.Start(); err != nil {
			return err
		}
		src = z
		if capBytes == 0 {
			capBytes = vol
		}
		what = fmt.Sprintf("synthetic: %d writes of 4 KiB from tp_osd_tp, zipf %.2f over %s (seed %d)", *ios, *theta, bytesize.IEC(int64(vol)), *seed)
	default:
		f, err := os.Open(*traceFile)
		if err != nil {
			return err
		}
		defer f.Close()
		dev := cachesim.DeviceFilter{}
		if *device != "" {
			if dev, err = cachesim.ParseDeviceFilter(*device); err != nil {
				return fmt.Errorf("--device: %w", err)
			}
		}
		s, summaryCap, err := cachesim.Open(f, dev)
		if err != nil {
			return fmt.Errorf("%s: %w", *traceFile, err)
		}
		src = s
		if capBytes == 0 {
			capBytes = summaryCap
		}
		if capBytes == 0 {
			return fmt.Errorf("--capacity is needed: a tracefs trace does not say how large the QLC device is")
		}
		what = "trace: " + *traceFile
	}
	start := time.Now()
	results, sum, err := cachesim.Run(src, ev, cfg, cachesim.Options{CapacityBytes: capBytes, Percents: percents, LineBytes: lb,
		Mode: cachesim.Mode(*mode), SeqCutoffPolicy: cachesim.SeqCutoff(*seqPolicy), Optimum: *optimum, Workers: *workers})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if ts, ok := src.(interface{ Devices() []string }); ok && *device == "" && len(ts.Devices()) > 1 {
		fmt.Fprintf(os.Stderr, "warning: the trace has several disks (%s) replayed as one; choose one with --device\n", strings.Join(ts.Devices(), ", "))
	}
	names := map[int]string{0: ioclass.UnclassifiedName}
	for _, c := range policy.Spec.Classes {
		names[int(c.ID)] = c.Name
	}
	writeReport(out, what, policy.Name, capBytes, lb, *mode, sum, results, names, elapsed)
	if *svg != "" {
		if err := os.WriteFile(*svg, []byte(plotSVG(results, policy.Name)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeReport prints the sizing table and the per-class β table as markdown.
func writeReport(out io.Writer, what, policy string, capBytes, lb uint64, mode string, sum cachesim.Summary,
	results []cachesim.SizeResult, names map[int]string, elapsed time.Duration) {
	distinct := ""
	if sum.DistinctLines > 0 {
		distinct = fmt.Sprintf(" to %d distinct lines", sum.DistinctLines)
	}
	fmt.Fprintf(out, "%s\npolicy %s; QLC capacity %s; %s lines, %s; %d IOs (%d writes, %d reads), %d line writes%s; replayed in %s\n\n",
		what, policy, bytesize.IEC(int64(capBytes)), bytesize.IEC(int64(lb)), mode, sum.IOs, sum.Writes, sum.Reads, sum.WrittenLines, distinct, elapsed.Round(time.Millisecond))
	fmt.Fprintln(out, "| fast tier | size | client writes | QLC writes | of which flushes | dirty at end | α | α incl. final flush | α optimum |")
	fmt.Fprintln(out, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range results {
		fmt.Fprintf(out, "| %s %% | %s | %s | %s | %s | %s | %s | %s | %s |\n", trimFloat(r.Percent), bytesize.IEC(int64(r.FastBytes)), bytesize.IEC(int64(r.ClientWrite)),
			bytesize.IEC(int64(r.UserQLCWrite+r.Flush)), bytesize.IEC(int64(r.Flush)), bytesize.IEC(int64(r.DirtyEnd)), pct(r.Alpha), pct(r.AlphaFlushed), pct(r.AlphaOpt))
	}
	// β per class that wrote.
	var ids []int
	if len(results) > 0 {
		for _, c := range results[0].Classes {
			if c.ClientWrite > 0 {
				ids = append(ids, c.ID)
			}
		}
	}
	if len(ids) == 0 {
		return
	}
	fmt.Fprintln(out, "\nβ per class (client write bytes ÷ mean occupancy; – when it held nothing):")
	fmt.Fprintln(out)
	header, rule := "| fast tier |", "| ---: |"
	for _, id := range ids {
		header += fmt.Sprintf(" %d %s (writes %s) |", id, names[id], bytesize.IEC(int64(results[0].Classes[slices.IndexFunc(results[0].Classes, func(c cachesim.ClassResult) bool { return c.ID == id })].ClientWrite)))
		rule += " ---: |"
	}
	fmt.Fprintln(out, header)
	fmt.Fprintln(out, rule)
	for _, r := range results {
		row := fmt.Sprintf("| %s %% |", trimFloat(r.Percent))
		for _, id := range ids {
			c := r.Classes[slices.IndexFunc(r.Classes, func(c cachesim.ClassResult) bool { return c.ID == id })]
			if c.MeanOccBytes == 0 {
				row += " – |"
			} else {
				row += fmt.Sprintf(" %.2f |", c.Beta)
			}
		}
		fmt.Fprintln(out, row)
	}
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*v)
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// parseSize reads bytes, optionally with a binary unit (KiB, MiB, GiB, TiB;
// K, M, G, T are the same).
func parseSize(s string) (uint64, error) {
	num := strings.TrimRight(s, "KMGTiBkmgtib")
	unit := strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(s[len(num):], "B"), "iB"))
	shift := map[string]uint{"": 0, "k": 10, "ki": 10, "m": 20, "mi": 20, "g": 30, "gi": 30, "t": 40, "ti": 40}
	sh, ok := shift[strings.TrimSuffix(unit, "b")]
	v, err := strconv.ParseUint(num, 10, 64)
	if !ok || err != nil || v == 0 || v > math.MaxUint64>>sh {
		return 0, fmt.Errorf("%q: want a positive number of bytes, optionally with KiB, MiB, GiB or TiB", s)
	}
	return v << sh, nil
}

// plotSVG draws α, α with the final flush, and the optimum against the
// fast-tier size.
func plotSVG(results []cachesim.SizeResult, policy string) string {
	const w, h, left, right, top, bottom = 640, 400, 60, 20, 40, 50
	maxX := 0.0
	for _, r := range results {
		maxX = max(maxX, r.Percent)
	}
	x := func(p float64) float64 { return left + (w-left-right)*p/maxX }
	y := func(a float64) float64 { return top + (h-top-bottom)*(1-a) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">QLC write reduction α against fast-tier size (policy %s)</text>`+"\n", left, policy)
	for a := 0.0; a <= 1.0001; a += 0.25 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.0f %%</text>`+"\n",
			left, w-right, y(a), y(a), left-6, y(a)+4, 100*a)
	}
	for _, r := range results {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(r.Percent), h-bottom+16, trimFloat(r.Percent))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">fast tier, %% of QLC capacity</text>`+"\n", (w+left)/2, h-12)
	series := []struct {
		name, color string
		v           func(cachesim.SizeResult) float64
	}{
		{"α (end of trace)", "#1f77b4", func(r cachesim.SizeResult) float64 { return r.Alpha }},
		{"α incl. final flush", "#ff7f0e", func(r cachesim.SizeResult) float64 { return r.AlphaFlushed }},
		{"optimum (Belady)", "#2ca02c", func(r cachesim.SizeResult) float64 { return r.AlphaOpt }},
	}
	for i, s := range series {
		var pts []string
		for _, r := range results {
			if v := s.v(r); !math.IsNaN(v) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(r.Percent), y(max(v, 0))))
			}
		}
		if len(pts) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="3" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			left+10, top+10+16*i, s.color, left+28, top+15+16*i, s.name)
	}
	b.WriteString("</svg>\n")
	return b.String()
}
