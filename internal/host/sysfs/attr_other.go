//go:build !unix

package sysfs

import "os"

// readAttr reads a sysfs attribute (os.ReadFile where there are no unix syscalls; sysfs
// itself is Linux's, so this serves fixture trees only).
func readAttr(path string) ([]byte, error) { return os.ReadFile(path) }
