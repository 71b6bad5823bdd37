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

// TestRookHealthLine renders watch_health's line from Rook's status of real CephClusters, as
// kubectl's go-template printer does (text/template over the object's JSON), and checks that
// the loop's MGR_MODULE_ERROR branch finds the failed module in it.
func TestRookHealthLine(t *testing.T) {
	tmpl := template.Must(template.New("rook_health").Parse(rookHealthTemplate(t)))
	render := func(obj map[string]any) string {
		var b strings.Builder
		if err := tmpl.Execute(&b, obj); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	object := func(path string, wrap bool) map[string]any {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if wrap { // a recorded status alone
			return map[string]any{"status": m}
		}
		return m
	}
	cases := []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"module failed (chain of 2026-11-26)", object("../../internal/plan/decide/testdata/chain-2026-11-26/hot-added/cephcluster.json", false),
			"HEALTH_ERR BLUESTORE_SLOW_OP_ALERT HEALTH_WARN: 1 OSD(s) experiencing slow operations in BlueStore; " +
				"MGR_MODULE_ERROR HEALTH_ERR: Module 'devicehealth' has failed: disk I/O error; (read 2026-11-26T14:07:19Z)"},
		{"healthy, no details (Rook v1.20.2, Ceph 20.2.4)", object("../../internal/plan/rook/testdata/rook-v1.20.2-ceph-20.2.4-status.json", true),
			"HEALTH_OK (read 2026-11-26T04:35:32Z)"},
		{"Rook has not read Ceph yet", map[string]any{"metadata": map[string]any{"name": "e2e"}}, "no status.ceph yet"},
	}
	for _, c := range cases {
		if got := render(c.obj); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}

	// The loop's grep, on the line it writes, names the module and stops at the check's end.
	line := "4100 01:02:03 mgr: rook-ceph-mgr-a-1=0  | rook: " + render(cases[0].obj)
	out, err := exec.Command("bash", "-c", `grep -o "Module '[^']*' has failed[^|;]*" <<<"$1" | head -1`, "bash", line).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "Module 'devicehealth' has failed: disk I/O error"; got != want {
		t.Errorf("MGR_MODULE_ERROR mark names %q, want %q", got, want)
	}
	if !strings.Contains(line, "MGR_MODULE_ERROR") {
		t.Errorf("the line has no MGR_MODULE_ERROR code for the loop to match: %q", line)
	}
}

// TestWatchHealthCallsCephRarely runs watch_health for 20 minutes against stubs: the minute's
// line comes from Rook's status, the ceph CLI is asked once in ten minutes, and a failed module
// is marked and diagnosed once.
func TestWatchHealthCallsCephRarely(t *testing.T) {
	dir := t.TempDir()
	script := function(t, read(t, "guest-cluster.sh"), "watch_health") + `
out=$1
mkdir -p "$out/state"
rounds=0
sleep() { ((rounds++ < 20)); }
uptime_s() { echo "$((rounds * 60))"; }
mgr_restarts() { echo "rook-ceph-mgr-a=0"; }
rook_health() {
  if ((rounds >= 3)); then echo "HEALTH_ERR MGR_MODULE_ERROR HEALTH_ERR: Module 'devicehealth' has failed: disk I/O error; (read now)"
  else echo "HEALTH_OK (read now)"; fi
}
ceph_op() { echo "$*" >>"$out/ceph-calls"; echo "cluster: id x"; }
mark() { echo "$*" >>"$out/marks"; }
ceph_diag() { echo "$1" >>"$out/diags"; }
watch_health
`
	if out, err := exec.Command("bash", "-c", script, "bash", dir).CombinedOutput(); err != nil {
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
