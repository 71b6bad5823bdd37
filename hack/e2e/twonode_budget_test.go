// Tests of what the two-node e2e gives each guest beyond the link (docs/decisions/0054): the
// doubled waits and limits, the settings run.sh refuses, Ceph's mon, mgr and Rook's operator
// kept on node 1, and node 2's readiness only once its images are in. Run with bash against
// stubs, without a guest.
package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
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

// stubRook is what rook_chart and rook_cluster call, stubbed: kubectl's apply prints what it
// is given, helm its arguments, one a line (into rook_chart's helm.log, in $STUB_LOGS); the
// waits and marks do nothing.
const stubRook = `k() { if [[ $1 == apply && $2 == -f ]]; then cat; fi; }
helm() { printf '%s\n' "$@"; }
mark() { :; }; wait_for() { :; }; sleep() { :; }; tee() { cat >/dev/null; }; fail() { echo "FAIL $*" >&2; exit 1; }
logs=$STUB_LOGS ROOK_CEPH_TIMEOUT=300 E2E_ROOK_IMAGE=prism.local/e2e/rook-ceph:v1
`

// TestTwoNodeCephOnNode1: with two nodes the CephCluster puts the mon and the mgr on node 1 by
// its hostname and Rook's chart its operator, so node 2 runs only its drives' daemons; with
// one node the CephCluster is the same text without the placement, and the chart gets no node
// selector.
func TestTwoNodeCephOnNode1(t *testing.T) {
	needBash(t)
	src := read(t, "guest-cluster.sh")
	fns := function(t, src, "rook_placement") + function(t, src, "rook_operator_pin") +
		function(t, src, "rook_cluster") + function(t, src, "rook_chart") + stubRook
	node1, err := bashOut(t, nil, function(t, src, "node_identity")+`read -r name _ <<<"$(node_identity 1)"; echo "$name"`)
	if err != nil {
		t.Fatal(err)
	}
	node1 = strings.TrimSpace(node1)
	logs := "STUB_LOGS=" + t.TempDir()
	one, err := bashOut(t, []string{logs, "E2E_NODES="}, fns+"rook_cluster")
	if err != nil {
		t.Fatalf("rook_cluster, one node: %v", err)
	}
	two, err := bashOut(t, []string{logs, "E2E_NODES=2"}, fns+"rook_cluster")
	if err != nil {
		t.Fatalf("rook_cluster, two nodes: %v", err)
	}
	if strings.Contains(one, "placement") {
		t.Errorf("one node's CephCluster has a placement:\n%s", one)
	}
	var c struct {
		Spec struct {
			Storage   map[string]any `json:"storage"`
			Placement map[string]struct {
				NodeAffinity struct {
					Required struct {
						Terms []struct {
							Exprs []struct {
								Key, Operator string
								Values        []string
							} `json:"matchExpressions"`
						} `json:"nodeSelectorTerms"`
					} `json:"requiredDuringSchedulingIgnoredDuringExecution"`
				} `json:"nodeAffinity"`
			} `json:"placement"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(two), &c); err != nil {
		t.Fatalf("two nodes' CephCluster is not YAML: %v\n%s", err, two)
	}
	if len(c.Spec.Placement) != 2 || c.Spec.Storage["useAllNodes"] != false {
		t.Errorf("two nodes' CephCluster: placement %+v, storage %v; want mon and mgr, storage as before", c.Spec.Placement, c.Spec.Storage)
	}
	for _, d := range []string{"mon", "mgr"} {
		terms := c.Spec.Placement[d].NodeAffinity.Required.Terms
		if len(terms) != 1 || len(terms[0].Exprs) != 1 || terms[0].Exprs[0].Key != "kubernetes.io/hostname" ||
			terms[0].Exprs[0].Operator != "In" || strings.Join(terms[0].Exprs[0].Values, ",") != node1 {
			t.Errorf("%s's placement %+v; want required kubernetes.io/hostname In [%s]", d, terms, node1)
		}
	}
	// Two nodes' text is one node's with the placement block added, nothing else.
	block, _ := bashOut(t, []string{"E2E_NODES=2"}, fns+"rook_placement")
	if strings.Replace(two, block, "", 1) != one {
		t.Errorf("two nodes' CephCluster is not one node's plus the placement:\n%s\n---\n%s", two, one)
	}
	// Rook's chart: the operator's node selector on two nodes only.
	pin := "nodeSelector.kubernetes\\.io/hostname=" + node1
	for _, c := range []struct {
		nodes string
		want  bool
	}{{"", false}, {"2", true}} {
		dir := t.TempDir()
		if _, err := bashOut(t, []string{"STUB_LOGS=" + dir, "E2E_NODES=" + c.nodes}, fns+"rook_chart"); err != nil {
			t.Fatalf("rook_chart, E2E_NODES=%q: %v", c.nodes, err)
		}
		argv := read(t, filepath.Join(dir, "helm.log"))
		if got := strings.Contains(argv, "--set-string\n"+pin+"\n"); got != c.want {
			t.Errorf("E2E_NODES=%q: helm's arguments have %s: %v, want %v\n%s", c.nodes, pin, got, c.want, argv)
		}
		if !strings.Contains(argv, "upgrade\n--install\nrook-ceph\n") {
			t.Errorf("the stubbed helm did not see rook_chart's install:\n%s", argv)
		}
	}
}

// TestTwoNodeWorkerReadyAfterImages: node 2 tells node 1 it is ready only once its images are in
// containerd (its pods never pull), then waits for node 1's done.
func TestTwoNodeWorkerReadyAfterImages(t *testing.T) {
	needBash(t)
	xfer := t.TempDir()
	fn := strings.ReplaceAll(function(t, read(t, "guest-cluster.sh"), "worker_stage"), "/mnt/xfer", xfer)
	if err := os.WriteFile(filepath.Join(xfer, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stubs := `imported() { [[ -e ` + xfer + `/node2-ready ]] && echo "imported after node2-ready" || echo imported; }
mark() { echo "mark $*"; }; copy_pod_logs() { :; }; sleep() { :; }; out=/nonexistent logs=/nonexistent
`
	got, err := bashOut(t, nil, stubs+fn+"worker_stage")
	want := "imported\nmark node 2 ready for node 1's stage\nmark node 1 is done\n"
	if err != nil || got != want {
		t.Errorf("worker_stage:\n%s(%v)\nwant\n%s", got, err, want)
	}
	if _, err := os.Stat(filepath.Join(xfer, "node2-ready")); err != nil {
		t.Errorf("no node2-ready for node 1: %v", err)
	}
}
