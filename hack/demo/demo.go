package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/test/support/fixturehost"
	"github.com/prism-storage/prism/test/support/testenv"
)

const (
	scrapeInterval = 2 * time.Second
	healthPeriod   = 2 * time.Second
)

// demo is one run: what it started and what it must stop.
type demo struct {
	options
	env        *testenv.Env
	kubeconfig string
	nodes      []fixturehost.Node
	roots      map[string]string // host root by node
	agents     map[string]string // metrics address by node
	loops      []*loopDevice     // fast devices on loop devices (root only)
	detach     func()
	hosts      map[string]emulatedHost // casadm emulator state by node; nil without caches
	drives     []*simulatedDrive       // the simulated workload's drives
	promURL    string                  // "" without Prometheus
	promAddr   string                  // where Prometheus listens (a free port picked at start)
	pageAddr   string                  // where the endurance page listens
	policy     string

	bg     context.Context    // the demo's own goroutines run until it ends
	cancel context.CancelFunc // stops them
	wg     sync.WaitGroup
	procs  []*exec.Cmd
	log    *os.File
}

func (d *demo) caches() bool { return d.hosts != nil }

// setUp starts the control plane and builds the simulated nodes: host roots, loop-backed fast
// devices and casadm emulator states (as root), simulated past wear samples.
func (d *demo) setUp(ctx context.Context) error {
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	var err error
	if d.log, err = os.Create(filepath.Join(d.dir, "demo.log")); err != nil {
		return err
	}
	demoLog = d.log
	d.bin, _ = filepath.Abs(d.bin)
	say("Starting a local control plane (kube-apiserver + etcd built from the Go module proxy)...")
	if d.env, err = testenv.Start(); err != nil {
		return err
	}
	d.kubeconfig = filepath.Join(d.dir, "kubeconfig")
	cfg, err := d.env.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(d.kubeconfig, cfg, 0o600); err != nil {
		return err
	}
	repo := testenv.RepoRoot()
	if d.nodes, err = fixturehost.LoadAll(filepath.Join(repo, fixturehost.NodesDir)); err != nil {
		return err
	}
	if d.roots, err = fixturehost.BuildAll(d.nodes, filepath.Join(d.dir, "hosts"), filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
		return err
	}
	say("Simulating %d nodes from fixtures (the devices are not real; their model strings, sizes, identify data and log pages come from real drives):", len(d.nodes))
	// Free ports, picked now: Prometheus, the endurance page, one per agent.
	addrs, err := freeAddrs(2 + len(d.nodes))
	if err != nil {
		return err
	}
	d.promAddr, d.pageAddr = addrs[0], addrs[1]
	d.agents = map[string]string{}
	for i, n := range d.nodes {
		say("  %-22s %s", n.Name, n.Description)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}
		if err := d.env.Client.Create(ctx, node); err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
		d.agents[n.Name] = addrs[2+i]
	}
	if err := d.setUpCaches(ctx, repo); err != nil {
		return err
	}
	return d.setUpWorkload(ctx)
}

// setUpCaches backs the fast devices with loop devices and gives every node a casadm emulator
// state, or says why the demo runs without caches.
func (d *demo) setUpCaches(ctx context.Context, repo string) error {
	why := canUseLoops()
	if !d.useLoops {
		why = "--loops=false"
	}
	if why != "" {
		say("(no caches and no partitioning: %s. As root with losetup, partx, wipefs, blkid and sfdisk (sudo hack/install-deps.sh demo installs them), the fast devices are loop devices the agents partition, and caches run on the casadm emulator.)", why)
		return nil
	}
	var err error
	if d.loops, d.detach, err = attachFastDevices(ctx, d.nodes, d.roots, d.dir); err != nil {
		return err
	}
	for _, l := range d.loops {
		logf("%s/%s is %s (sparse file %s)", l.node, l.name, l.loop, l.file)
	}
	say("Each fast device is a sparse file on a real loop device (%d of them): the agents partition them (Prism's own GPT writer, checked by the real sfdisk, blkid and partx).", len(d.loops))
	emulator, err := buildEmulator(ctx, d.bin, repo)
	if err != nil {
		return err
	}
	d.hosts = map[string]emulatedHost{}
	for _, n := range d.nodes {
		h := emulatedHost{casadm: filepath.Join(emulator, "casadm"), state: filepath.Join(d.dir, "casadm", n.Name+".json")}
		if err := os.MkdirAll(filepath.Dir(h.state), 0o755); err != nil {
			return err
		}
		_ = os.Remove(h.state)
		if err := h.addDisks(ctx, n, d.roots[n.Name]); err != nil {
			return err
		}
		d.hosts[n.Name] = h
	}
	say("Caches run on the casadm EMULATOR (cmd/casadm-emulator, first on each agent's PATH as casadm), not on Open CAS: its kernel module cannot load here.")
	return nil
}

// startProcesses starts Prometheus (when installed), the operator and one agent per node.
func (d *demo) startProcesses(ctx context.Context) error {
	pctx := ctx
	operatorArgs := []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}
	if prom, err := exec.LookPath("prometheus"); err == nil {
		cfgFile, err := prometheusConfig(d.dir, d.agents, scrapeInterval)
		if err != nil {
			return err
		}
		tsdb := filepath.Join(d.dir, "prometheus")
		_ = os.RemoveAll(tsdb)
		if err := d.spawn(pctx, "", "prometheus", prom, nil, "--config.file="+cfgFile, "--storage.tsdb.path="+tsdb,
			"--web.listen-address="+d.promAddr); err != nil {
			return err
		}
		d.promURL = "http://" + d.promAddr
		operatorArgs = append(operatorArgs, "--prometheus-url="+d.promURL, "--endurance-page-address="+d.pageAddr)
	} else {
		say("(prometheus is not installed: no endurance page; `sudo hack/install-deps.sh demo` adds it)")
	}
	if err := d.spawn(pctx, d.kubeconfig, "operator", filepath.Join(d.bin, "prism-manager"), nil, operatorArgs...); err != nil {
		return err
	}
	for _, n := range d.nodes {
		root := d.roots[n.Name]
		args := []string{"run", "--node-name=" + n.Name, "--host-root=" + root, "--identify-dir=" + filepath.Join(root, "identify"),
			"--logs-dir=" + filepath.Join(root, "logs"), "--period=10s", "--metrics-bind-address=" + d.agents[n.Name],
			// The demo's Prometheus scrapes plain HTTP on loopback; the chart serves HTTPS to
			// tokens allowed to get /metrics (decision 0048).
			"--metrics-secure=false",
			"--health-period=" + healthPeriod.String(), "--state-dir=" + stateDir(d.dir, n.Name),
			// The agents are the demo's children: the processes that started the demo did not
			// open its loops, and a sandbox's supervisor among them may hide its files even from
			// root, which would fail every look for processes holding a device open.
			"--ignore-ancestor-processes"}
		var env []string
		if h, ok := d.hosts[n.Name]; ok {
			// Fast devices are loop devices: the agent partitions them and runs the caches,
			// with the casadm emulator as casadm.
			args = append(args, "--provision=true", "--cache=true", "--plan-poll=1s")
			env = h.env()
		} else {
			// Fast devices are files: inventory, plan and metrics, but no partitioning.
			args = append(args, "--provision=false")
		}
		if err := d.spawn(pctx, d.kubeconfig, "agent-"+n.Name, filepath.Join(d.bin, "prism-agent"), env, args...); err != nil {
			return err
		}
	}
	return nil
}

func stateDir(dir, node string) string { return filepath.Join(dir, "state", node) }

func (d *demo) spawn(ctx context.Context, kubeconfig, name, path string, env []string, args ...string) error {
	cmd, err := start(ctx, d.dir, kubeconfig, name, path, env, args...)
	if err != nil {
		return err
	}
	d.procs = append(d.procs, cmd)
	return nil
}

// applyPolicies creates the CephCluster and the sample ClassificationPolicy and
// HybridStoragePolicy once every agent has published its inventory, and waits for the operator.
func (d *demo) applyPolicies(ctx context.Context) error {
	c := d.env.Client
	if err := waitFor(ctx, 60*time.Second, func() bool {
		list := &prismv1.StorageNodeList{}
		return c.List(ctx, list) == nil && inventoried(list.Items) == len(d.nodes)
	}); err != nil {
		return fmt.Errorf("waiting for the agents to publish their inventories (logs in %s): %w", d.dir, err)
	}
	if err := createCephCluster(ctx, c); err != nil {
		return err
	}
	if err := createPageReader(ctx, c); err != nil {
		return err
	}
	classes, err := applySample(ctx, c, "classificationpolicy-ceph-osd.yaml")
	if err != nil {
		return err
	}
	if d.policy, err = applySample(ctx, c, "hybridstoragepolicy-writeback.yaml"); err != nil {
		return err
	}
	say("Applied config/samples/classificationpolicy-ceph-osd.yaml (ClassificationPolicy %s, Prism's default IO classes for Ceph OSDs)", classes)
	say("    and config/samples/hybridstoragepolicy-writeback.yaml (policy %s: DB slots and a write-back cache on each fast device).", d.policy)
	return waitFor(ctx, 60*time.Second, func() bool {
		p := &prismv1.HybridStoragePolicy{}
		return c.Get(ctx, client.ObjectKey{Name: d.policy}, p) == nil && p.Status.ObservedGeneration == p.Generation &&
			p.Generation > 0 && len(p.Status.Nodes) == len(d.nodes)
	})
}

func inventoried(nodes []prismv1.StorageNode) int {
	n := 0
	for _, sn := range nodes {
		if sn.Status.LastInventoryTime != nil {
			n++
		}
	}
	return n
}

// goroutine runs f until the demo stops.
func (d *demo) goroutine(ctx context.Context, f func(ctx context.Context)) {
	if d.cancel == nil {
		ctx, d.cancel = context.WithCancel(ctx)
		d.bg = ctx
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f(d.bg)
	}()
}

// stop ends the demo's goroutines and processes and detaches the loop devices.
func (d *demo) stop() {
	if d.cancel != nil {
		d.cancel()
	}
	d.wg.Wait()
	for _, p := range d.procs {
		if p.Process != nil {
			_ = p.Process.Signal(syscall.SIGTERM)
			_ = p.Wait()
		}
	}
	if d.detach != nil {
		d.detach()
	}
	if d.env != nil {
		_ = d.env.Stop()
	}
	if d.log != nil {
		d.log.Close()
	}
}

// logf writes to DIR/demo.log: what the demo itself did, for reading after a run.
var demoLog *os.File

func logf(format string, args ...any) {
	if demoLog != nil {
		fmt.Fprintf(demoLog, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}
}
