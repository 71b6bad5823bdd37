package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/smart"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/inventorydoc"
	"github.com/prism-storage/prism/internal/node/health"
	"github.com/prism-storage/prism/internal/node/inventory"
)

// hostFlags are the flags that say how to read the host, shared by inventory and run.
type hostFlags struct {
	hostRoot    string
	identifyDir string
	logsDir     string
	includeLoop bool
	noIdentify  bool
	// ignoreAncestors: see procs.
	ignoreAncestors bool
}

func (h *hostFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.hostRoot, "host-root", "/", "root of the host's /sys, /dev and /run/udev (a fixture tree works)")
	fs.StringVar(&h.identifyDir, "identify-dir", "", "read recorded NVMe Identify data from DIR/<controller>/ instead of the admin ioctl")
	fs.StringVar(&h.logsDir, "logs-dir", "", "read recorded NVMe log pages from DIR/<controller>/log-XX.bin and recorded smartctl reports from DIR/<disk>/smartctl.json instead of the admin ioctl and smartctl")
	fs.BoolVar(&h.includeLoop, "include-loop", false, "inventory loop devices too")
	fs.BoolVar(&h.noIdentify, "no-identify", false, "skip NVMe Identify (sysfs still gives model and serial)")
	fs.BoolVar(&h.ignoreAncestors, "ignore-ancestor-processes", false, "when looking for the processes that hold a device open, skip this process's ancestors (for tests in a sandbox whose supervisor hides its open files even from root; the agent looks at every process)")
}

// procs is where the processes that hold a device open are found: /proc, the host's in the
// agent's pod (hostPID). A scan that cannot look at a process fails, so a sandbox whose
// supervisor hides its files needs --ignore-ancestor-processes; if even the ancestors cannot
// be listed, none is skipped, and the scan fails on the hidden one.
func (h *hostFlags) procs() procfs.Proc {
	p := procfs.Proc{Dir: "/proc"}
	if h.ignoreAncestors {
		if q, err := p.IgnoringAncestors(); err == nil {
			return q
		}
	}
	return p
}

func (h *hostFlags) options() inventory.Options {
	// libblkid in process when the binary links it (make build, the image), else a wipefs child.
	procs := h.procs()
	opts := inventory.Options{Host: sysfs.Host{Root: h.hostRoot}, IncludeLoop: h.includeLoop, Probe: hostexec.Local{}, ProbeInProcess: true, Openers: &procs}
	switch {
	case h.noIdentify:
	case h.identifyDir != "":
		opts.Identifier = nvme.RecordedIdentifier{Dir: h.identifyDir}
	default:
		opts.Identifier = nvme.DeviceIdentifier{Root: h.hostRoot}
	}
	// The endurance group log (rated endurance) and ATA IDENTIFY (the full model of a SATA
	// drive seen only through a cut SCSI INQUIRY) come from recordings on fixture hosts.
	switch {
	case h.logsDir != "":
		opts.Logs = nvme.RecordedLogReader{Dir: h.logsDir}
		opts.ATA = smart.RecordedReader{Dir: h.logsDir}
	case !h.noIdentify:
		opts.Logs = nvme.DeviceLogReader{Root: h.hostRoot}
		opts.ATA = smart.Smartctl{Exec: hostexec.Local{Timeout: 30 * time.Second}, Root: h.hostRoot}
	}
	return opts
}

func runInventory(args []string, out, stderr io.Writer) error {
	fs := flag.NewFlagSet("inventory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var host hostFlags
	host.register(fs)
	output := fs.String("o", "table", "output format: json or table")
	node := fs.String("node-name", "", "node name to print in the JSON document")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	debugOut := fs.Bool("debug", false, "also print debug facts on stderr (e.g. a host root without NVMe character devices)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *output != "json" && *output != "table" {
		return fmt.Errorf("-o %q: want json or table", *output)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	rep, err := inventory.Take(ctx, host.options())
	if err != nil {
		return err
	}
	if *debugOut {
		for _, line := range rep.Debug {
			fmt.Fprintln(stderr, "debug:", line)
		}
	}
	doc := inventorydoc.New(*node, host.hostRoot, time.Now(), rep.Devices, rep.Warnings)
	if *output == "json" {
		return doc.WriteJSON(out)
	}
	return doc.WriteTable(out)
}

// healthCollector reads wear counters the same way the inventory reads identify data: the
// admin ioctl on a real host, recorded pages for fixtures.
func (h *hostFlags) healthCollector() health.Collector {
	c := health.Collector{Host: sysfs.Host{Root: h.hostRoot}, ATA: smart.Smartctl{Exec: hostexec.Local{Timeout: 30 * time.Second}, Root: h.hostRoot}}
	switch {
	case h.logsDir != "":
		// Fixture hosts have no drives: NVMe pages and SATA smartctl reports are recordings.
		c.Logs = nvme.RecordedLogReader{Dir: h.logsDir}
		c.ATA = smart.RecordedReader{Dir: h.logsDir}
	case !h.noIdentify:
		c.Logs = nvme.DeviceLogReader{Root: h.hostRoot}
	}
	return c
}
