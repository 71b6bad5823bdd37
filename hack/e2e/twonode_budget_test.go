// Tests of what the two-node e2e gives each guest beyond the link (docs/decisions/0054): the
// doubled waits and limits, and the settings run.sh refuses. Run with bash against stubs,
// without a guest.
package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTwoNodeWaitsAndLimitsDoubled: each wait (E2E_TIMEOUT) and the suite's limit are twice a lone
// guest's on two nodes, as run.sh doubles the guest's limit; an E2E_TIMEOUT given is kept; one
// node's are as before.
func TestTwoNodeWaitsAndLimitsDoubled(t *testing.T) {
	needBash(t)
	run := read(t, "run.sh")
	wait := function(t, run, "wait_seconds")
	for _, c := range []struct{ nodes, set, want string }{
		{"1", "", "900"}, {"2", "", "1800"}, {"1", "600", "600"}, {"2", "600", "600"},
	} {
		got, err := bashOut(t, []string{"E2E_TIMEOUT=" + c.set}, `[[ -n $E2E_TIMEOUT ]] || unset E2E_TIMEOUT; `+wait+`wait_seconds "$1"`, c.nodes)
		if err != nil || strings.TrimSpace(got) != c.want {
			t.Errorf("wait_seconds %s with E2E_TIMEOUT=%q = %q, %v; want %s", c.nodes, c.set, got, err, c.want)
		}
	}
	if !strings.Contains(run, `echo "E2E_TIMEOUT=$(wait_seconds "$nodes")"`) {
		t.Error("run.sh does not write wait_seconds into the guest's env file")
	}
	src := read(t, "guest-cluster.sh")
	fns := function(t, src, "drill_env") + function(t, src, "suite_timeout")
	for _, c := range []struct{ nodes, drills, want string }{
		{"", "", "100m"}, {"1", "", "100m"}, {"2", "", "200m"}, {"", "1", "190m"},
	} {
		got, err := bashOut(t, []string{"E2E_STAGE=chain", "E2E_NODES=" + c.nodes, "E2E_DRILLS=" + c.drills}, fns+`suite_timeout`)
		if err != nil || strings.TrimSpace(got) != c.want {
			t.Errorf("suite_timeout with E2E_NODES=%q E2E_DRILLS=%q = %q, %v; want %s", c.nodes, c.drills, got, err, c.want)
		}
	}
}

// TestTwoNodeRefusals: run.sh refuses, before anything is built, the settings that assume one
// node, the write count among them; two nodes alone pass on to the root check (a fake id here
// says uid 1000, so the script stops there instead of building).
func TestTwoNodeRefusals(t *testing.T) {
	needBash(t)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "id"), []byte("#!/bin/sh\necho 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stage string
		env   []string
		want  int
	}{
		{"chain", nil, 3},
		{"chain", []string{"PRISM_E2E_BENCH_WRITES_MIB=64"}, 2},
		{"chain", []string{"PRISM_E2E_DRILLS=1"}, 2},
		{"chain", []string{"PRISM_E2E_UPGRADE_FROM=abc123"}, 2},
		{"chain", []string{"PRISM_E2E_HAND=/tmp"}, 2},
		{"prism", nil, 2},
	} {
		cmd := exec.Command("bash", "run.sh", c.stage)
		cmd.Env = append(os.Environ(), append([]string{"PATH=" + bin + ":" + os.Getenv("PATH"), "PRISM_E2E_NODES=2"}, c.env...)...)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != c.want {
			t.Errorf("PRISM_E2E_NODES=2 %v run.sh %s: %v (%s); want exit %d", c.env, c.stage, err, out, c.want)
		}
	}
}
