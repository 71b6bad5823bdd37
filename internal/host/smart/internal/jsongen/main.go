// Command jsongen writes internal/host/smart/testdata/<drive>/smartctl.json from
// `smartctl -x` text recordings (recordings.go) for drives whose smartctl
// JSON output is not publicly recorded. It transcribes, field for field,
// what the text shows into smartctl's JSON key names; anything the text does
// not show is left out, never filled in.
//
//	go generate ./internal/host/smart/
package main

import (
	"flag"
	"log"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("out", "testdata", "fixture root directory")
	flag.Parse()
	for _, r := range recordings {
		dir := filepath.Join(*out, r.Dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			log.Fatal(err)
		}
		for name, b := range render(r) {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
}

func render(r recording) map[string][]byte {
	return map[string][]byte{"smartctl.json": encodeJSON(r), "SOURCE.md": sourceMD(r)}
}
