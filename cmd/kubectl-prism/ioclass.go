package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
)

// runIOClass prints a ClassificationPolicy as the Open CAS IO class CSV, or explains which
// class an IO gets: `kubectl prism ioclass --policy FILE` and `... ioclass explain --io SPEC`.
func runIOClass(args []string, out io.Writer) error {
	explain := len(args) > 0 && args[0] == "explain"
	if explain {
		args = args[1:]
	}
	fs := flag.NewFlagSet("ioclass", flag.ContinueOnError)
	policyFile := fs.String("policy", "", "a ClassificationPolicy manifest (default: Prism's Ceph OSD policy)")
	ioSpec := fs.String("io", "", "explain: the IO, e.g. size=4096,dir=write,comm=bstore_kv_sync,lba=2048")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	policy, cfg, err := compiledClassification(*policyFile)
	if err != nil {
		return err
	}
	if !explain {
		for _, w := range ioclass.Warnings(&policy.Spec) {
			fmt.Fprintln(os.Stderr, "warning:", w)
		}
		_, err := io.WriteString(out, cfg.CSV())
		return err
	}
	if *ioSpec == "" {
		return fmt.Errorf("explain needs --io, e.g. --io size=4096,dir=write,comm=bstore_kv_sync")
	}
	req, err := ioclass.ParseIO(*ioSpec)
	if err != nil {
		return fmt.Errorf("--io: %w", err)
	}
	ev, err := ioclass.NewEvaluator(cfg)
	if err != nil {
		return err
	}
	class, steps := ev.Trace(req)
	names := map[int]string{0: "unclassified"}
	for _, c := range policy.Spec.Classes {
		names[int(c.ID)] = c.Name
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tNAME\tMATCHED\tRULE")
	for _, s := range steps {
		mark := "no"
		if s.Matched {
			mark = "yes"
			if s.Stopped {
				mark = "yes, done: stop"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", s.ID, names[s.ID], mark, s.Rule)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "=> class %d (%s)\n", class, names[class])
	return nil
}

// compiledClassification is readClassification's policy and its compiled classes.
func compiledClassification(path string) (*prismv1.ClassificationPolicy, ioclass.Config, error) {
	policy, err := readClassification(path)
	if err != nil {
		return nil, ioclass.Config{}, err
	}
	cfg, err := ioclass.Compile(&policy.Spec)
	return policy, cfg, err
}

// readClassification reads a ClassificationPolicy manifest, or gives Prism's Ceph OSD policy
// when path is "".
func readClassification(path string) (*prismv1.ClassificationPolicy, error) {
	if path == "" {
		return ioclass.DefaultCephOSD(), nil
	}
	p := &prismv1.ClassificationPolicy{}
	if err := readObject(path, "ClassificationPolicy", p); err != nil {
		return nil, err
	}
	return p, nil
}
