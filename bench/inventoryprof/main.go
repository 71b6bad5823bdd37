// Command inventoryprof runs inventory.Take in a loop inside one process and writes a CPU
// profile, so bench/run.sh can tell how much of `prism-agent inventory` is the inventory
// itself and how much is process start-up. With -once it prints one inventory as
// `prism-agent inventory -o json` does, from a binary that links only the inventory (not
// the controller-runtime client the agent's run command needs). It only reads, like the agent.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/inventorydoc"
	"github.com/prism-storage/prism/internal/node/inventory"
)

func main() {
	root := flag.String("host-root", "/", "host root, as prism-agent --host-root")
	includeLoop := flag.Bool("include-loop", true, "inventory loop devices too")
	n := flag.Int("n", 200, "inventories to take (at least 1)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the loop to this file")
	once := flag.Bool("once", false, "print one inventory as JSON and exit")
	wipefs := flag.Bool("wipefs", true, "run libblkid's probe, as prism-agent inventory does: in process when built with -tags libblkid, else one wipefs for the disks")
	flag.Parse()

	opts := inventory.Options{Host: sysfs.Host{Root: *root}, IncludeLoop: *includeLoop}
	if *wipefs {
		opts.Probe, opts.ProbeInProcess = hostexec.Local{}, true
	}
	rep, err := inventory.Take(context.Background(), opts) // warm-up; parses the drive database once
	if err != nil {
		fmt.Fprintln(os.Stderr, "inventoryprof:", err)
		os.Exit(1)
	}
	if *once {
		if err := inventorydoc.New("", *root, time.Now(), rep.Devices, rep.Warnings).WriteJSON(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "inventoryprof:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "inventoryprof:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "inventoryprof:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	*n = max(*n, 1)
	times := make([]time.Duration, 0, *n)
	for range *n {
		start := time.Now()
		if _, err := inventory.Take(context.Background(), opts); err != nil {
			fmt.Fprintln(os.Stderr, "inventoryprof:", err)
			os.Exit(1)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("in-process inventory.Take: %d devices, %d runs, median %.3f ms, min %.3f ms, max %.3f ms\n",
		len(rep.Devices), len(times), ms(times[len(times)/2]), ms(times[0]), ms(times[len(times)-1]))
}
