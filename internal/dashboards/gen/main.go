// Command gen writes Prism's Grafana dashboards (internal/dashboards) as JSON
// files into charts/prism/files/dashboards, removing stale ones it generated,
// and the panel reference (titles, descriptions, queries) into the generated
// part of docs/dashboards.md.
//
//	go run ./internal/dashboards/gen                     # from the repository root
//	go generate ./internal/dashboards                    # the same, via go:generate
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prism-storage/prism/internal/dashboards"
)

func main() {
	out := flag.String("out", "charts/prism/files/dashboards", "directory to write the dashboard JSON files into")
	doc := flag.String("doc", "docs/dashboards.md", "Markdown file whose generated panel reference to update (empty: none)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *doc == "" {
		return
	}
	if err := updateDoc(*doc); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func updateDoc(path string) error {
	boards, err := dashboards.All()
	if err != nil {
		return err
	}
	ref, err := dashboards.Reference(boards)
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := dashboards.SpliceReference(string(doc), ref)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
		return err
	}
	fmt.Printf("gen: updated the panel reference in %s\n", path)
	return nil
}

func run(dir string) error {
	files, err := dashboards.Render()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Remove generated files that no dashboard produces any more.
	old, err := filepath.Glob(filepath.Join(dir, "prism-*.json"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if _, keep := files[filepath.Base(f)]; !keep {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("gen: wrote %s into %s\n", strings.Join(names, ", "), dir)
	return nil
}
