// Command report turns a counters file recorded by `make bench-writes` into the tables of
// docs/benchmarks.md (markdown on stdout) and, with -svg, the chart.
//
//	go run ./bench/writes/report -in bench/writes/testdata/counters.json -svg docs/images/bench-writes.svg
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/prism-storage/prism/bench/writes"
)

func main() {
	in := flag.String("in", "", "the counters file (JSON) TestBenchWrites wrote")
	svg := flag.String("svg", "", "write the chart to this file")
	flag.Parse()
	if err := run(*in, *svg); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(in, svg string) error {
	if in == "" {
		return fmt.Errorf("-in: the counters file is required")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	c, err := writes.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := writes.Markdown(os.Stdout, c); err != nil {
		return err
	}
	if svg == "" {
		return nil
	}
	var b bytes.Buffer
	if err := writes.SVG(&b, c); err != nil {
		return err
	}
	return os.WriteFile(svg, b.Bytes(), 0o644)
}
