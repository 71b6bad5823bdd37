package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/bench/writes"
)

// heredoc is the body of the python3 here-document that follows the line of src ending with
// after, up to its PY line.
func heredoc(t *testing.T, src, after string) string {
	t.Helper()
	_, rest, ok := strings.Cut(src, after+"\n")
	if !ok {
		t.Fatalf("no line ending with %q", after)
	}
	body, _, ok := strings.Cut(rest, "\nPY\n")
	if !ok {
		t.Fatalf("no PY line after %q", after)
	}
	return body
}

// TestBenchWritesCountersReadByTheReport: the guest bench (hack/e2e/bench-writes.sh) writes
// what bench/writes' report reads: each run's line (bw_run) and the counters file around them
// (bw_counters), from an OSD's metadata as Ceph 20 prints it, through writes.Parse, which
// refuses unknown fields and missing counts.
func TestBenchWritesCountersReadByTheReport(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	src := read(t, "bench-writes.sh")
	runLine := heredoc(t, src, `<<'PY' >>"$bw_dir/runs.jsonl"`)
	countersDoc := heredoc(t, src, `<<'PY' >"$bw_dir/counters.json"`)
	dir := t.TempDir()
	py := func(code string, args ...string) string {
		t.Helper()
		out, err := exec.Command(python, append([]string{"-c", code}, args...)...).Output()
		if err != nil {
			t.Fatalf("python3: %v", err)
		}
		return string(out)
	}
	// Prism's per-OSD table around each run, as `prism-agent osds -o json` prints one OSD
	// (bw_osd_table keeps the OSD's entry): counters since the OSD started.
	tables := map[string]string{
		"before.json": `{"id": 0, "socket": "/host/var/lib/rook/exporter/rook-ceph-osd.0.asok", "time": "2026-12-07T04:00:00Z", "classes": [
			{"class": "wal", "occupiedBytes": 18874368, "writtenBytes": 20480},
			{"class": "sst", "occupiedBytes": 13631488, "writtenBytes": 12288},
			{"class": "objects", "occupiedBytes": 4096, "writtenBytes": 1196}]}`,
		"after.json": `{"id": 0, "socket": "/host/var/lib/rook/exporter/rook-ceph-osd.0.asok", "time": "2026-12-07T04:10:00Z", "classes": [
			{"class": "wal", "occupiedBytes": 37748736, "writtenBytes": 134238208},
			{"class": "sst", "occupiedBytes": 27262976, "writtenBytes": 40972288},
			{"class": "L0", "breakdown": true, "occupiedBytes": 27262976, "writtenBytes": 40960000},
			{"class": "objects", "occupiedBytes": 67108864, "writtenBytes": 67110060}]}`,
	}
	for name, body := range tables {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, after := filepath.Join(dir, "before.json"), filepath.Join(dir, "after.json")
	runs := py(runLine, "qlc-alone", "67108864", "0", "180355072", "612.3", "5.1 4.9 4.7", before, after) +
		py(runLine, "prism", "67108864", "150994944", "69206016", "540.0", "5.0 4.8 4.6", before, after)
	files := map[string]string{
		"runs.jsonl": runs,
		"osd-0-metadata.json": `{"ceph_version": "ceph version 20.2.4 (7f79373) tentacle (stable)", "cpu": "QEMU TCG CPU version 2.5+",
			"mem_total_kb": "12248776", "bluefs_dedicated_db": "1", "bluefs_db_size": "4290772992", "bluefs_db_dev_node": "/dev/dm-0",
			"bluestore_min_alloc_size": "65536"}`,
		"osd-2-metadata.json": `{"bluefs_dedicated_db": "0", "bluestore_min_alloc_size": "4096"}`,
		"osd-tree.txt":        "",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := writes.Parse([]byte(py(countersDoc, dir, "64", "0", "2")))
	if err != nil {
		t.Fatalf("the report refuses the guest's counters: %v", err)
	}
	if len(c.Runs) != 2 || c.Runs[0].Layout != writes.LayoutAlone || c.Runs[1].Layout != writes.LayoutPrism ||
		c.Runs[1].FastBytes != 150994944 || c.Runs[0].QLCBytes != 180355072 || c.Runs[1].ClientBytes != 67108864 {
		t.Errorf("runs %+v", c.Runs)
	}
	// Each class: held after the run, written during it; a level absent before wrote all it has.
	var classes []string
	for _, cl := range c.Runs[1].Classes {
		if cl.OccupiedBytes == nil || cl.WrittenBytes == nil {
			t.Fatalf("class %+v without a count", cl)
		}
		classes = append(classes, fmt.Sprintf("%s/%t/%d/%d", cl.Class, cl.Breakdown, *cl.OccupiedBytes, *cl.WrittenBytes))
	}
	if want := "wal/false/37748736/134217728 sst/false/27262976/40960000 L0/true/27262976/40960000 objects/false/67108864/67108864"; strings.Join(classes, " ") != want {
		t.Errorf("classes %v, want %s", classes, want)
	}
	for key, want := range map[string]string{"min_alloc_size prism": "65536", "min_alloc_size qlc-alone": "4096",
		"db prism": "osd.0: dedicated 1, 4290772992 bytes, /dev/dm-0 (Prism's LV)", "db qlc-alone": "osd.2: dedicated 0"} {
		if got := c.Settings[key]; got != want {
			t.Errorf("settings[%q] %q, want %q", key, got, want)
		}
	}
	if got := c.Versions["ceph"]; !strings.Contains(got, "20.2.4") {
		t.Errorf("versions: ceph %q", got)
	}
	if _, err := writes.Headline(c); err != nil {
		t.Errorf("the headline of the guest's counters: %v", err)
	}
}

// TestBenchWritesRunsTheWorkloadDetached: bw_detached starts the command in the pod and
// returns from that exec at once, then polls; it gives back the command's output and exit
// status. A rados bench held in one kubectl exec lost its stream after 64 s under TCG.
func TestBenchWritesRunsTheWorkloadDetached(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	pod := t.TempDir()
	// k stands in for kubectl exec into the pod: the command after "--" runs here, with the
	// pod's /tmp/ as a directory of its own; each exec's time is logged.
	stub := `k() {
  while [[ $1 != -- ]]; do shift; done
  shift
  local args=() a start=$(date +%s%N)
  for a in "$@"; do args+=("${a//\/tmp\//$POD/}"); done
  if [[ ! -t 0 ]]; then sed "s#/tmp/#$POD/#g" | "${args[@]}"; else "${args[@]}" </dev/null; fi
  local rc=$?
  echo "$(( ($(date +%s%N) - start) / 1000000 )) ${args[*]:0:3}" >>"$POD/execs"
  return $rc
}
`
	script := stub + function(t, read(t, "bench-writes.sh"), "bw_detached") + `
out=$(bw_detached sh -c 'sleep 3; echo written; exit 3' </dev/null)
echo "rc $? out $out"
`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "POD="+pod)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	if strings.TrimSpace(string(got)) != "rc 3 out written" {
		t.Errorf("bw_detached gave %q, want the command's output and its exit status 3", got)
	}
	execs, err := os.ReadFile(filepath.Join(pod, "execs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(execs)), "\n") {
		var ms int
		if _, err := fmt.Sscanf(l, "%d", &ms); err != nil || ms > 2000 {
			t.Errorf("an exec lasted %d ms (%q): the command must not hold one exec for its run\n%s", ms, l, execs)
		}
	}
}
