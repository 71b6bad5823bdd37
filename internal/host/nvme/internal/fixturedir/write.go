// Package fixturedir writes one generated fixture directory; the NVMe fixture generators
// (fixturegen: Identify pages, loggen: log pages) share it.
package fixturedir

import (
	"os"
	"path/filepath"
	"sort"
)

// Write creates root/dir and writes each file in it, in name order.
func Write(root, dir string, files map[string][]byte) error {
	path := filepath.Join(root, dir)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(path, n), files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}
