// Tests of what each node of two does when the other is gone (docs/decisions/0054): node 1's
// waits stop at node 2's failure or its guest's end instead of after E2E_TIMEOUT (30 min), node
// 2's at node 1's end, and the host's watcher that tells node 1 its peer's guest has ended. Run
// with bash against stubs, without a guest.
package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// peerStubs stand in for what wait_for and fail call: marks and failures printed, each sleep
// counted (a wait that goes on past 50 sleeps is one that did not see its peer gone).
const peerStubs = `mark() { echo "mark $*"; }
fail() { echo "FAIL $*"; exit 1; }
n=0; sleep() { n=$((n + 1)); ((n < 50)) || { echo "still waiting after 50 sleeps"; exit 3; }; }
`

// TestTwoNodeWaitsStopWhenThePeerIsGone: on two nodes, node 1's wait fails at once, with the
// reason, when node 2 failed (xfer/node2-failed) or its guest ended (xfer/node2-exited); node 2's
// fails at once when node 1 is done (xfer/done); neither reacts to its own file, and a wait whose
// command succeeds ends with its mark as before. One node's waits read none of these files.
func TestTwoNodeWaitsStopWhenThePeerIsGone(t *testing.T) {
	needBash(t)
	src := read(t, "guest-cluster.sh")
	for _, c := range []struct {
		name, nodes, node, file, body, want string
	}{
		{"node 2 failed", "2", "1", "node2-failed", "the link to the other node (no interface with MAC 52:54:00:e2:e0:02)\n",
			"FAIL waiting for the peer's part: node 2 failed: the link to the other node (no interface with MAC 52:54:00:e2:e0:02)\n"},
		{"node 2's guest ended", "2", "1", "node2-exited", "",
			"FAIL waiting for the peer's part: node 2's guest has ended (its console: console-2.log)\n"},
		{"node 1 done", "2", "2", "done", "",
			"FAIL waiting for the peer's part: node 1 is done (passed or failed: its marks say which)\n"},
		{"node 1 reads no done", "2", "1", "done", "", "mark the peer's part (N s)\n"},
		{"node 2 reads not its own failure", "2", "2", "node2-failed", "x\n", "mark the peer's part (N s)\n"},
		{"nothing gone", "2", "1", "", "", "mark the peer's part (N s)\n"},
		{"one node", "", "", "node2-failed", "x\n", "mark the peer's part (N s)\n"},
		{"one node, done", "", "", "done", "", "mark the peer's part (N s)\n"},
	} {
		xfer := t.TempDir()
		if c.file != "" {
			if err := os.WriteFile(filepath.Join(xfer, c.file), []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fns := strings.ReplaceAll(function(t, src, "peer_gone")+function(t, src, "wait_interval")+function(t, src, "wait_for"), "/mnt/xfer", xfer)
		// The command succeeds at its third try; a wait that stops earlier saw its peer gone.
		script := peerStubs + fns + `tries=0; ready() { tries=$((tries + 1)); ((tries >= 3)); }
wait_for 1800 "the peer's part" ready`
		got, _ := bashOut(t, []string{"E2E_NODES=" + c.nodes, "E2E_NODE=" + c.node}, script)
		// SECONDS may tick between the start and the mark.
		if got = regexp.MustCompile(`\(\d+ s\)`).ReplaceAllString(got, "(N s)"); got != c.want {
			t.Errorf("%s (E2E_NODES=%q E2E_NODE=%q, xfer/%s): wait_for printed %q, want %q", c.name, c.nodes, c.node, c.file, got, c.want)
		}
	}
	// A node 2 whose QEMU ended just after it started is seen by node 1 at its own start.
	if !strings.Contains(src, `gone=$(peer_gone) && fail "$gone"`) {
		t.Error("guest-cluster.sh does not look for a gone peer when it sets up its link")
	}
}

// TestTwoNodeFailTellsNode1: node 2's fail leaves its reason in the hand-over share for node 1
// (peer_gone); node 1 and one node write nothing there.
func TestTwoNodeFailTellsNode1(t *testing.T) {
	needBash(t)
	src := read(t, "guest-cluster.sh")
	for _, node := range []string{"2", "1", ""} {
		xfer := t.TempDir()
		fn := strings.ReplaceAll(function(t, src, "fail"), "/mnt/xfer", xfer)
		stubs := `mark() { :; }; collect() { :; }; linger() { :; }; release_peer() { :; }
`
		if _, err := bashOut(t, []string{"E2E_NODE=" + node}, stubs+fn+`fail "the link to the other node (no interface)"`); err == nil {
			t.Errorf("E2E_NODE=%q: fail exited 0", node)
		}
		b, err := os.ReadFile(filepath.Join(xfer, "node2-failed"))
		switch {
		case node == "2" && (err != nil || string(b) != "the link to the other node (no interface)\n"):
			t.Errorf("node 2's fail: xfer/node2-failed %q, %v; want the reason", b, err)
		case node != "2" && err == nil:
			t.Errorf("E2E_NODE=%q: fail wrote xfer/node2-failed %q", node, b)
		}
	}
	// The share is mounted before the link is set up: the link's failure reaches node 1 too.
	if m, l := strings.Index(src, "prism-xfer /mnt/xfer"), strings.Index(src, `two_node_link "${E2E_NIC_MAC:-}"`); m < 0 || l < 0 || m > l {
		t.Errorf("guest-cluster.sh mounts the hand-over share (at %d) after setting up the link (at %d)", m, l)
	}
}

// TestTwoNodeHostWatchesNode2: run.sh's watcher writes the file node 1 reads (peer_gone) once node
// 2's guest process has ended, not before; run.sh starts it once node 2 runs and stops it when
// node 1 is done.
func TestTwoNodeHostWatchesNode2(t *testing.T) {
	needBash(t)
	run := read(t, "run.sh")
	file := filepath.Join(t.TempDir(), "node2-exited")
	script := `sleep() { command sleep 0.1; }
` + function(t, run, "watch_node2") + `command sleep 1 & guest=$!
watch_node2 "$guest" "$1" & w=$!
command sleep 0.3
[[ -e $1 ]] && echo "written while node 2 runs"
wait "$w"
[[ -e $1 ]] && echo "written after node 2 ended"`
	got, err := bashOut(t, nil, script, file)
	if err != nil || got != "written after node 2 ended\n" {
		t.Errorf("watch_node2: %q, %v; want the file only after node 2's process ended", got, err)
	}
	for _, want := range []string{`watch_node2 "$node2" "$work/xfer/node2-exited" >/dev/null 2>&1 &`, `kill "$watcher" 2>/dev/null || true`} {
		if !strings.Contains(run, want) {
			t.Errorf("run.sh lacks %s", want)
		}
	}
	if !strings.Contains(function(t, read(t, "guest-cluster.sh"), "peer_gone"), "/mnt/xfer/node2-exited") {
		t.Error("guest-cluster.sh's peer_gone does not read xfer/node2-exited, the file run.sh's watcher writes")
	}
	if s, k := strings.Index(run, "watch_node2 \"$node2\""), strings.Index(run, `kill "$watcher"`); s < 0 || k < s {
		t.Error("run.sh stops the watcher before it starts it")
	}
}
