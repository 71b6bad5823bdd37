// Command prism-agent is Prism's node agent. `inventory` prints a host's block devices with
// their tier and eligibility; `run` keeps the node's StorageNode status current and carries
// out the plan in its spec (GPT partitions on the fast devices); `trace` records a block trace
// of one device for the sizing simulator; `osds` prints the per-OSD table once.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/prism-storage/prism/internal/host/cephdaemon"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `prism-agent: Prism's node agent.

Usage:
  prism-agent inventory [--host-root DIR] [-o json|table]   print this host's devices, tiers and eligibility (read-only)
  prism-agent run --node-name NAME [--host-root DIR]         keep the node's StorageNode status current and partition
                                                              its fast devices as spec.plan says (only in mode Apply)
  prism-agent cache-check [--policy FILE [--load-into-cache N]] parse every casadm output the agent uses with Prism's
                                                              parsers (on a node with Open CAS; read-only unless
                                                              --load-into-cache)
  prism-agent trace --device D --duration T [-o FILE]    record the bios queued to one block device (tracefs,
                                                              read-only) as a trace for kubectl prism simulate
  prism-agent osds [--host-root DIR] [-o json|table]       read every OSD admin socket once: Prism's per-OSD table
                                                              (each class's bytes held and written; read-only)
  prism-agent version

Run "prism-agent <command> -h" for a command's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "inventory":
		oneShotGC()
		err = runInventory(os.Args[2:], os.Stdout, os.Stderr)
	case "run":
		err = runAgent(os.Args[2:])
	case "cache-check":
		err = runCacheCheck(os.Args[2:], os.Stdout)
	case "trace":
		err = runTrace(os.Args[2:], os.Stdout, os.Stderr)
	case "osds":
		err = runOSDs(os.Args[2:], cephdaemon.Socket{}, os.Stdout, os.Stderr)
	case "version":
		fmt.Println(version)
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "prism-agent: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "prism-agent %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// oneShotGC turns the garbage collector off up to oneShotHeapLimit for a command that
// allocates a few MiB and exits: the one collection that `inventory` triggered (its 4 MiB
// goal met by the signature readers' buffers) took 2-4 % of the command's CPU time on a 2-CPU
// VM (perf; docs/benchmarks.md) and freed nothing the process needed before exiting. A host
// with so many disks that the heap reaches the limit is collected as usual from there on.
func oneShotGC() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(oneShotHeapLimit)
}

// oneShotHeapLimit bounds a one-shot command's memory with the collector off.
const oneShotHeapLimit = 256 << 20
