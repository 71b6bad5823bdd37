// Command pairtime runs two commands alternately (A B A B ...) and reports, for each, the
// wall time and the CPU time (user + system, of the process and the children it waited for,
// as wait4 returns it: what /usr/bin/time prints) of every run, and the ratio A/B taken pair
// by pair. On a shared machine whose load drifts, a pair sees the same load and two separate
// series do not, so the median of the per-pair ratios is the figure to read. Output of the
// commands is discarded. Commands are split on spaces and run without a shell; " ; " separates
// commands run one after the other as one run, their times summed (lsblk and then wipefs: what
// a script would run for the same answer).
//
//	pairtime -n 30 -warmup 3 -a 'bin/prism-agent inventory -o json' -b 'lsblk --json -O'
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

type sample struct{ wall, cpu time.Duration }

// run runs argv once. A run that exits non-zero still has its times, returned with the error;
// one that could not start has none.
func run(argv []string) (sample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		return sample{}, fmt.Errorf("%s: %w", argv[0], err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, fmt.Errorf("%s: no rusage", argv[0])
	}
	s := sample{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	if err != nil {
		return s, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return s, nil
}

// runAll runs each command in turn and sums their times; the first error is returned.
func runAll(cmds [][]string) (sample, error) {
	var total sample
	var first error
	for _, argv := range cmds {
		s, err := run(argv)
		total.wall += s.wall
		total.cpu += s.cpu
		if err != nil && first == nil {
			first = err
		}
	}
	return total, first
}

// commands splits a -a or -b value into its commands (" ; " between them) and their argv.
func commands(s string) [][]string {
	var out [][]string
	for _, c := range strings.Split(s, " ; ") {
		if argv := strings.Fields(c); len(argv) > 0 {
			out = append(out, argv)
		}
	}
	return out
}

// median and lowest of xs (sorted in place).
func stats(xs []float64) (med, lo float64) {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2], xs[0]
	}
	return (xs[n/2-1] + xs[n/2]) / 2, xs[0]
}

func main() {
	a := flag.String("a", "", "command A (split on spaces, no shell; \" ; \" between commands run in turn)")
	b := flag.String("b", "", "command B, as A")
	n := flag.Int("n", 30, "counted pairs")
	warmup := flag.Int("warmup", 3, "pairs run first and not counted")
	ignoreFail := flag.Bool("ignore-failure", false, "count runs that exit non-zero too (ceph-volume fails now and then when another user's loop device goes away during its run)")
	flag.Parse()
	argvA, argvB := commands(*a), commands(*b)
	if len(argvA) == 0 || len(argvB) == 0 || *n < 1 {
		fmt.Fprintln(os.Stderr, "pairtime: -a and -b are required, -n at least 1")
		os.Exit(2)
	}
	var aw, ac, bw, bc, rw, rc []float64
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for i := range *warmup + *n {
		sa, errA := runAll(argvA)
		sb, errB := runAll(argvB)
		for _, err := range []error{errA, errB} {
			if err != nil && !*ignoreFail {
				fmt.Fprintln(os.Stderr, "pairtime:", err)
				os.Exit(1)
			}
		}
		if i < *warmup || sa.wall == 0 || sb.wall == 0 || sb.cpu == 0 {
			continue
		}
		aw, ac, bw, bc = append(aw, ms(sa.wall)), append(ac, ms(sa.cpu)), append(bw, ms(sb.wall)), append(bc, ms(sb.cpu))
		rw, rc = append(rw, float64(sa.wall)/float64(sb.wall)), append(rc, float64(sa.cpu)/float64(sb.cpu))
	}
	line := func(name string, xs []float64, unit string) {
		med, lo := stats(xs)
		if unit == "x" { // ratios: three decimals, so that 0.027 (ceph-volume) keeps its 37x
			fmt.Printf("%-9s median %8.3fx  min %8.3fx\n", name, med, lo)
			return
		}
		fmt.Printf("%-9s median %8.2f%s  min %8.2f%s\n", name, med, unit, lo, unit)
	}
	fmt.Printf("A: %s\nB: %s\n%d pairs (after %d warm-up pairs)\n", *a, *b, len(rw), *warmup)
	line("A wall", aw, " ms")
	line("B wall", bw, " ms")
	line("A cpu", ac, " ms")
	line("B cpu", bc, " ms")
	line("A/B wall", rw, "x")
	line("A/B cpu", rc, "x")
}
