// Command demo runs Prism's main job on this machine: a real kube-apiserver and etcd, the
// operator, and one real agent per simulated node (host roots built from test/fixtures/nodes),
// a real Prometheus scraping the agents and the operator's endurance page; then it applies the
// sample policies and shows what Prism decided and measured.
//
// What is real and what is not (docs/user-guide.md, "Try it"):
//   - real: the control plane, the operator and agent binaries, their inventory, planning,
//     provisioning and cache code, Prometheus, the page;
//   - simulated: the nodes (their drives are fixture files with recorded identify data and
//     log pages), a workload that advances the drives' write counters, and 8 days of past wear
//     samples in each agent's history (workload.go, history.go);
//   - real devices standing in for simulated ones: as root, each fast device is a sparse file
//     on a loop device, so the agent really partitions it (its GPT writer, wipefs, blkid, partx);
//   - emulated: the caches run on the casadm EMULATOR (cmd/casadm-emulator), not Open CAS,
//     and their IO is emulated too (caches.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

type options struct {
	dir, bin    string
	once        bool
	checkPanels bool
	useLoops    bool
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "", "where the demo keeps its kubeconfig, host roots and logs (default: a new directory per run under $TMPDIR)")
	flag.StringVar(&o.bin, "bin", "bin", "directory with prism-manager, prism-agent and kubectl-prism")
	flag.BoolVar(&o.once, "once", false, "exit once the policy is reconciled (and the checks ran) instead of running until interrupted")
	flag.BoolVar(&o.useLoops, "loops", true, "as root, back the fast devices with loop devices the agents partition, and run caches on the casadm emulator; false keeps them files")
	flag.BoolVar(&o.checkPanels, "check-panels", false, "run every query of every generated dashboard against the demo's Prometheus and fail naming each one without data")
	flag.Parse()
	if o.dir == "" {
		// One directory per run: two demos on a machine must not share host roots or logs.
		dir, err := os.MkdirTemp("", "prism-demo-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
		o.dir = dir
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	d := &demo{options: o}
	err := d.run(ctx)
	interrupted := ctx.Err() != nil
	stop()
	if interrupted {
		say("\nStopping: the agents, the operator, Prometheus and the control plane...")
	}
	d.stop()
	switch {
	case interrupted:
		// Ctrl-C is how a user ends the demo: a clean stop is a success, whatever step ran.
		say("Stopped. Logs stay in %s.", d.dir)
	case err != nil:
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func (d *demo) run(ctx context.Context) error {
	if d.checkPanels {
		// The check needs the caches and Prometheus: say so now, not after a minute.
		if why := canUseLoops(); why != "" || !d.useLoops {
			return fmt.Errorf("--check-panels needs the caches, so root with losetup, partx, wipefs, blkid and sfdisk and --loops (%s): the cache panels would have no data", cmpOr(why, "--loops=false"))
		}
		if _, err := exec.LookPath("prometheus"); err != nil {
			return fmt.Errorf("--check-panels needs Prometheus (sudo hack/install-deps.sh demo installs it)")
		}
	}
	if err := checkAgentBuild(filepath.Join(d.bin, "prism-agent")); err != nil {
		return err
	}
	began := time.Now()
	steps := []struct {
		name string
		run  func(context.Context) error
		skip func() bool
	}{
		{"set up", d.setUp, nil},
		{"start processes", d.startProcesses, nil},
		{"apply policies", d.applyPolicies, nil},
		{"start caches", d.startCaches, func() bool { return !d.caches() }},
		{"wait for endurance", d.waitForEndurance, nil},
		{"show", d.show, nil},
		{"check panels", d.checkDashboards, func() bool { return !d.checkPanels }},
	}
	for _, s := range steps {
		if s.skip != nil && s.skip() {
			continue
		}
		t := time.Now()
		if err := s.run(ctx); err != nil {
			return err
		}
		logf("%s took %s", s.name, time.Since(t).Round(100*time.Millisecond))
	}
	d.hints()
	say("(demo ready after %s)", time.Since(began).Round(time.Second))
	if d.once {
		return nil
	}
	<-ctx.Done()
	return nil
}

func say(format string, args ...any) { fmt.Printf(format+"\n", args...) }
