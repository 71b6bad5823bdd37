package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"4096": 4096, "4KiB": 4096, "4K": 4096, "4k": 4096, "64GiB": 64 << 30, "1TiB": 1 << 40, "2MB": 2 << 20} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "4X", "KiB", "1.5GiB", "99999999999TiB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): no error", in)
		}
	}
}

// TestSimulateCommittedTrace replays the committed Ceph trace: the table has
// one row per size, the large writes pass through (512 MiB of them reach QLC
// at every size), and the optimum is printed.
func TestSimulateCommittedTrace(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "curves.svg")
	var out bytes.Buffer
	err := runSimulate([]string{"--trace", "../../internal/ioclass/defaults/testdata/ceph-osd-trace.json", "--fast-size", "1%,5%", "--svg", svg}, &out)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"policy ceph-osd; QLC capacity 10.0 GiB", "| 1 % | 102.4 MiB | 715.6 MiB |", "| 5 % | 512.0 MiB | 715.6 MiB | 512.0 MiB |",
		"α optimum", "2 large-writes", "11 small-writes"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	plot, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(plot, []byte("<svg")) || bytes.Count(plot, []byte("<polyline")) != 3 {
		t.Errorf("SVG: %v\n%s", err, plot)
	}
}

func TestSimulateSyntheticAndErrors(t *testing.T) {
	var out bytes.Buffer
	if err := runSimulate([]string{"--synthetic", "zipf", "--volume", "64MiB", "--ios", "20000", "--fast-size", "5%,100%"}, &out); err != nil {
		t.Fatal(err)
	}
	// A fast tier the size of the volume never flushes: with the final
	// flush it writes each distinct line once, the optimum.
	var full string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "| 100 % |") {
			full = line
			break // the sizing table, not the β table below it
		}
	}
	cells := strings.Split(full, "|")
	if len(cells) < 10 || strings.TrimSpace(cells[5]) != "0 B" || cells[8] != cells[9] {
		t.Errorf("100 %% row %q: want no flush and α incl. final flush = optimum\n%s", full, out.String())
	}
	for _, args := range [][]string{
		{},
		{"--synthetic", "zipf", "--trace", "x"},
		{"--synthetic", "uniform"},
		{"--synthetic", "zipf", "--theta", "1.2"},
		{"--synthetic", "zipf", "--fast-size", "0%"},
		{"--synthetic", "zipf", "--line-size", "3KiB"},
		{"--trace", "/nonexistent"},
		{"--synthetic", "zipf", "extra"},
	} {
		if err := runSimulate(args, &bytes.Buffer{}); err == nil {
			t.Errorf("simulate %v: no error", args)
		}
	}
	// A tracefs trace needs --capacity.
	trace := filepath.Join(t.TempDir(), "t.txt")
	os.WriteFile(trace, []byte("osd-1 [000] ..... 1.0: block_bio_queue: 8,16 WS 2048 + 8 [tp_osd_tp]\n"), 0o644)
	if err := runSimulate([]string{"--trace", trace}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--capacity") {
		t.Errorf("tracefs without --capacity: %v", err)
	}
	out.Reset()
	if err := runSimulate([]string{"--trace", trace, "--capacity", "1GiB", "--fast-size", "1%"}, &out); err != nil || !strings.Contains(out.String(), "1 IOs (1 writes, 0 reads)") {
		t.Errorf("tracefs: %v\n%s", err, out.String())
	}
}
