// Command kubectl-prism is Prism's kubectl plugin: `kubectl prism nodes|devices|selection|endurance|osds`.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/kube"
	"github.com/prism-storage/prism/internal/report"
)

const usage = `kubectl prism: Prism's view of the cluster's storage.

Usage:
  kubectl prism plan --inventory FILE... --policy FILE [--node-labels NODE:k=v,...] [--classes FILE] [--cephcluster FILE] [-o yaml|json|rook|cephadm]
                            plan offline from prism-agent inventory JSON files: DB slots per node,
                            the Rook storage section, or cephadm OSD service specs
  kubectl prism ioclass [--policy FILE]
                            the Open CAS IO class CSV a ClassificationPolicy compiles to (default: Prism's Ceph policy)
  kubectl prism ioclass explain [--policy FILE] --io size=4096,dir=write,comm=bstore_kv_sync
                            which class an IO gets, rule by rule, with the kernel classifier's semantics
  kubectl prism simulate (--trace FILE | --synthetic zipf) [--policy FILE] [--fast-size 1%..20%]
                            replay a trace through the classifier and an Open CAS cache model: α, β per class,
                            flushes and QLC writes against fast-tier size, beside the offline optimum
  kubectl prism nodes       every StorageNode: devices per tier, eligible devices, policy, inventory age
  kubectl prism devices [-o wide]
                            every device of every node: model, size, tier and why, eligibility;
                            wide adds the vendor and its source, the inferred tier and the evidence
  kubectl prism selection   every HybridStoragePolicy: the devices chosen per node and why others were not
  kubectl prism endurance   every node's worst drive, sorted by soonest wear-out: wear, date, DWPD spent vs rated, WAF
  kubectl prism osds        per policy: OSDs spilled and forecast to spill within 14 days; every OSD the agents
                            read: DB slot use, RocksDB levels kept on the fast tier, spill forecast, slot advice, the table of data classes (occupied, written/day, share, β)
                            and how many slots of each advised size the fast devices hold

Flags:
  --kubeconfig FILE   kubeconfig to use (default $KUBECONFIG or ~/.kube/config)
  --context NAME      kubeconfig context to use
  -o wide             (devices) more columns
`

func main() {
	fs := flag.NewFlagSet("kubectl-prism", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file")
	kubecontext := fs.String("context", "", "kubeconfig context")
	output := fs.String("o", "", "output format: wide (devices)")
	if len(os.Args) < 2 {
		fs.Usage()
		os.Exit(2)
	}
	cmd := os.Args[1]
	if offline, ok := map[string]func([]string, io.Writer) error{"plan": runPlan, "ioclass": runIOClass, "simulate": runSimulate}[cmd]; ok { // no cluster needed
		if err := offline(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "kubectl prism %s: %v\n", cmd, err)
			os.Exit(1)
		}
		return
	}
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	if *output != "" && (*output != "wide" || cmd != "devices") {
		fmt.Fprintf(os.Stderr, "kubectl prism %s: -o %q: only devices takes -o wide\n", cmd, *output)
		os.Exit(2)
	}
	if err := run(cmd, *kubeconfig, *kubecontext, *output == "wide"); err != nil {
		fmt.Fprintf(os.Stderr, "kubectl prism %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

func run(cmd, kubeconfig, kubecontext string, wide bool) error {
	switch cmd {
	case "nodes", "devices", "selection", "endurance", "osds":
	case "-h", "--help", "help":
		fmt.Print(usage)
		return nil
	default:
		return fmt.Errorf("unknown command; see kubectl prism --help")
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubecontext}).ClientConfig()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cmd == "selection" {
		list := &prismv1.HybridStoragePolicyList{}
		if err := c.List(ctx, list); err != nil {
			return err
		}
		return report.Selection(os.Stdout, list.Items)
	}
	list := &prismv1.StorageNodeList{}
	if err := c.List(ctx, list); err != nil {
		return err
	}
	switch cmd {
	case "devices":
		return report.Devices(os.Stdout, list.Items, wide)
	case "osds":
		return report.OSDs(os.Stdout, list.Items, time.Now())
	case "endurance":
		fi, err := os.Stdout.Stat()
		terminal := err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
		return report.Endurance(os.Stdout, list.Items, time.Now(), terminal)
	}
	return report.Nodes(os.Stdout, list.Items, time.Now())
}
