package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/gpt"
	"github.com/prism-storage/prism/internal/report"
)

// showcaseNode is the node whose metrics the demo prints: its Optane 900P has a recorded SMART log.
const showcaseNode = "optane-qlc-homelab-d"

// waitForEndurance waits until the endurance (the first SMART poll) reaches the StorageNodes.
func (d *demo) waitForEndurance(ctx context.Context) error {
	return waitFor(ctx, 45*time.Second, func() bool {
		sn := &prismv1.StorageNode{}
		if d.env.Client.Get(ctx, client.ObjectKey{Name: showcaseNode}, sn) != nil {
			return false
		}
		for _, dev := range sn.Status.Devices {
			if dev.Endurance != nil && dev.Endurance.WearOutTime != nil {
				return true
			}
		}
		return false
	})
}

func (d *demo) show(ctx context.Context) error {
	if kubectl := filepath.Join(d.env.AssetsDir(), "kubectl"); exists(kubectl) {
		say("\n$ kubectl get storagenodes,hybridstoragepolicies")
		cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", d.kubeconfig, "get", "storagenodes,hybridstoragepolicies")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return err
		}
	}
	nodes := &prismv1.StorageNodeList{}
	if err := d.env.Client.List(ctx, nodes); err != nil {
		return err
	}
	say("\n$ kubectl prism devices")
	if err := report.Devices(os.Stdout, nodes.Items, false); err != nil {
		return err
	}
	policies := &prismv1.HybridStoragePolicyList{}
	if err := d.env.Client.List(ctx, policies); err != nil {
		return err
	}
	say("\n$ kubectl prism selection")
	if err := report.Selection(os.Stdout, policies.Items); err != nil {
		return err
	}
	say("\n# Per node: the plan (spec.plan), the partitions and caches the agent reports (status)")
	if d.caches() {
		say("# The caches run on the casadm EMULATOR, not Open CAS; their IO is emulated (%d requests per core every 3 s).", ioPerBurst())
	}
	classes := map[int32]string{}
	cp := &prismv1.ClassificationPolicy{}
	if err := d.env.Client.Get(ctx, client.ObjectKey{Name: "ceph-osd"}, cp); err == nil {
		for _, c := range cp.Spec.Classes {
			classes[c.ID] = c.Name
		}
	}
	for _, sn := range nodes.Items {
		showNode(os.Stdout, sn, classes)
	}
	say("\n$ kubectl prism endurance   # as the agents last published it (history: simulated past samples)")
	if err := report.Endurance(os.Stdout, nodes.Items, time.Now(), false); err != nil {
		return err
	}
	return d.showMetrics(ctx)
}

func ioPerBurst() int {
	n := 0
	for _, m := range ioMix {
		n += m.count
	}
	return n
}

// showNode prints one node's plan, partitions and caches; classes names the IO classes by id.
func showNode(w io.Writer, sn prismv1.StorageNode, classes map[int32]string) {
	p := sn.Spec.Plan
	if p == nil {
		fmt.Fprintf(w, "\n%s: no plan\n", sn.Name)
		return
	}
	fmt.Fprintf(w, "\n%s (mode %s)\n", sn.Name, sn.Spec.Mode)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	state := map[string]string{}
	for _, ps := range sn.Status.Partitions {
		state[fmt.Sprintf("%s/%d", ps.Device, ps.Number)] = string(ps.State)
	}
	for _, f := range p.FastDevices {
		fmt.Fprintf(tw, "  fast device\t%s\tcache id %d\t\n", f.StablePath, f.CacheID)
		for _, s := range f.Slots {
			data := s.DataDevice
			if data == "" {
				data = "(spare)"
			}
			fmt.Fprintf(tw, "    partition %d %s\t%s\t%s\tDB of %s\n", s.Partition.Number, s.Partition.Label, gpt.FormatBytes(s.Partition.SizeBytes),
				dash(state[fmt.Sprintf("%s/%d", f.StablePath, s.Partition.Number)]), data)
		}
		if c := f.Cache; c != nil {
			fmt.Fprintf(tw, "    partition %d %s\t%s\t%s\tcache\n", c.Number, c.Label, gpt.FormatBytes(c.SizeBytes), dash(state[fmt.Sprintf("%s/%d", f.StablePath, c.Number)]))
		}
	}
	_ = tw.Flush()
	if p.Cache != nil {
		fmt.Fprintf(w, "  cache plan: %s, %d KiB lines, IO classes of ClassificationPolicy %s\n", p.Cache.Mode, p.Cache.LineSizeKiB, p.Cache.ClassificationPolicyName)
	}
	for _, c := range sn.Status.Caches {
		fmt.Fprintf(w, "  cache %d on %s: %s %s\n", c.CacheID, c.FastDevice, c.State, c.Message)
		for _, core := range c.Cores {
			fmt.Fprintf(w, "    core %d %s -> %s (%s)\n", core.CoreID, core.Device, dash(core.ExportedObject), core.State)
		}
		if c.WriteReduction != "" {
			fmt.Fprintf(w, "    α_cache = %s (cache write reduction: written to the exported objects %s, to QLC %s)\n", c.WriteReduction,
				mib(c.ExportedWrittenBytes), mib(c.CoreWrittenBytes))
		}
		var beta []string
		for _, u := range c.IOClasses {
			if u.WriteInvalidation != "" {
				beta = append(beta, fmt.Sprintf("%d %s %s", u.ID, cmpOr(classes[u.ID], "?"), u.WriteInvalidation))
			}
		}
		if len(beta) > 0 {
			fmt.Fprintf(w, "    β per IO class: %s\n", strings.Join(beta, ", "))
		}
	}
	if sn.Status.CacheWriteReduction != "" {
		fmt.Fprintf(w, "  node α_cache (all caches) = %s\n", sn.Status.CacheWriteReduction)
	}
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// showMetrics prints the endurance metrics one agent serves for its Optane.
func (d *demo) showMetrics(ctx context.Context) error {
	addr := d.agents[showcaseNode]
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

// hints says how to explore the running demo, as lines a user can paste as they are.
func (d *demo) hints() {
	say("")
	say("The control plane, operator and agents keep running. In another terminal, paste:")
	say("  export KUBECONFIG=%s", d.kubeconfig)
	// kubectl finds plugins on PATH: bin/ has kubectl-prism, the assets dir the demo's kubectl.
	path := d.bin
	if exists(filepath.Join(d.env.AssetsDir(), "kubectl")) {
		path += ":" + d.env.AssetsDir()
	}
	say("  export PATH=%s:$PATH", path)
	say("  kubectl get storagenodes,hybridstoragepolicies,classificationpolicies")
	say("  kubectl prism devices")
	say("  kubectl prism selection")
	n := d.nodes[0].Name
	say("  prism-agent inventory --host-root %s --identify-dir %s", d.roots[n], filepath.Join(d.roots[n], "identify"))
	if h, ok := d.hosts[showcaseNode]; ok {
		say("  CASADM_EMULATOR_STATE=%s %s -L   # the casadm EMULATOR's view of %s", h.state, h.casadm, showcaseNode)
	}
	if d.promURL != "" {
		say("  Endurance page (Prometheus scraping the agents): http://%s   Prometheus: %s", d.pageAddr, d.promURL)
		say("    sign in with the token of: kubectl -n default create token prism-endurance-reader")
	}
	var agents []string
	for _, node := range d.nodes {
		agents = append(agents, d.agents[node.Name])
	}
	say("  Agents' metrics: http://<addr>/metrics for %s", strings.Join(agents, ", "))
	say("Logs: %s/*.log. Press Ctrl-C to stop.", d.dir)
}
