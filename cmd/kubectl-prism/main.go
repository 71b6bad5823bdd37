// Command kubectl-prism is Prism's kubectl plugin: `kubectl prism nodes|devices|selection|endurance|osds`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/kube"
	"github.com/prism-storage/prism/internal/report"
)

// subcommand is one `kubectl prism NAME`. offline ones need no cluster; the others read the
// cluster's StorageNodes or policies with the shared flags (clusterFlags).
type subcommand struct {
	name string
	// synopsis is the usage lines the general usage lists and `NAME --help` prints first.
	synopsis string
	offline  func(args []string, out io.Writer) error
}

// subcommands is every subcommand, in the order the general usage lists them.
var subcommands = []subcommand{
	{name: "plan", offline: runPlan, synopsis: `kubectl prism plan --inventory FILE... --policy FILE [--node-labels NODE:k=v,...] [--classes FILE] [--cephcluster FILE] [-o yaml|json|rook|cephadm]
                          plan offline from prism-agent inventory JSON files: DB slots per node,
                          the Rook storage section, or cephadm OSD service specs`},
	{name: "ioclass", offline: runIOClass, synopsis: `kubectl prism ioclass [--policy FILE]
                          the Open CAS IO class CSV a ClassificationPolicy compiles to (default: Prism's Ceph policy)
kubectl prism ioclass explain [--policy FILE] --io size=4096,dir=write,comm=bstore_kv_sync
                          which class an IO gets, rule by rule, with the kernel classifier's semantics`},
	{name: "simulate", offline: runSimulate, synopsis: `kubectl prism simulate (--trace FILE | --synthetic zipf) [--policy FILE] [--fast-size 1%..20%]
                          replay a trace through the classifier and an Open CAS cache model: α, β per class,
                          flushes and QLC writes against fast-tier size, beside the offline optimum`},
	{name: "nodes", synopsis: `kubectl prism nodes       every StorageNode: devices per tier, eligible devices, policy, inventory age`},
	{name: "devices", synopsis: `kubectl prism devices [-o wide]
                          every device of every node: model, size, tier and why, eligibility;
                          wide adds the vendor and its source, the inferred tier and the evidence`},
	{name: "selection", synopsis: `kubectl prism selection   every HybridStoragePolicy: the devices chosen per node and why others were not`},
	{name: "endurance", synopsis: `kubectl prism endurance   every node's worst drive, sorted by soonest wear-out: wear, date, DWPD spent vs rated, WAF`},
	{name: "osds", synopsis: `kubectl prism osds        per policy: OSDs spilled and forecast to spill within 14 days; every OSD the agents
                          read: DB slot use, RocksDB levels kept on the fast tier, spill forecast, slot advice, the table of data classes (occupied, written/day, share, β)
                          and how many slots of each advised size the fast devices hold`},
}

const clusterFlagsUsage = `Flags:
  --kubeconfig FILE   kubeconfig to use (default $KUBECONFIG or ~/.kube/config)
  --context NAME      kubeconfig context to use
  -o wide             (devices) more columns
`

// generalUsage is `kubectl prism --help`: every subcommand's synopsis.
func generalUsage() string {
	var b strings.Builder
	b.WriteString("kubectl prism: Prism's view of the cluster's storage.\n\nUsage:\n")
	for _, c := range subcommands {
		b.WriteString("  " + strings.ReplaceAll(c.synopsis, "\n", "\n  ") + "\n")
	}
	b.WriteString("  kubectl prism SUBCOMMAND --help\n                            that subcommand's usage and flags\n\n")
	return b.String() + clusterFlagsUsage
}

func main() {
	terminal := false
	if fi, err := os.Stdout.Stat(); err == nil {
		terminal = fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
	}
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr, terminal))
}

// dispatch runs `kubectl prism ARGS...` and returns the exit code: 0, 1 when the subcommand
// failed, 2 for a usage error. `--help` or `-h` answers with the usage on stdout and 0.
func dispatch(args []string, stdout, stderr io.Writer, terminal bool) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, generalUsage())
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			return dispatch([]string{args[1], "--help"}, stdout, stderr, terminal)
		}
		fmt.Fprint(stdout, generalUsage())
		return 0
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "kubectl prism: unknown subcommand %q; see kubectl prism --help\n", name)
		return 2
	}
	var err error
	if c.offline != nil {
		err = c.offline(args[1:], stdout)
	} else {
		err = runCluster(c.name, args[1:], stdout, terminal)
	}
	var help *helpRequest
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		printHelp(stdout, c, help.flags)
		return 0
	case errors.As(err, new(*usageError)):
		fmt.Fprintf(stderr, "kubectl prism %s: %v\n\n%s\n", c.name, err, c.synopsis)
		return 2
	}
	fmt.Fprintf(stderr, "kubectl prism %s: %v\n", c.name, err)
	return 1
}

func lookup(name string) (subcommand, bool) {
	for _, c := range subcommands {
		if c.name == name {
			return c, true
		}
	}
	return subcommand{}, false
}

// printHelp prints a subcommand's synopsis and the flags of the flag set it parsed.
func printHelp(out io.Writer, c subcommand, flags *flag.FlagSet) {
	fmt.Fprintf(out, "Usage:\n  %s\n\n", strings.ReplaceAll(c.synopsis, "\n", "\n  "))
	fmt.Fprintln(out, "Flags:")
	flags.SetOutput(out)
	flags.PrintDefaults()
}

// helpRequest is a subcommand's answer to --help or -h: its parsed flag set, to list.
type helpRequest struct{ flags *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested" }

// usageError is a bad flag or argument: exit code 2 and the synopsis.
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

// parseFlags parses a subcommand's flags without the flag package's own printing: --help
// becomes a helpRequest, a bad flag a usageError, so that dispatch decides what is printed where.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return &helpRequest{flags: fs}
	case err != nil:
		return &usageError{err: err}
	}
	return nil
}

// clusterFlags is the flag set of the subcommands that read the cluster.
func clusterFlags(name string) (fs *flag.FlagSet, kubeconfig, kubecontext, output *string, requestTimeout *time.Duration) {
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	kubeconfig = fs.String("kubeconfig", "", "kubeconfig to use (default $KUBECONFIG or ~/.kube/config)")
	kubecontext = fs.String("context", "", "kubeconfig context to use")
	output = fs.String("o", "", "output format: wide (devices only: more columns)")
	requestTimeout = fs.Duration("request-timeout", 0, "how long to wait for each request to the API server, as kubectl's flag (0: no limit)")
	return fs, kubeconfig, kubecontext, output, requestTimeout
}

// runCluster runs a subcommand that reads the cluster: nodes, devices, selection, endurance, osds.
func runCluster(cmd string, args []string, out io.Writer, terminal bool) error {
	fs, kubeconfig, kubecontext, output, requestTimeout := clusterFlags(cmd)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *requestTimeout < 0 {
		return &usageError{fmt.Errorf("--request-timeout %s: must not be negative", *requestTimeout)}
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *output != "" && (*output != "wide" || cmd != "devices") {
		return &usageError{fmt.Errorf("-o %q: only devices takes -o wide", *output)}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: *kubecontext}).ClientConfig()
	if err != nil {
		return err
	}
	// As kubectl: no deadline of its own (a slow API server is waited for, Ctrl-C stops it),
	// its request timeout and its client-side rate limits.
	cfg.Timeout = *requestTimeout
	cfg.QPS, cfg.Burst = 50, 300
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		return err
	}
	ctx := context.Background()
	if cmd == "selection" {
		list := &prismv1.HybridStoragePolicyList{}
		if err := c.List(ctx, list); err != nil {
			return err
		}
		return report.Selection(out, list.Items)
	}
	list := &prismv1.StorageNodeList{}
	if err := c.List(ctx, list); err != nil {
		return err
	}
	switch cmd {
	case "devices":
		return report.Devices(out, list.Items, *output == "wide")
	case "osds":
		return report.OSDs(out, list.Items, time.Now())
	case "endurance":
		return report.Endurance(out, list.Items, time.Now(), terminal)
	}
	return report.Nodes(out, list.Items, time.Now())
}
