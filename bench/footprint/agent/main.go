// Command agent stands in for `prism-agent run` in bench/footprint/run.sh: it serves the
// node agent's endurance metrics for a fixture host root without a Kubernetes API.
//
// With -build it writes a fixture host root of -devices NVMe drives (test/support/fixturehost)
// whose recorded SMART pages alternate the Optane 900P, 660p, 980 PRO and DC P3700
// recordings under internal/host/nvme/testdata/logs, and exits. Without it, it serves the root the
// way cmd/agent/run.go does: inventory.Take (again every -period and on udev changes), and
// exporter.Serve, the agent's own metrics loop (Exporter.Poll every -health-period, promhttp
// on -listen with the exporter, the Go and the process collectors). It also sets up what
// `run` sets up around that (zap logger, klog, the udev watch and, with -kube-client, a
// client (internal/node/agentclient) that is never used: building one contacts no server), so that
// the process links and initialises what the agent does. What it leaves out is the agent's
// Kubernetes traffic: the StorageNode status patches and the plan poll (a GET every 10 s).
//
// With -seed-history it writes the wear history in -state-dir as an agent that has run that long
// holds it (full-size: 8 days, thinned as the agent thins it) and exits, so that a benchmark
// measures a long-running agent rather than one in its first minutes. -cpuprofile and
// -memprofile are for diagnosis.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/node/agent"
	"github.com/prism-storage/prism/internal/node/agentclient"
	"github.com/prism-storage/prism/internal/node/exporter"
	"github.com/prism-storage/prism/internal/node/health"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// drive is one of the drives with recorded SMART pages the fixture cycles through.
type drive struct {
	model, serialPrefix, firmware string
	size                          int64
	identify                      string // recorded Identify pages ("" when none were recorded)
	logs                          string // recorded log pages
}

// drives: models and firmware as the recorded Identify pages give them (sysfs shows the same
// strings); the P3700 has no recorded Identify, so the agent reads its model from sysfs only.
var drives = []drive{
	{"INTEL SSDPED1D280GA", "PHMB74660", "E2010325", 280065171456, "intel-optane-900p-ssdped1d280ga", "intel-optane-900p-ssdped1d280ga"},
	{"660p SSDPEKNW512G8 NVMe INTEL 512GB", "BTNH90000", "7050", 512110190592, "intel-660p-ssdpeknw512g8", "intel-660p-ssdpeknw512g8"},
	{"Samsung 980 PRO with Heatsink 1TB", "S6WSNJ0R1", "3B2QGXA7", 1000204886016, "samsung-980pro-heatsink-1tb", "samsung-980pro-heatsink-1tb"},
	{"INTEL SSDPEDMD400G4", "CVFT52340", "8DV10171", 400088457216, "", "intel-dc-p3700-ssdpedmd400g4"},
}

// node is the fixture: n NVMe namespaces nvme0n1 … nvme<n-1>n1, blank (eligible) drives.
func node(n int) fixturehost.Node {
	out := fixturehost.Node{Name: "footprint", Description: fmt.Sprintf("%d NVMe drives with recorded SMART pages", n)}
	for i := range n {
		d := drives[i%len(drives)]
		out.Devices = append(out.Devices, fixturehost.Device{
			Name:           fmt.Sprintf("nvme%dn1", i),
			Model:          d.model,
			Serial:         fmt.Sprintf("%s%03d", d.serialPrefix, i),
			Firmware:       d.firmware,
			Bus:            "nvme",
			SizeBytes:      d.size,
			Identify:       d.identify,
			Logs:           d.logs,
			SectorsWritten: int64(i+1) * 4096000,
			Source:         "bench/footprint: recorded SMART page " + d.logs,
		})
	}
	return out
}

func main() {
	fixture := flag.String("fixture", "", "fixture host root (required)")
	build := flag.Bool("build", false, "write the fixture host root and exit")
	devices := flag.Int("devices", 24, "with -build: NVMe devices in the fixture")
	repo := flag.String("repo", ".", "with -build: repository root (for internal/host/nvme/testdata)")
	listen := flag.String("listen", "127.0.0.1:9464", "serve /metrics here (prism-agent run --metrics-bind-address)")
	nodeName := flag.String("node-name", "footprint", "node label on the metrics")
	period := flag.Duration("period", 5*time.Minute, "re-inventory this often (prism-agent run --period)")
	healthPeriod := flag.Duration("health-period", time.Minute, "poll the wear counters this often (prism-agent run --health-period)")
	stateDir := flag.String("state-dir", "", "keep the wear history here (the chart passes --state-dir=/var/lib/prism)")
	kubeClient := flag.Bool("kube-client", true, "build (and never use) the Kubernetes client `run` builds")
	seed := flag.Duration("seed-history", 0, "with -state-dir: write the wear history a long-running agent has after this long (a sample every 5 min per device, at most 8 days kept) and exit")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file until the process is stopped (diagnosis only)")
	memprofile := flag.String("memprofile", "", "write a heap profile to this file when the process is stopped (diagnosis only)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *fixture == "" {
		fmt.Fprintln(os.Stderr, "footprint agent: -fixture is required")
		os.Exit(2)
	}
	var err error
	switch {
	case *build:
		err = fixturehost.Build(node(*devices), *fixture, filepath.Join(*repo, fixturehost.IdentifyDir))
	case *seed > 0:
		err = seedHistory(*fixture, *stateDir, *seed)
	default:
		if *cpuprofile != "" {
			f, perr := os.Create(*cpuprofile)
			if perr == nil {
				perr = pprof.StartCPUProfile(f)
			}
			if perr != nil {
				fmt.Fprintln(os.Stderr, "footprint agent:", perr)
				os.Exit(1)
			}
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		err = serve(*fixture, *listen, *nodeName, *period, *healthPeriod, *stateDir, *kubeClient, zapOpts, *memprofile)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "footprint agent:", err)
		os.Exit(1)
	}
}

// writeHeapProfile writes what is live after a collection (go tool pprof -sample_index=inuse_space).
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	return errors.Join(pprof.WriteHeapProfile(f), f.Close())
}

func serve(root, addr, nodeName string, period, healthPeriod time.Duration, stateDir string, kubeClient bool, zapOpts zap.Options, memprofile string) error {
	logf.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	klog.SetLogger(logf.Log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.IntoContext(ctx, logf.Log.WithName("agent"))

	if kubeClient {
		// As run.go does after config.GetConfig(); the address is never dialled.
		if _, err := agentclient.New(&rest.Config{Host: "https://127.0.0.1:1"}, agent.FieldManager); err != nil {
			return fmt.Errorf("kube client: %w", err)
		}
	}
	changes, err := agent.WatchUdev(ctx, filepath.Join(root, "run", "udev", "data"), 2*time.Second)
	if err != nil {
		return fmt.Errorf("watching udev: %w", err)
	}
	// prism-agent run --host-root ROOT --identify-dir ROOT/identify --logs-dir ROOT/logs:
	// hostFlags.options() and hostFlags.healthCollector() in cmd/agent/inventory.go.
	opts := inventoryOptions(root)
	opts.SignatureReaders = 1 // as run.go
	endurance := &exporter.Exporter{Node: nodeName, Collector: healthCollector(root)}
	if stateDir != "" {
		endurance.StateFile, endurance.LegacyStateFile = exporter.StateFiles(stateDir)
	}
	latest := &exporter.LatestDevices{}
	take := func() {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		rep, err := inventory.Take(ctx, opts)
		if err != nil {
			logf.Log.Error(err, "Inventory failed")
			return
		}
		latest.Set(rep.Devices)
		for i := range rep.Devices { // what the Publisher's Inventory func adds to the status
			rep.Devices[i].Endurance = endurance.Summary(rep.Devices[i].Name)
		}
	}
	// The agent's first inventory comes from its first Sync; here it comes first, so the
	// first poll (and the first scrape) already has the devices.
	take()
	go func() {
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			case <-changes:
			}
			take()
		}
	}()
	logf.Log.Info("Serving fixture metrics", "hostRoot", root, "devices", len(latest.Get()), "address", addr)
	err = exporter.Serve(ctx, exporter.Endpoint{Addr: addr}, healthPeriod, endurance, latest)
	if err == nil && memprofile != "" {
		// While the exporter and the devices are still live, so that they are in the profile.
		err = writeHeapProfile(memprofile)
		runtime.KeepAlive(endurance)
		runtime.KeepAlive(latest)
	}
	return err
}

func inventoryOptions(root string) inventory.Options {
	return inventory.Options{Host: sysfs.Host{Root: root}, Identifier: nvme.RecordedIdentifier{Dir: filepath.Join(root, "identify")}}
}

func healthCollector(root string) health.Collector {
	return health.Collector{Host: sysfs.Host{Root: root}, Logs: nvme.RecordedLogReader{Dir: filepath.Join(root, "logs")}}
}

// seedHistory writes the wear history in stateDir as an agent that has polled the fixture for
// age would have it: a sample every 5 minutes (the history's MinInterval) per device, ending
// 5 minutes ago, thinned as the agent thins them, so the agent under test loads, projects and
// appends to a full-size history instead of a near-empty one. The recorded counters do not
// move, so the host bytes written are made to grow by half a drive write per day up to the
// recorded value.
func seedHistory(root, stateDir string, age time.Duration) error {
	if stateDir == "" {
		return errors.New("-seed-history needs -state-dir")
	}
	rep, err := inventory.Take(context.Background(), inventoryOptions(root))
	if err != nil {
		return err
	}
	h := exporter.NewHistory()
	now := time.Now()
	for _, r := range healthCollector(root).Read(context.Background(), rep.Devices) {
		last, ok := r.Sample()
		if !ok || r.StablePath == "" {
			continue
		}
		var size uint64
		for _, d := range rep.Devices {
			if d.Name == r.Device {
				size = uint64(max(d.SizeBytes, 0))
			}
		}
		perStep := size / 2 / 288 // half a drive write per day, 288 samples a day
		steps := int(age / h.MinInterval)
		for k := steps; k >= 1; k-- {
			s := last
			s.Time = now.Add(-time.Duration(k) * h.MinInterval)
			s.HostBytesWritten -= min(uint64(k)*perStep, last.HostBytesWritten)
			s.PowerOnHours -= min(uint64(time.Duration(k)*h.MinInterval/time.Hour), last.PowerOnHours)
			h.Add(r.StablePath, s)
		}
	}
	file, _ := exporter.StateFiles(stateDir)
	return h.WriteFile(file)
}
