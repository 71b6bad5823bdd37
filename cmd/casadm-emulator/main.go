// Command casadm-emulator is an emulator of Open CAS's casadm for tests: the
// node agent runs it exactly as it runs casadm (same argv, installed on PATH
// under the name casadm), and it answers with casadm's formats, exit codes
// and messages, backed by a persistent model of caches, cores, IO classes,
// parameters and cache lines kept in the JSON file $CASADM_EMULATOR_STATE.
// $CASADM_EMULATOR_RELEASE=v26.03.2 prints that release's formats where they
// differ from open-cas-linux master's (release.go); unset, master's.
// It is NOT Open CAS: no kernel module, no data, no block devices. `-V`
// says so ("emulator" in both version rows).
//
// Emulator-only verbs (never valid for the real casadm):
//
//	--emulator-add-device --device PATH --size BYTES [--kernel-name /dev/X] [--filesystem TYPE] [--partitions]
//	--emulator-remove-device --device PATH
//	--emulator-io --cache-id N --core-id M --io 'size=4096,dir=write,comm=...,lba=0' [--count K] [--stride BYTES]
//	--emulator-fail-cache N
//	--emulator-reboot
//	--emulator-dump
//
// See docs/cache.md for what it models and what it does not.
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prism-storage/prism/internal/host/casadm"
)

// Version rows of -V: obviously not a real module or CLI, yet parseable as
// a release (year.month.patch.build.suffix) by internal/host/casadm.
const (
	emulatorModuleVersion = "26.06.0.0000.emulator"
	emulatorCLIVersion    = "26.06.0.0000.emulator"
)

// cli is one invocation.
type cli struct {
	prog           string
	stdin          io.Reader
	stdout, stderr io.Writer
	st             *State
	now            int64
	// rel is whose formats to print ($CASADM_EMULATOR_RELEASE).
	rel release
	// dirty is set by commands that change the state.
	dirty bool
	a     args
}

func (c *cli) outf(format string, a ...any) { fmt.Fprintf(c.stdout, format, a...) }
func (c *cli) errf(format string, a ...any) { fmt.Fprintf(c.stderr, format, a...) }

// try is casadm's print_info (LOG_INFO: stdout).
func (c *cli) try() { c.outf("Try `%s --help | -H' for more information.\n", c.prog) }

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run executes one casadm (or emulator) command and returns its exit code.
func run(argv []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	rel, err := releaseFrom(getenv(ReleaseEnv))
	if err != nil {
		fmt.Fprintf(stderr, "casadm-emulator: %v\n", err)
		return 1
	}
	s, st, err := openStore(getenv(StateEnv))
	if err != nil {
		fmt.Fprintf(stderr, "casadm-emulator: %v\n", err)
		return 1
	}
	defer s.close()
	now := time.Now().Unix()
	if v := getenv(NowEnv); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			now = n
		}
	}
	prog := casadm.Command
	if len(argv) > 0 {
		prog = argv[0]
	}
	c := &cli{prog: prog, stdin: stdin, stdout: stdout, stderr: stderr, st: st, now: now, rel: rel, a: newArgs()}
	var rc int
	if len(argv) > 1 && strings.HasPrefix(argv[1], "--emulator-") {
		rc = c.emulatorVerb(argv[1:])
	} else {
		rc = c.parse(argv)
	}
	if c.dirty {
		if err := s.save(st); err != nil {
			fmt.Fprintf(stderr, "casadm-emulator: saving state: %v\n", err)
			return 1
		}
	}
	return rc
}
