//go:build linux

package ceph

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// nsHelperArg makes the test binary a tiny helper instead of running tests: in a private
// mount namespace (the parent starts it with CLONE_NEWNS, and Go makes / private in it), it
// bind-mounts the test's directories over the host paths ceph-volume hard-codes
// (/etc/ceph, /var/lib/ceph, /var/log/ceph) and execs the command. ceph-volume thus works
// exactly as it does on a host, and the host's own Ceph directories are never written.
const nsHelperArg = "-prism-ceph-ns-exec"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == nsHelperArg {
		os.Exit(nsExec(os.Args[2:]))
	}
	// The partitioner logs through controller-runtime; without a logger controller-runtime
	// prints a "log.SetLogger(...) was never called" stack trace into the test output, which
	// reads like a panic (CI, 2026-11-26). The test logs the partitioner's results itself.
	logf.SetLogger(crzap.New(crzap.WriteTo(io.Discard)))
	os.Exit(m.Run())
}

// nsExec handles: bind=SRC:DST ... -- argv...
func nsExec(args []string) int {
	for len(args) > 0 && args[0] != "--" {
		src, dst, ok := strings.Cut(strings.TrimPrefix(args[0], "bind="), ":")
		if !ok || !strings.HasPrefix(args[0], "bind=") {
			fmt.Fprintf(os.Stderr, "ns helper: bad argument %q\n", args[0])
			return 2
		}
		if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
			fmt.Fprintf(os.Stderr, "ns helper: bind-mounting %s on %s: %v\n", src, dst, err)
			return 2
		}
		args = args[1:]
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "ns helper: no command")
		return 2
	}
	argv := args[1:]
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "ns helper: %v\n", err)
		return 2
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "ns helper: exec %s: %v\n", path, err)
	return 2
}
