package e2e_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestWaitForBacksOff runs wait_for against a condition that holds after an hour, with a sleep
// that only moves bash's clock: it tries every 2 s for a minute, every 10 s to the fifth, then
// every 30 s, and so asks about 160 times in the hour instead of 1800.
func TestWaitForBacksOff(t *testing.T) {
	needBash(t)
	src := read(t, "guest-cluster.sh")
	script := function(t, src, "wait_interval") + function(t, src, "wait_for") + `
mark() { echo "mark $*"; }
fail() { echo "FAIL $*"; exit 1; }
sleep() { echo "sleep $1"; SECONDS=$((SECONDS + $1)); }
tries=0
ready() { tries=$((tries + 1)); ((SECONDS >= 3600)); }
wait_for 5400 "an hour" ready
echo "tries $tries"
`
	out, err := bashOut(t, nil, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var sleeps []int
	for _, m := range regexp.MustCompile(`(?m)^sleep (\d+)$`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		sleeps = append(sleeps, n)
	}
	elapsed := 0
	for i, s := range sleeps {
		want := 30
		switch {
		case elapsed < 60:
			want = 2
		case elapsed < 300:
			want = 10
		}
		if s != want {
			t.Fatalf("sleep %d (after %d s of waiting) is %d s, want %d", i+1, elapsed, s, want)
		}
		elapsed += s
	}
	tries := regexp.MustCompile(`tries (\d+)`).FindStringSubmatch(out)
	if tries == nil {
		t.Fatalf("no tries count:\n%s", out)
	}
	if n, _ := strconv.Atoi(tries[1]); n > 200 {
		t.Errorf("an hour's wait tried %d times, want at most 200", n)
	}
	if !strings.Contains(out, "mark an hour (") {
		t.Errorf("no mark at the end of the wait:\n%s", out)
	}
	// It still gives up at its limit.
	out, _ = bashOut(t, nil, function(t, src, "wait_interval")+function(t, src, "wait_for")+`
mark() { echo "mark $*"; }
fail() { echo "FAIL $*"; exit 1; }
sleep() { SECONDS=$((SECONDS + $1)); }
wait_for 600 "never" false`)
	if !strings.Contains(out, "FAIL timed out after 600 s waiting for never") {
		t.Errorf("a wait that never holds printed %q, want its timeout", out)
	}
}

// TestBenchWritesAsksCephOnlyOnceTheOSDPodRuns: the write count's wait for the QLC-alone OSD
// asks the ceph CLI only when Rook's pod of that OSD runs.
func TestBenchWritesAsksCephOnlyOnceTheOSDPodRuns(t *testing.T) {
	needBash(t)
	m := regexp.MustCompile(`(?ms)^  bw_alone_up\(\) \{\n.*?^  \}\n`).FindString(read(t, "bench-writes.sh"))
	if m == "" {
		t.Fatal("no bw_alone_up in bench-writes.sh's bw_setup")
	}
	for _, c := range []struct {
		phase, dump, want string
	}{
		{"Pending", `{"osds":[{"osd":1,"up":1}]}`, "down; ceph asked 0"},
		{"", `{"osds":[{"osd":1,"up":1}]}`, "down; ceph asked 0"},
		{"Running", `{"osds":[{"osd":1,"up":0}]}`, "down; ceph asked 1"},
		{"Running", `{"osds":[{"osd":0,"up":1},{"osd":1,"up":1}]}`, "up; ceph asked 1"},
	} {
		script := m + `
bw_alone_id=1 calls=$(mktemp)
k() { [[ "$*" == "-n rook-ceph get pods -l ceph-osd-id=1 -o jsonpath={.items[*].status.phase}" ]] && echo "$PHASE"; }
ceph_op() { echo x >>"$calls"; echo "$DUMP"; }  # in the pipeline's subshell: counted in a file
if bw_alone_up; then echo -n up; else echo -n down; fi
echo "; ceph asked $(grep -c x "$calls")"
`
		out, _ := bashOut(t, []string{"PHASE=" + c.phase, "DUMP=" + c.dump}, script)
		if strings.TrimSpace(out) != c.want {
			t.Errorf("pod %q, osd dump %s: %q, want %q", c.phase, c.dump, strings.TrimSpace(out), c.want)
		}
	}
}
