package loopdevs

import (
	"testing"

	"github.com/prism-storage/prism/internal/host/procfs"
)

// HostProc is where a root test's partitioner looks for the processes that hold its loop
// devices open: this machine's /proc, without the test's ancestors (a sandbox's supervisor
// may hide its files even from root, and none of them opened the test's loops).
func HostProc(tb testing.TB) procfs.Proc {
	tb.Helper()
	p, err := procfs.Proc{Dir: "/proc"}.IgnoringAncestors()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
