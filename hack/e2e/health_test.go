package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"text/template"
)

// rookHealthTemplate is the go-template rook_health hands to kubectl.
func rookHealthTemplate(t *testing.T) string {
	t.Helper()
	fn := function(t, read(t, "guest-cluster.sh"), "rook_health")
	m := regexp.MustCompile(`-o go-template='([^']*)'`).FindStringSubmatch(fn)
	if m == nil {
		t.Fatalf("rook_health has no go-template:\n%s", fn)
	}
	return m[1]
}

// recordedObject reads a recorded CephCluster (wrap: a recorded status alone) as kubectl's
// go-template printer sees it: the object's JSON.
func recordedObject(t *testing.T, path string, wrap bool) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if wrap {
		return map[string]any{"status": m}
	}
	return m
}

// TestRookHealthLine renders watch_health's line from Rook's status of real CephClusters, as
// kubectl's go-template printer does (text/template over the object's JSON).
func TestRookHealthLine(t *testing.T) {
	tmpl := template.Must(template.New("rook_health").Parse(rookHealthTemplate(t)))
	render := func(obj map[string]any) string {
		var b strings.Builder
		if err := tmpl.Execute(&b, obj); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	cases := []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"module failed (chain of 2026-11-26)", recordedObject(t, "../../internal/plan/decide/testdata/chain-2026-11-26/hot-added/cephcluster.json", false),
			"HEALTH_ERR BLUESTORE_SLOW_OP_ALERT HEALTH_WARN: 1 OSD(s) experiencing slow operations in BlueStore; " +
				"MGR_MODULE_ERROR HEALTH_ERR: Module 'devicehealth' has failed: disk I/O error; (read 2026-11-26T14:07:19Z)"},
		{"healthy, no details (Rook v1.20.2, Ceph 20.2.4)", recordedObject(t, "../../internal/plan/rook/testdata/rook-v1.20.2-ceph-20.2.4-status.json", true),
			"HEALTH_OK (read 2026-11-26T04:35:32Z)"},
		{"Rook has not read Ceph yet", map[string]any{"metadata": map[string]any{"name": "e2e"}}, "no status.ceph yet"},
	}
	for _, c := range cases {
		if got := render(c.obj); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestWatchHealthCallsCephRarely runs watch_health for 20 minutes against stubs, rook_health
// answering the lines its template renders from recorded CephClusters (healthy, then a failed
// module from the third minute): the minute's line comes from Rook's status, the ceph CLI is
// asked once in ten minutes, and the failed module is marked (named, without the rest of the
// line) and diagnosed once.
func TestWatchHealthCallsCephRarely(t *testing.T) {
	dir := t.TempDir()
	script := function(t, read(t, "guest-cluster.sh"), "watch_health") + `
out=$1
mkdir -p "$out/state"
rounds=0
sleep() { ((rounds++ < 20)); }
uptime_s() { echo "$((rounds * 60))"; }
mgr_restarts() { echo "rook-ceph-mgr-a=0"; }
rook_health() { if ((rounds >= 3)); then echo "$FAILED"; else echo "$HEALTHY"; fi; }
ceph_op() { echo "$*" >>"$out/ceph-calls"; echo "cluster: id x"; }
mark() { echo "$*" >>"$out/marks"; }
ceph_diag() { echo "$1" >>"$out/diags"; }
watch_health
`
	// Rook's status lines as rook_health's template renders them from recorded CephClusters.
	tmpl := template.Must(template.New("rook_health").Parse(rookHealthTemplate(t)))
	render := func(path string, wrap bool) string {
		var b strings.Builder
		if err := tmpl.Execute(&b, recordedObject(t, path, wrap)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	cmd := exec.Command("bash", "-c", script, "bash", dir)
	cmd.Env = append(os.Environ(),
		"FAILED="+render("../../internal/plan/decide/testdata/chain-2026-11-26/hot-added/cephcluster.json", false),
		"HEALTHY="+render("../../internal/plan/rook/testdata/rook-v1.20.2-ceph-20.2.4-status.json", true))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	calls := strings.Split(strings.TrimSpace(read(t, dir+"/ceph-calls")), "\n")
	if len(calls) != 2 || calls[0] != "-s" {
		t.Errorf("20 minutes of watch_health asked the ceph CLI %q, want -s twice (once in ten minutes)", calls)
	}
	timeline := strings.Split(strings.TrimSpace(read(t, dir+"/state/health-timeline.txt")), "\n")
	if len(timeline) != 22 {
		t.Errorf("%d timeline lines, want 20 of Rook's status and 2 of ceph -s:\n%s", len(timeline), strings.Join(timeline, "\n"))
	}
	if got, want := read(t, dir+"/marks"), "MGR_MODULE_ERROR: Module 'devicehealth' has failed: disk I/O error\n"; got != want {
		t.Errorf("marks %q, want %q", got, want)
	}
	if got := strings.Count(read(t, dir+"/diags"), "health-at-module-error"); got != 1 {
		t.Errorf("ceph_diag ran %d times, want once", got)
	}
}
