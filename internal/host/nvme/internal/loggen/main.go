// Command loggen writes internal/host/nvme/testdata/logs from the recorded values
// in recordings.go: one directory per drive holding log-<id>.bin pages and a
// SOURCE.md naming where each value came from.
//
//	go generate ./internal/host/nvme/
package main

import (
	"flag"
	"log"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	out := flag.String("out", "testdata/logs", "fixture root directory")
	flag.Parse()
	for _, r := range all() {
		dir := filepath.Join(*out, r.Dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			log.Fatal(err)
		}
		files := render(r)
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), files[n], 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
}

// render returns the files of one fixture directory.
func render(r recording) map[string][]byte {
	files := map[string][]byte{"SOURCE.md": sourceMD(r)}
	for _, l := range r.Logs {
		files[fileName(l.ID)] = encode(l)
	}
	return files
}
