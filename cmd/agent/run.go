package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/prism-storage/prism/internal/host/cephdaemon"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/lvm"
	"github.com/prism-storage/prism/internal/kube/serving"
	"github.com/prism-storage/prism/internal/node/agent"
	"github.com/prism-storage/prism/internal/node/agentclient"
	"github.com/prism-storage/prism/internal/node/exporter"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/internal/node/metricsauth"
	"github.com/prism-storage/prism/internal/node/opencas"
	"github.com/prism-storage/prism/internal/node/osdstats"
	"github.com/prism-storage/prism/internal/node/provision"
)

func runAgent(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var host hostFlags
	host.register(fs)
	nodeName := fs.String("node-name", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME, from the downward API)")
	period := fs.Duration("period", 5*time.Minute, "re-inventory this often even without udev events")
	heartbeat := fs.Duration("heartbeat", 30*time.Minute, "rewrite an unchanged status this often, so a stale agent shows")
	doProvision := fs.Bool("provision", true, "carry out spec.plan on the fast devices (the host changes only when spec.mode is Apply); false keeps the agent read-only")
	hostTools := fs.String("host-tools", "", "comma-separated tools to run in the host's mount namespace with nsenter (needs hostPID), e.g. casadm, which must match the host's Open CAS module")
	dbVolumes := fs.Bool("db-volumes", true, "make an LVM logical volume on each DB slot partition for the OSD's DB, which the Rook entry names (decision 0036: Ceph 20 loses a partition DB); runs the host's LVM with nsenter (needs hostPID)")
	manageCache := fs.Bool("cache", true, "run spec.plan.cache with casadm (Open CAS) once the partitions exist; false leaves caches alone")
	planPoll := fs.Duration("plan-poll", 10*time.Second, "read the StorageNode this often (one GET) to notice a new plan or mode; 0 waits for the next period")
	metricsAddr := fs.String("metrics-bind-address", ":9464", "serve Prometheus metrics here; 0 disables them")
	metricsSecure := fs.Bool("metrics-secure", true, "serve metrics over HTTPS to callers whose bearer token may get the non-resource URL /metrics (TokenReview and SubjectAccessReview); false serves plain HTTP to anyone")
	metricsCertDir := fs.String("metrics-cert-dir", "", "directory with tls.crt and tls.key for the metrics endpoint; empty makes a self-signed certificate")
	healthPeriod := fs.Duration("health-period", time.Minute, "read the devices' wear counters (SMART/log pages) this often")
	cephSocketDir := fs.String("ceph-socket-dir", osdstats.DefaultSocketDir, "read the OSDs' admin sockets in this host directory (under --host-root; Rook: <dataDirHostPath>/exporter) for the per-OSD table; empty turns it off")
	stateDir := fs.String("state-dir", "", "keep the wear history here (a hostPath) so forecasts survive restarts, and the records Prism writes before each pvcreate and cache start so that one cut short is resumed; empty keeps the history in memory and writes no records")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *nodeName == "" {
		return fmt.Errorf("--node-name (or $NODE_NAME) is required")
	}
	logf.SetLogger(newLogger(zapOpts))
	klog.SetLogger(logf.Log)
	ctx := logf.IntoContext(signals.SetupSignalHandler(), logf.Log.WithName("agent"))

	cfg, err := agentclient.Config()
	if err != nil {
		return err
	}
	c, err := agentclient.New(cfg, agent.FieldManager)
	if err != nil {
		return err
	}
	changes, err := agent.WatchUdev(ctx, filepath.Join(host.hostRoot, "run", "udev", "data"), 2*time.Second)
	if err != nil {
		return fmt.Errorf("watching udev: %w", err)
	}
	opts := host.options()
	opts.SignatureReaders = 1 // a background inventory: one 1.1 MiB buffer, not one per CPU
	latest := &exporter.LatestDevices{}
	var endurance *exporter.Exporter
	if *metricsAddr != "0" {
		endurance = &exporter.Exporter{Node: *nodeName, Collector: host.healthCollector()}
		if *stateDir != "" {
			endurance.StateFile, endurance.LegacyStateFile = exporter.StateFiles(*stateDir)
		}
	}
	var osds *osdstats.Collector
	if *cephSocketDir != "" && *metricsAddr != "0" {
		osds = &osdstats.Collector{Node: *nodeName, HostRoot: host.hostRoot, SocketDir: *cephSocketDir, Ask: cephdaemon.Socket{}}
	}
	p := &agent.Publisher{
		Client:    c,
		NodeName:  *nodeName,
		Inventory: backgroundInventory(opts, latest, endurance),
		Version:   version, Period: *period, Heartbeat: *heartbeat, Changes: changes,
		Events: c,
	}
	if endurance != nil {
		p.CollectErrors = endurance.CollectErrors
		p.Policy = endurance.Policy
	}
	if osds != nil {
		p.OSDs = osds.Summary
	}
	if *doProvision {
		// Every host tool runs through this executor; device paths are mapped under --host-root.
		// The state dir also keeps the record Prism writes before each pvcreate (decision 0039).
		runner := provision.Runner{Exec: hostexec.Local{}, HostRoot: host.hostRoot, Volumes: *dbVolumes, Proc: host.procs(), IntentDir: *stateDir}
		if *dbVolumes {
			runner.Exec = hostexec.InHostMountNamespace{Inner: hostexec.Local{}, Tools: lvm.Commands}
		}
		p.Actuator = &agent.Actuator{Provision: runner.Reconcile}
		p.PlanPoll = *planPoll
		if *manageCache {
			// The state dir keeps the record Prism writes before each cache start, too.
			caches := opencas.Runner{Exec: hostExec(*hostTools), HostRoot: host.hostRoot, IntentDir: *stateDir}
			p.Actuator.Cache = caches.ReconcileNode
		}
	}
	if endurance != nil {
		ep := exporter.Endpoint{Addr: *metricsAddr}
		if *metricsSecure {
			if ep.TLS, err = serving.TLSConfig(*metricsCertDir); err != nil {
				return err
			}
			ep.Guard = (&metricsauth.Filter{Reviewer: c}).Wrap
		}
		go func() {
			var extra []exporter.Polled
			if *doProvision && *manageCache {
				extra = append(extra, &opencas.Collector{Node: *nodeName, Exec: hostExec(*hostTools)})
			}
			if osds != nil {
				extra = append(extra, osds)
			}
			if err := exporter.Serve(ctx, ep, *healthPeriod, endurance, latest, extra...); err != nil {
				logf.Log.Error(err, "Metrics server stopped")
			}
		}()
	}
	logf.Log.Info("Starting agent", "node", *nodeName, "hostRoot", host.hostRoot, "provision", *doProvision, "planPoll", p.PlanPoll.String())
	return p.Run(ctx)
}

// hostExec is the executor for tools that may live on the host (casadm).
func hostExec(tools string) hostexec.Executor {
	if tools == "" {
		return hostexec.Local{}
	}
	return hostexec.InHostMountNamespace{Inner: hostexec.Local{}, Tools: strings.Split(tools, ",")}
}

// backgroundInventory takes the agent's periodic inventory, hands the devices to the
// metrics path and the endurance summaries to the StorageNode, then returns the memory
// the inventory used to the OS.
//
// Why the last step: an inventory is the agent's one burst of allocation (the signature
// reader's 1.1 MiB buffer, sysfs, udev and Identify parsing); Go's scavenger gives the
// pages it leaves free back slowly, so they stayed in the agent's RSS for most of the next
// period. A forced collection on a heap of a few MiB, every 5 minutes or udev change,
// costs about a millisecond (docs/benchmarks.md).
func backgroundInventory(opts inventory.Options, latest *exporter.LatestDevices, endurance *exporter.Exporter) func(context.Context) (inventory.Report, error) {
	debugOnce := onceEach(logf.Log.WithName("inventory").V(1))
	return func(ctx context.Context) (inventory.Report, error) {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		rep, err := inventory.Take(ctx, opts)
		for _, line := range rep.Debug {
			debugOnce(line)
		}
		if err == nil {
			latest.Set(rep.Devices)
			if endurance != nil {
				endurance.Inventoried(time.Now())
				for i := range rep.Devices {
					rep.Devices[i].Endurance = endurance.Summary(rep.Devices[i].Name)
				}
			}
		}
		debug.FreeOSMemory()
		return rep, err
	}
}

// onceEach logs each distinct message once per process, at the logger's level: facts about
// the host (no NVMe character devices under the host root) hold for the agent's whole life
// and are no news at every inventory.
func onceEach(log logr.Logger) func(msg string) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[msg] {
			seen[msg] = true
			log.Info(msg)
		}
	}
}
