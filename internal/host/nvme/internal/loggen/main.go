// Command loggen writes internal/host/nvme/testdata/logs from the recorded values
// in recordings.go: one directory per drive holding log-<id>.bin pages and a
// SOURCE.md naming where each value came from.
//
//	go generate ./internal/host/nvme/
package main

import (
	"flag"
	"log"

	"github.com/prism-storage/prism/internal/host/nvme/internal/fixturedir"
)

func main() {
	out := flag.String("out", "testdata/logs", "fixture root directory")
	flag.Parse()
	for _, r := range all() {
		if err := fixturedir.Write(*out, r.Dir, render(r)); err != nil {
			log.Fatal(err)
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
