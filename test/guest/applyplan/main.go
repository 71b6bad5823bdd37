// Command prism-apply-plan carries out one node's plan on this host with the node agent's own
// partitioner, for the test guest (test/guest), where no Kubernetes API runs. It reads the plan
// that `kubectl prism plan -o json` printed and the inventory that `prism-agent inventory -o
// json` printed, and calls provision.Runner.Reconcile with the local executor and host root
// "/", which is exactly what `prism-agent run` does with the plan in its StorageNode's spec.
// It prints the partitions' states and whether anything changed, as JSON, and exits 1 unless
// every planned partition is Ready.
//
// With --cache it then runs the agent's cache pass (cache.Runner.ReconcileNode) on the plan's
// cache, as `prism-agent run` does after provisioning, and exits 1 unless every cache is
// Running (Stopped with --cache-off, which takes the plan's cache away as a policy with
// cache mode None does). --partitions skips the partitioner and takes the partitions' states
// from an earlier output, so that the cache pass can be replayed where the devices do not
// exist (against the casadm emulator, with --host-root holding the scanned partition and
// opencas.conf). --record appends every command the agent ran, with what it answered, to a
// JSON-lines transcript. --cache-step-limit N stops the cache pass after N steps, as a crash
// between two of them would (the agent's Runner.StepLimit).
//
// --db-volumes adds the partitioner's volume phase (decision 0036), run exactly as
// `prism-agent run --db-volumes` runs it: LVM's commands through nsenter into PID 1's mount and
// IPC namespaces; it then exits 1 unless every DB slot's volume is Ready too. --step-limit N
// stops the partitioner (GPT and volume steps alike) after N mutating steps, as a crash would.
// With --record, the transcript has the argv as run, nsenter included.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/lvm"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/inventorydoc"
	"github.com/prism-storage/prism/internal/node/opencas"
	"github.com/prism-storage/prism/internal/node/provision"
	"github.com/prism-storage/prism/internal/plan"
)

// Output is what the command prints.
type Output struct {
	Node       string                    `json:"node"`
	Mode       prismv1.PolicyMode        `json:"mode"`
	Changed    bool                      `json:"changed"`
	Partitions []prismv1.PartitionStatus `json:"partitions"`
	// Caches and WriteReduction are the cache pass's (with --cache).
	Caches         []prismv1.CacheStatus `json:"caches,omitempty"`
	WriteReduction string                `json:"writeReduction,omitempty"`
}

// options are the command's flags.
type options struct {
	planFile, invFile, node string
	mode                    prismv1.PolicyMode
	timeout                 time.Duration
	cache, cacheOff         bool
	partitionsFile          string
	hostRoot                string
	record                  string
	cacheStepLimit          int
	dbVolumes               bool
	stepLimit               int
	stateDir                string
	lvmHere                 bool
}

func main() {
	planFile := flag.String("plan", "", "`kubectl prism plan -o json` output")
	invFile := flag.String("inventory", "", "`prism-agent inventory -o json` output of this host")
	node := flag.String("node", "", "the node whose plan to carry out (default: the inventory's node)")
	mode := flag.String("mode", string(prismv1.ModeDryRun), "Apply changes the devices; DryRun only reports")
	// The first pass reads an emulated 800 GB fast device sparsely twice before its first table
	// (decision 0041): about 90 s a read under TCG, which the 5 min of before ran out on.
	timeout := flag.Duration("timeout", 20*time.Minute, "give up after this long")
	cacheOn := flag.Bool("cache", false, "also run the agent's cache pass on the plan's cache")
	cacheOff := flag.Bool("cache-off", false, "run the cache pass with the plan's cache taken away (flush and stop)")
	partitionsFile := flag.String("partitions", "", "an earlier output whose partitions to use instead of running the partitioner")
	hostRoot := flag.String("host-root", "/", "where the host's / is (the partition scan and opencas.conf)")
	record := flag.String("record", "", "append every command run, with its output and exit status, to this JSON-lines `file`")
	cacheStepLimit := flag.Int("cache-step-limit", 0, "stop the cache pass after this many steps, as a crash would (0: no limit)")
	dbVolumes := flag.Bool("db-volumes", false, "also make each DB slot's LVM volume, with LVM run in PID 1's mount namespace as the agent runs it")
	stepLimit := flag.Int("step-limit", 0, "stop the partitioner after this many mutating steps, as a crash would (0: no limit)")
	lvmHere := flag.Bool("lvm-here", false, "with --db-volumes, run LVM in this process's namespaces, not through nsenter into PID 1's (a test host already in them that refuses nsenter)")
	stateDir := flag.String("state-dir", "", "where the volume phase records its intent before pvcreate, as the agent's --state-dir")
	flag.Parse()
	for name, v := range map[string]int{"cache-step-limit": *cacheStepLimit, "step-limit": *stepLimit} {
		if v < 0 {
			fmt.Fprintf(os.Stderr, "prism-apply-plan: --%s %d: want 0 or more\n", name, v)
			os.Exit(2)
		}
	}
	o := options{planFile: *planFile, invFile: *invFile, node: *node, mode: prismv1.PolicyMode(*mode),
		timeout: *timeout, cache: *cacheOn || *cacheOff, cacheOff: *cacheOff, partitionsFile: *partitionsFile,
		hostRoot: *hostRoot, record: *record, cacheStepLimit: *cacheStepLimit, dbVolumes: *dbVolumes, stepLimit: *stepLimit, stateDir: *stateDir, lvmHere: *lvmHere}
	out, slots, err := run(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "prism-apply-plan: %v\n", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "prism-apply-plan: %v\n", err)
		os.Exit(1)
	}
	if problems := notDone(o, out, slots); len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(os.Stderr, "prism-apply-plan: %s\n", p)
		}
		os.Exit(1)
	}
}

// notDone says what keeps the run from being done: a partition not Ready, with --db-volumes
// a DB slot (slots: the plan's) whose volume is not Ready, a cache not in the wanted state.
func notDone(o options, out Output, slots []prismv1.PartitionStatus) []string {
	for _, p := range out.Partitions {
		if p.State != prismv1.PartitionReady {
			// One line, as before: the first partition not Ready.
			return []string{fmt.Sprintf("partition %d on %s is %s: %s", p.Number, p.Device, p.State, p.Message)}
		}
	}
	var problems []string
	if o.dbVolumes {
		for _, s := range slots {
			i := slices.IndexFunc(out.Partitions, func(p prismv1.PartitionStatus) bool { return p.Device == s.Device && p.Number == s.Number })
			switch {
			case i < 0:
				problems = append(problems, fmt.Sprintf("DB slot partition %d on %s is not in the output", s.Number, s.Device))
			case out.Partitions[i].Volume == nil:
				problems = append(problems, fmt.Sprintf("DB slot partition %d on %s has no volume", s.Number, s.Device))
			case out.Partitions[i].Volume.State != prismv1.DBVolumeReady:
				v := out.Partitions[i].Volume
				problems = append(problems, fmt.Sprintf("the volume %s of DB slot partition %d on %s is %s: %s", v.Path, s.Number, s.Device, v.State, v.Message))
			}
		}
	}
	want := prismv1.CacheRunning
	if o.cacheOff {
		want = prismv1.CacheStopped
	}
	for _, c := range out.Caches {
		if c.State != want {
			problems = append(problems, fmt.Sprintf("the cache on %s is %s, want %s: %s", c.FastDevice, c.State, want, c.Message))
		}
	}
	return problems
}

// dbSlots are the plan's DB slot partitions (device and number only).
func dbSlots(np *prismv1.NodePlan) []prismv1.PartitionStatus {
	var out []prismv1.PartitionStatus
	for _, fd := range np.FastDevices {
		for _, s := range fd.Slots {
			out = append(out, prismv1.PartitionStatus{Device: fd.StablePath, Number: s.Partition.Number})
		}
	}
	return out
}

// run carries out the plan and returns what the partitioner (and the cache pass) reported, and
// the plan's DB slot partitions.
func run(o options) (Output, []prismv1.PartitionStatus, error) {
	if o.planFile == "" || o.invFile == "" {
		return Output{}, nil, fmt.Errorf("need --plan FILE and --inventory FILE")
	}
	if o.mode != prismv1.ModeApply && o.mode != prismv1.ModeDryRun {
		return Output{}, nil, fmt.Errorf("--mode %q: want %s or %s", o.mode, prismv1.ModeApply, prismv1.ModeDryRun)
	}
	if o.partitionsFile != "" && (o.dbVolumes || o.stepLimit > 0) {
		return Output{}, nil, fmt.Errorf("--partitions skips the partitioner: --db-volumes and --step-limit need it")
	}
	var doc inventorydoc.Document
	if err := decodeFile(o.invFile, &doc); err != nil {
		return Output{}, nil, err
	}
	node := o.node
	if node == "" {
		node = doc.Node
	}
	// What `kubectl prism plan -o json` prints: the planner's result (each node with its claim
	// OSDs), and what internal/plan/rook makes of it (not this command's business).
	var printed struct {
		Nodes []struct {
			plan.NodeResult
			ClaimOSDs json.RawMessage `json:"claimOSDs"`
		} `json:"nodes"`
		Problems         []string        `json:"problems"`
		CacheRefused     string          `json:"cacheRefused"`
		RookStorageNodes json.RawMessage `json:"rookStorageNodes"`
		Rook             json.RawMessage `json:"rook"`
	}
	if err := decodeFile(o.planFile, &printed); err != nil {
		return Output{}, nil, err
	}
	cp := plan.ClusterPlan{Problems: printed.Problems, CacheRefused: printed.CacheRefused}
	for _, n := range printed.Nodes {
		cp.Nodes = append(cp.Nodes, n.NodeResult)
	}
	np, ok := cp.Plans()[node]
	if !ok {
		return Output{}, nil, fmt.Errorf("%s: no plan for node %q (problems: %v)", o.planFile, node, cp.Problems)
	}
	slots := dbSlots(&np)
	var exec hostexec.Executor = hostexec.Local{}
	if o.record != "" {
		f, err := os.OpenFile(o.record, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return Output{}, nil, err
		}
		defer f.Close()
		exec = &recorder{inner: exec, file: f}
	}
	if o.dbVolumes && !o.lvmHere {
		// As cmd/agent does; inside the recorder's wrapping, so the transcript shows nsenter.
		exec = hostexec.InHostMountNamespace{Inner: exec, Tools: lvm.Commands}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	out := Output{Node: node, Mode: o.mode}
	if o.partitionsFile != "" {
		var earlier Output
		if err := decodeFile(o.partitionsFile, &earlier); err != nil {
			return Output{}, nil, err
		}
		out.Partitions = earlier.Partitions
	} else {
		// A test's tool: its ancestors (the test, and whatever runs the test) did not open the
		// devices, and a sandbox's supervisor may hide its files even from root.
		proc, err := procfs.Proc{Dir: "/proc"}.IgnoringAncestors()
		if err != nil {
			return Output{}, nil, err
		}
		runner := provision.Runner{Exec: exec, HostRoot: o.hostRoot, Volumes: o.dbVolumes, StepLimit: o.stepLimit, Proc: proc, IntentDir: o.stateDir}
		res := runner.Reconcile(ctx, &np, doc.Devices, o.mode)
		out.Changed, out.Partitions = res.Changed, res.Partitions
	}
	if !o.cache {
		return out, slots, nil
	}
	if o.cacheOff {
		np.Cache = nil
	}
	res := opencas.Runner{Exec: exec, HostRoot: o.hostRoot, StepLimit: o.cacheStepLimit}.ReconcileNode(ctx, &np, doc.Devices, out.Partitions, o.mode)
	out.Changed = out.Changed || res.Changed
	out.Caches, out.WriteReduction = res.Caches, res.WriteReduction
	return out, slots, nil
}

func decodeFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
