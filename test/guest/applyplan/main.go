// Command prism-apply-plan carries out one node's plan on this host with the node agent's own
// partitioner, for the test guest (test/guest), where no Kubernetes API runs. It reads the plan
// that `kubectl prism plan -o json` printed and the inventory that `prism-agent inventory -o
// json` printed, and calls provision.Runner.Reconcile with the local executor and host root
// "/", which is exactly what `prism-agent run` does with the plan in its StorageNode's spec.
// It prints the partitions' states and whether anything changed, as JSON, and exits 1 unless
// every planned partition is Ready.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/hostexec"
	"github.com/prism-storage/prism/internal/inventory"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/provision"
)

// Output is what the command prints.
type Output struct {
	Node       string                    `json:"node"`
	Mode       prismv1.PolicyMode        `json:"mode"`
	Changed    bool                      `json:"changed"`
	Partitions []prismv1.PartitionStatus `json:"partitions"`
}

func main() {
	planFile := flag.String("plan", "", "`kubectl prism plan -o json` output")
	invFile := flag.String("inventory", "", "`prism-agent inventory -o json` output of this host")
	node := flag.String("node", "", "the node whose plan to carry out (default: the inventory's node)")
	mode := flag.String("mode", string(prismv1.ModeDryRun), "Apply changes the devices; DryRun only reports")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up after this long")
	flag.Parse()
	out, err := run(*planFile, *invFile, *node, prismv1.PolicyMode(*mode), *timeout)
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
	for _, p := range out.Partitions {
		if p.State != prismv1.PartitionReady {
			fmt.Fprintf(os.Stderr, "prism-apply-plan: partition %d on %s is %s: %s\n", p.Number, p.Device, p.State, p.Message)
			os.Exit(1)
		}
	}
}

func run(planFile, invFile, node string, mode prismv1.PolicyMode, timeout time.Duration) (Output, error) {
	if planFile == "" || invFile == "" {
		return Output{}, fmt.Errorf("need --plan FILE and --inventory FILE")
	}
	if mode != prismv1.ModeApply && mode != prismv1.ModeDryRun {
		return Output{}, fmt.Errorf("--mode %q: want %s or %s", mode, prismv1.ModeApply, prismv1.ModeDryRun)
	}
	var doc inventory.Document
	if err := decodeFile(invFile, &doc); err != nil {
		return Output{}, err
	}
	if node == "" {
		node = doc.Node
	}
	var cp plan.ClusterPlan
	if err := decodeFile(planFile, &cp); err != nil {
		return Output{}, err
	}
	np, ok := cp.Plans()[node]
	if !ok {
		return Output{}, fmt.Errorf("%s: no plan for node %q (problems: %v)", planFile, node, cp.Problems)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	runner := provision.Runner{Exec: hostexec.Local{}, HostRoot: "/"}
	res := runner.Reconcile(ctx, &np, doc.Devices, mode)
	return Output{Node: node, Mode: mode, Changed: res.Changed, Partitions: res.Partitions}, nil
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
