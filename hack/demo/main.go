// Command demo runs Prism's main job on this machine: a real kube-apiserver and etcd, the
// operator, and one agent per simulated node (host roots built from test/fixtures/nodes),
// then applies the sample policy and shows what Prism decided. The nodes are simulated;
// the control plane, operator, agents and their inventory code are the real ones.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/fixturehost"
	"github.com/prism-storage/prism/internal/report"
	"github.com/prism-storage/prism/internal/testenv"
)

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "prism-demo"), "where the demo keeps its kubeconfig, host roots and logs")
	bin := flag.String("bin", "bin", "directory with prism-manager, prism-agent and kubectl-prism")
	once := flag.Bool("once", false, "exit once the policy is reconciled instead of running until interrupted")
	flag.Parse()
	if err := run(*dir, *bin, *once); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(dir, bin string, once bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin, _ = filepath.Abs(bin)
	say("Starting a local control plane (kube-apiserver + etcd built from the Go module proxy)...")
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg, err := env.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, cfg, 0o600); err != nil {
		return err
	}

	nodes, err := fixturehost.LoadAll(filepath.Join(testenv.RepoRoot(), fixturehost.NodesDir))
	if err != nil {
		return err
	}
	roots, err := fixturehost.BuildAll(nodes, filepath.Join(dir, "hosts"), filepath.Join(testenv.RepoRoot(), fixturehost.IdentifyDir))
	if err != nil {
		return err
	}
	say("Simulating %d nodes from fixtures (the devices are not real; their model strings, sizes and identify data come from real drives):", len(nodes))
	for _, n := range nodes {
		say("  %-22s %s", n.Name, n.Description)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}
		if err := env.Client.Create(ctx, node); err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}

	metricsAddrs := map[string]string{}
	for i, n := range nodes {
		metricsAddrs[n.Name] = fmt.Sprintf("127.0.0.1:%d", 19464+i)
	}
	// A real Prometheus (Debian's package) scrapes the agents; the operator serves the
	// endurance page from it. Without Prometheus the demo runs without the page.
	operatorArgs := []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}
	var procs []*exec.Cmd
	promAddr, pageAddr := "127.0.0.1:19090", "127.0.0.1:18082"
	if prom, err := exec.LookPath("prometheus"); err == nil {
		cfgFile, err := prometheusConfig(dir, metricsAddrs)
		if err != nil {
			return err
		}
		procs = append(procs, start(ctx, dir, "", "prometheus", prom, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "prometheus"),
			"--web.listen-address="+promAddr))
		operatorArgs = append(operatorArgs, "--prometheus-url=http://"+promAddr, "--endurance-page-address="+pageAddr)
	} else {
		pageAddr = ""
		say("(prometheus is not installed: no endurance page; `apt-get install prometheus` adds it)")
	}
	procs = append(procs, start(ctx, dir, kubeconfig, "operator", filepath.Join(bin, "prism-manager"), operatorArgs...))
	for _, n := range nodes {
		// Simulated devices are files, not block devices: the agents inventory, plan and export
		// metrics, but do not partition (--provision=false).
		procs = append(procs, start(ctx, dir, kubeconfig, "agent-"+n.Name, filepath.Join(bin, "prism-agent"), "run",
			"--node-name="+n.Name, "--host-root="+roots[n.Name], "--identify-dir="+filepath.Join(roots[n.Name], "identify"),
			"--logs-dir="+filepath.Join(roots[n.Name], "logs"), "--period=10s", "--provision=false",
			"--metrics-bind-address="+metricsAddrs[n.Name], "--health-period=5s"))
	}
	defer func() {
		for _, p := range procs {
			if p.Process != nil {
				_ = p.Process.Signal(syscall.SIGTERM)
				_ = p.Wait()
			}
		}
	}()

	if err := waitFor(ctx, 60*time.Second, func() bool {
		list := &prismv1.StorageNodeList{}
		return env.Client.List(ctx, list) == nil && inventoried(list.Items) == len(nodes)
	}); err != nil {
		return fmt.Errorf("waiting for the agents to publish their inventories (logs in %s): %w", dir, err)
	}
	if err := createCephCluster(ctx, env.Client); err != nil {
		return err
	}
	policy, err := applySample(ctx, env.Client)
	if err != nil {
		return err
	}
	say("Applied config/samples/hybridstoragepolicy.yaml (policy %s).", policy)
	if err := waitFor(ctx, 60*time.Second, func() bool {
		p := &prismv1.HybridStoragePolicy{}
		return env.Client.Get(ctx, client.ObjectKey{Name: policy}, p) == nil && p.Status.ObservedGeneration == p.Generation && p.Generation > 0 && len(p.Status.Nodes) == len(nodes)
	}); err != nil {
		return fmt.Errorf("waiting for the operator (logs in %s): %w", dir, err)
	}

	// Endurance reaches the StorageNodes with the inventory after the first SMART poll.
	_ = waitFor(ctx, 45*time.Second, func() bool {
		sn := &prismv1.StorageNode{}
		if env.Client.Get(ctx, client.ObjectKey{Name: "optane-qlc-homelab-d"}, sn) != nil {
			return false
		}
		for _, d := range sn.Status.Devices {
			if d.Endurance != nil {
				return true
			}
		}
		return false
	})
	if err := show(ctx, env, kubeconfig, bin); err != nil {
		return err
	}
	if err := showMetrics(ctx, metricsAddrs["optane-qlc-homelab-d"]); err != nil {
		return err
	}
	say("")
	say("The control plane, operator and agents keep running. Try:")
	say("  export KUBECONFIG=%s", kubeconfig)
	if kubectl := filepath.Join(env.AssetsDir(), "kubectl"); exists(kubectl) {
		say("  %s get storagenodes,hybridstoragepolicies", kubectl)
	}
	say("  %s selection", filepath.Join(bin, "kubectl-prism"))
	say("  %s inventory --host-root %s", filepath.Join(bin, "prism-agent"), roots[nodes[0].Name])
	if pageAddr != "" {
		say("  Endurance page (Prometheus scraping the agents): http://%s", pageAddr)
	}
	say("Logs: %s/*.log. Press Ctrl-C to stop.", dir)
	if once {
		return nil
	}
	<-ctx.Done()
	return nil
}

func show(ctx context.Context, env *testenv.Env, kubeconfig, bin string) error {
	if kubectl := filepath.Join(env.AssetsDir(), "kubectl"); exists(kubectl) {
		say("\n$ kubectl get storagenodes,hybridstoragepolicies")
		cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "get", "storagenodes,hybridstoragepolicies")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return err
		}
	}
	nodes := &prismv1.StorageNodeList{}
	if err := env.Client.List(ctx, nodes); err != nil {
		return err
	}
	say("\n$ kubectl prism devices")
	if err := report.Devices(os.Stdout, nodes.Items); err != nil {
		return err
	}
	policies := &prismv1.HybridStoragePolicyList{}
	if err := env.Client.List(ctx, policies); err != nil {
		return err
	}
	say("\n$ kubectl prism selection")
	if err := report.Selection(os.Stdout, policies.Items); err != nil {
		return err
	}
	say("\n$ kubectl prism endurance   # endurance as the agents last published it")
	return report.Endurance(os.Stdout, nodes.Items, time.Now(), false)
}

// prometheusConfig writes a scrape configuration for the agents, job prism-agent.
func prometheusConfig(dir string, agents map[string]string) (string, error) {
	var b strings.Builder
	b.WriteString("global: {scrape_interval: 5s, evaluation_interval: 5s}\nscrape_configs:\n- job_name: prism-agent\n  static_configs:\n")
	for node, addr := range agents {
		fmt.Fprintf(&b, "  - targets: [%q]\n    labels: {instance_node: %q}\n", addr, node)
	}
	path := filepath.Join(dir, "prometheus.yml")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// createCephCluster is the Rook CephCluster the sample policy targets (Rook's real CRD is
// installed; no Rook operator runs, so no OSD is created).
func createCephCluster(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph"}}); err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`{apiVersion: ceph.rook.io/v1, kind: CephCluster, metadata: {name: rook-ceph, namespace: rook-ceph},
	  spec: {cephVersion: {image: "quay.io/ceph/ceph:v19.2.3"}, dataDirHostPath: /var/lib/rook, mon: {count: 3},
	    storage: {useAllNodes: false, useAllDevices: false}}}`), &u.Object); err != nil {
		return err
	}
	return c.Create(ctx, u)
}

// showMetrics prints the endurance metrics one agent serves for its Optane.
func showMetrics(ctx context.Context, addr string) error {
	say("\n$ curl -s http://%s/metrics | grep 'prism_device.*nvme0n1'   # the homelab node's Optane 900P, from its recorded SMART log", addr)
	var body string
	err := waitFor(ctx, 30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return strings.Contains(body, "prism_device_host_written_bytes_total")
	})
	if err != nil {
		return fmt.Errorf("agent metrics at %s: %w", addr, err)
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "prism_device") && strings.Contains(line, `device="nvme0n1"`) {
			say("%s", line)
		}
	}
	return nil
}

func applySample(ctx context.Context, c client.Client) (string, error) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config/samples/hybridstoragepolicy.yaml"))
	if err != nil {
		return "", err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return "", err
	}
	return obj.GetName(), c.Create(ctx, obj)
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

// start runs a Prism binary against the demo's control plane, logging to DIR/NAME.log.
func start(ctx context.Context, dir, kubeconfig, name, path string, args ...string) *exec.Cmd {
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		panic(err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = os.Environ()
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "demo: starting %s: %v (run make build)\n", path, err)
		os.Exit(1)
	}
	return cmd
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("timed out after %s", timeout)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func say(format string, args ...any) { fmt.Printf(format+"\n", args...) }
