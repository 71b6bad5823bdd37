// Command realagent measures real `prism-agent run` processes, with their Kubernetes traffic,
// which bench/footprint/run.sh leaves out: it starts a kube-apiserver and etcd with Prism's
// CRDs (test/support/testenv, binaries from hack/envtest-bins.sh), a Node object per agent, and
// runs each given agent binary as the chart runs it (--cache=false, --state-dir, the default
// periods and plan poll), on a fixture host root and a copy of a seeded wear history, all at
// the same time. It then scrapes each one (gzip) every -interval and prints, per agent, the
// median and maximum VmRSS after the scrapes, RssAnon and RssFile, and the CPU time per
// scrape over the window (the agent's polls, syncs and plan GETs included).
//
//	go build -o /tmp/fp-agent ./bench/footprint/agent
//	/tmp/fp-agent -fixture /tmp/fphost -build -repo .
//	mkdir -p /tmp/fpstate && /tmp/fp-agent -fixture /tmp/fphost -state-dir /tmp/fpstate -seed-history 240h
//	KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh) go run ./bench/footprint/realagent -fixture /tmp/fphost \
//	    -seed /tmp/fpstate -node-exporter /usr/bin/prometheus-node-exporter \
//	    new=/path/to/prism-agent new-gogc50=/path/to/prism-agent:50 old=/path/to/old/prism-agent
//
// Each argument is NAME=BINARY[:GOGC]; without :GOGC the agent runs at Go's default.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prism-storage/prism/test/support/testenv"
)

type agent struct {
	name, bin, gogc, addr string
	nodeExporter          bool // not an agent: prometheus-node-exporter, for comparison
	cmd                   *exec.Cmd
	rss, anon, file       []float64 // MiB, after each scrape
	cpu0, cpu1            int64     // utime+stime ticks at the start and end of the window
	failed                int
}

func main() {
	fixture := flag.String("fixture", "", "fixture host root written by bench/footprint/agent -build (required)")
	seed := flag.String("seed", "", "a state dir seeded by bench/footprint/agent -seed-history; each agent gets a copy (empty: a fresh history)")
	interval := flag.Duration("interval", 15*time.Second, "scrape interval")
	scrapes := flag.Int("scrapes", 20, "measured scrapes")
	warmup := flag.Int("warmup", 3, "scrapes before measuring")
	port := flag.Int("port", 19560, "first metrics port")
	nodeExporter := flag.String("node-exporter", "", "also run and measure this prometheus-node-exporter binary (default collectors), as in run.sh")
	flag.Parse()
	if err := run(*fixture, *seed, *nodeExporter, *interval, *scrapes, *warmup, *port, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "realagent:", err)
		os.Exit(1)
	}
}

func run(fixture, seed, nodeExporter string, interval time.Duration, scrapes, warmup, port int, args []string) error {
	if fixture == "" || len(args) == 0 {
		return errors.New("usage: realagent -fixture DIR [-seed DIR] NAME=BINARY[:GOGC]...")
	}
	var agents []*agent
	for i, a := range args {
		name, spec, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return fmt.Errorf("argument %q: want NAME=BINARY[:GOGC]", a)
		}
		bin, gogc, _ := strings.Cut(spec, ":")
		if gogc != "" {
			if _, err := strconv.Atoi(gogc); err != nil {
				return fmt.Errorf("argument %q: GOGC %q is not a number", a, gogc)
			}
		}
		agents = append(agents, &agent{name: name, bin: bin, gogc: gogc, addr: fmt.Sprintf("127.0.0.1:%d", port+i)})
	}
	if nodeExporter != "" {
		agents = append(agents, &agent{name: "node_exporter", bin: nodeExporter, addr: fmt.Sprintf("127.0.0.1:%d", port+len(agents)), nodeExporter: true})
	}
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer env.Stop() //nolint:errcheck // best effort at exit
	dir, err := os.MkdirTemp("", "prism-realagent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg, err := env.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, cfg, 0o600); err != nil {
		return err
	}
	ctx := context.Background()
	for _, a := range agents {
		if err := start(ctx, env, a, dir, kubeconfig, fixture, seed); err != nil {
			return err
		}
		defer func() { _ = a.cmd.Process.Kill(); _ = a.cmd.Wait() }()
	}
	for _, a := range agents {
		if err := waitForPoll(a, 3*time.Minute); err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, a.name+".log"))
			return fmt.Errorf("%w; its log:\n%s", err, log)
		}
	}
	t0 := time.Now()
	for k := -warmup; k < scrapes; k++ {
		if k == 0 {
			for _, a := range agents {
				a.cpu0 = cpuTicks(a.cmd.Process.Pid)
			}
		}
		for _, a := range agents {
			if err := scrape(a.addr); err != nil {
				a.failed++
			}
			if k >= 0 {
				r, an, f := rss(a.cmd.Process.Pid)
				a.rss, a.anon, a.file = append(a.rss, r), append(a.anon, an), append(a.file, f)
			}
		}
		time.Sleep(time.Until(t0.Add(time.Duration(k+warmup+1) * interval)))
	}
	for _, a := range agents {
		a.cpu1 = cpuTicks(a.cmd.Process.Pid)
	}
	fmt.Printf("%d scrapes every %s after %d warm-up scrapes; real kube-apiserver (envtest); load %s\n", scrapes, interval, warmup, loadavg())
	fmt.Printf("%-20s %6s %14s %8s %8s %8s %14s %6s\n", "agent", "GOGC", "RSS median MiB", "max MiB", "anon", "file", "CPU ms/scrape", "failed")
	for _, a := range agents {
		gogc := a.gogc
		switch {
		case a.nodeExporter:
			gogc = "-"
		case gogc == "":
			gogc = "100"
		}
		fmt.Printf("%-20s %6s %14.1f %8.1f %8.1f %8.1f %14.2f %6d\n", a.name, gogc, median(a.rss), slices.Max(a.rss), median(a.anon), median(a.file),
			float64(a.cpu1-a.cpu0)*10/float64(scrapes), a.failed) // 100 ticks per second
	}
	return nil
}

// start creates the agent's Node and runs the agent as the chart does, on the fixture.
func start(ctx context.Context, env *testenv.Env, a *agent, dir, kubeconfig, fixture, seed string) error {
	if a.nodeExporter {
		a.cmd = exec.Command(a.bin, "--web.listen-address="+a.addr)
		return a.cmd.Start()
	}
	node := "footprint-" + a.name
	if err := env.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
		return fmt.Errorf("node %s: %w", node, err)
	}
	state := filepath.Join(dir, a.name)
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	if seed != "" {
		if err := copyDir(seed, state); err != nil {
			return err
		}
	}
	logf, err := os.Create(filepath.Join(dir, a.name+".log"))
	if err != nil {
		return err
	}
	a.cmd = exec.Command(a.bin, "run", "--node-name="+node, "--host-root="+fixture,
		"--identify-dir="+filepath.Join(fixture, "identify"), "--logs-dir="+filepath.Join(fixture, "logs"),
		"--period=5m", "--heartbeat=30m", "--zap-log-level=info", "--metrics-bind-address="+a.addr,
		"--state-dir="+state, "--cache=false")
	a.cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "GOGC=") }), "KUBECONFIG="+kubeconfig)
	if a.gogc != "" {
		a.cmd.Env = append(a.cmd.Env, "GOGC="+a.gogc)
	}
	a.cmd.Stdout, a.cmd.Stderr = logf, logf
	return a.cmd.Start()
}

// waitForPoll waits until the agent serves device metrics: its first wear poll after its
// first inventory.
func waitForPoll(a *agent, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + a.addr + "/metrics"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if a.nodeExporter || strings.Contains(string(body), "prism_device_host_written_bytes_total") {
				return nil
			}
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("%s served no device metrics within %s", a.name, limit)
}

func scrape(addr string) error {
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the client then leaves the body compressed
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
		return fmt.Errorf("status %d, encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	return nil
}

// rss reads VmRSS, RssAnon and RssFile (MiB).
func rss(pid int) (total, anon, file float64) {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			total = kb / 1024
		case "RssAnon:":
			anon = kb / 1024
		case "RssFile:":
			file = kb / 1024
		}
	}
	return total, anon, file
}

// cpuTicks is utime+stime from /proc/PID/stat (fields 14 and 15).
func cpuTicks(pid int) int64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func loadavg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func copyDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
