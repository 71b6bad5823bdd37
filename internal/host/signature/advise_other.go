//go:build !(linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64))

package signature

import "os"

// adviseRandom does nothing here; see advise_linux.go.
func adviseRandom(*os.File) {}

// Prefetch does nothing here; see advise_linux.go.
func Prefetch(*os.File, int64) {}
