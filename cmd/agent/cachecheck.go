package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/node/opencas"
)

// runCacheCheck parses every casadm output the agent relies on with Prism's parsers, on a
// node with Open CAS; with --policy and --load-into-cache it also loads a compiled
// ClassificationPolicy into one cache, reads it back, and restores the cache's classes.
func runCacheCheck(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cache-check", flag.ContinueOnError)
	hostRoot := fs.String("host-root", "/", "where the host's / is (opencas.conf is read under it)")
	hostTools := fs.String("host-tools", "", "comma-separated tools to run in the host's mount namespace (nsenter), e.g. casadm from a pod")
	policyFile := fs.String("policy", "", "a ClassificationPolicy manifest to compile (default: none)")
	loadInto := fs.Int("load-into-cache", 0, "load the compiled policy into this cache id, read it back, then restore its classes (changes the cache's IO classes for a moment)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	exec := hostExec(*hostTools)
	results := opencas.CheckNode(ctx, exec, *hostRoot)
	if *policyFile != "" {
		csv, err := compilePolicyFile(*policyFile)
		res := opencas.CheckResult{What: "compile " + *policyFile, OK: err == nil, Detail: "compiled"}
		if err != nil {
			res.Detail = err.Error()
		}
		results = append(results, res)
		if err == nil && *loadInto > 0 {
			results = append(results, opencas.CheckLoad(ctx, exec, *loadInto, csv)...)
		}
	} else if *loadInto > 0 {
		return fmt.Errorf("--load-into-cache needs --policy")
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	failed := 0
	for _, r := range results {
		state := "OK"
		if !r.OK {
			state, failed = "FAIL", failed+1
		}
		detail := r.Detail
		if len(r.Unknown) > 0 {
			detail += "; columns Prism does not know: " + strings.Join(r.Unknown, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", state, r.What, detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d checks failed", failed, len(results))
	}
	return nil
}

func compilePolicyFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	p := &prismv1.ClassificationPolicy{}
	if err := yaml.UnmarshalStrict(data, p); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	cfg, err := ioclass.Compile(&p.Spec)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return cfg.CSV(), nil
}
