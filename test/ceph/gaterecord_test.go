//go:build linux

package ceph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// gatePool is the replicated pool of the gate recording: size 3, min_size 2, failure domain osd.
const (
	gatePool    = "prismgate"
	gatePoolPGs = 16
	gateOSDs    = 4
)

// TestRecordGateAnswers records, with PRISM_RECORD_GATE=<dir>, what Ceph answers to the replacement
// gate's questions (rook.CephAnswers) in the states a fast-device replacement goes through: four OSDs
// whose DBs share one fast device, a size-3 pool with objects, then osd.0 stopped, out, muted,
// purged, a size-1 pool with noout, and two more OSDs stopped. Each state is written to
// <dir>/<state>/*.json, exactly what the CLI printed on stdout (and <name>.exit when it failed).
func TestRecordGateAnswers(t *testing.T) {
	dir := os.Getenv("PRISM_RECORD_GATE")
	if dir == "" {
		t.Skip("set PRISM_RECORD_GATE=<dir> (internal/plan/rook/testdata/ceph16) to record the gate's Ceph answers")
	}
	dir, _ = filepath.Abs(dir)
	e := newEnv(t)
	c, osds := gateCluster(t, e)
	r := gateRecorder{c: c, dir: dir, osds: osds}

	c.mustCeph("osd", "crush", "rule", "create-replicated", "prism-gate", "default", "osd", deviceClass)
	c.mustCeph("osd", "pool", "create", gatePool, strconv.Itoa(gatePoolPGs), strconv.Itoa(gatePoolPGs), "replicated", "prism-gate")
	c.mustCeph("osd", "pool", "set", gatePool, "size", "3")
	c.mustCeph("osd", "pool", "set", gatePool, "min_size", "2")
	c.mustCeph("osd", "pool", "application", "enable", gatePool, "rbd")
	c.gateWaitPGs("every PG active+clean", func(s pgSummary) bool { return s.only("active+clean") })
	c.e.must(slow, "rados", "--cluster", clusterName, "-c", c.conf, "-p", gatePool, "bench", "10", "write", "-b", "65536", "--no-cleanup")
	c.gateWaitPGs("every PG active+clean after the writes", func(s pgSummary) bool { return s.only("active+clean") })
	r.record("healthy", 0)

	// osd.0 dies with its fast device: down, still in.
	osds[0].daemon.stop(t)
	c.gateWaitPGs("osd.0's PGs degraded", func(s pgSummary) bool { return s.has("degraded") && c.osdDown(0) })
	r.record("degraded", 0)

	// Marked out: its PGs move to the others.
	c.mustCeph("osd", "out", "0")
	c.gateWaitPGs("recovery started or done", func(s pgSummary) bool { return s.has("recover") || s.has("backfill") || s.only("active+clean") })
	if s, err := c.pgStat(); err == nil && (s.has("recover") || s.has("backfill")) {
		r.record("recovering", 0)
	} else {
		t.Logf("recovery finished before it could be recorded (%v, %v)", s, err)
	}
	c.gateWaitPGs("every PG active+clean without osd.0", func(s pgSummary) bool { return s.only("active+clean") })
	r.record("out-recovered", 0)

	// The runbook's step: the OSD destroyed, its id kept.
	c.mustCeph("osd", "destroy", "0", "--yes-i-really-mean-it")
	time.Sleep(5 * time.Second)
	r.record("destroyed", 0)

	c.mustCeph("osd", "purge", "0", "--yes-i-really-mean-it")
	time.Sleep(5 * time.Second)
	r.record("purged", 1)

	// A capacity warning, then the admin mutes it.
	c.mustCeph("osd", "set-nearfull-ratio", "0.05")
	c.gateWaitHealth("OSD_NEARFULL")
	r.record("nearfull", 1)
	c.mustCeph("health", "mute", "OSD_NEARFULL")
	if c.healthHas("POOL_NEARFULL") {
		c.mustCeph("health", "mute", "POOL_NEARFULL")
	}
	time.Sleep(5 * time.Second)
	r.record("muted", 1)
	c.mustCeph("health", "unmute", "OSD_NEARFULL")
	c.mustCeph("osd", "set-nearfull-ratio", "0.85")

	// Warnings that say nothing about this OSD's data: a pool without redundancy, noout.
	c.mustCeph("osd", "pool", "set", gatePool, "min_size", "1")
	c.mustCeph("osd", "pool", "set", gatePool, "size", "1", "--yes-i-really-mean-it")
	c.mustCeph("osd", "set", "noout")
	// The test's configuration file silences POOL_NO_REDUNDANCY (and a file's setting overrides
	// the mon's configuration database); a real cluster warns. The mgr computes the PG checks.
	for _, who := range []string{"mon.a", "mgr.x"} {
		c.mustCeph("tell", who, "config", "set", "mon_warn_on_pool_no_redundancy", "true")
	}
	c.gateWaitHealth("POOL_NO_REDUNDANCY")
	c.gateWaitPGs("every PG active+clean at size 1", func(s pgSummary) bool { return s.only("active+clean") })
	time.Sleep(5 * time.Second)
	r.record("no-redundancy-noout", 1)

	c.mustCeph("osd", "pool", "set", gatePool, "size", "3")
	c.mustCeph("osd", "pool", "set", gatePool, "min_size", "2")
	c.mustCeph("osd", "unset", "noout")
	for _, who := range []string{"mon.a", "mgr.x"} {
		c.mustCeph("tell", who, "config", "set", "mon_warn_on_pool_no_redundancy", "false")
	}
	c.gateWaitPGs("every PG active+clean at size 3 again", func(s pgSummary) bool { return s.only("active+clean") })

	// Two of the three remaining OSDs stop: PGs below min_size are inactive.
	osds[1].daemon.stop(t)
	osds[2].daemon.stop(t)
	c.gateWaitPGs("PGs inactive", func(s pgSummary) bool { return s.inactive() > 0 && c.osdDown(1) && c.osdDown(2) })
	time.Sleep(5 * time.Second)
	r.record("inactive", 1)
}

// gateCluster builds a node as Prism plans it: a fast device with one DB slot per QLC drive, and
// one OSD per Rook entry, all up and in.
func gateCluster(t *testing.T, e *env) (*cluster, []*osd) {
	fast := e.attachLoop("fast", 16*gib, true)
	var slowDevs []*loopDev
	for i := range gateOSDs {
		slowDevs = append(slowDevs, e.attachLoop(fmt.Sprintf("qlc%d", i), slowSize, false))
	}
	// Ceph lists in `ceph device ls-by-host` only devices with a device id, which it takes from
	// udev's ID_MODEL and ID_SERIAL_SHORT; loops have none, and udev does not run here. With
	// them, the recording shows what a real drive gets.
	udevID(t, fast, "PRISMTEST_OPTANE", "FAST")
	for i, l := range slowDevs {
		udevID(t, l, "PRISMTEST_QLC", strconv.Itoa(i))
	}
	devices, sel := inventory(fast, slowDevs)
	size := resource.MustParse(dbSize)
	spec := &prismv1.HybridStoragePolicySpec{Mode: prismv1.ModeApply, DB: prismv1.DBSizing{Size: &size}, OSD: prismv1.OSDSettings{DeviceClass: deviceClass}}
	layout := plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devices, Spec: spec})
	if len(layout.Problems) > 0 || len(layout.Unplaced) > 0 || len(layout.Plan.FastDevices) != 1 {
		t.Fatalf("plan: problems %v, unplaced %v, %d fast devices", layout.Problems, layout.Unplaced, len(layout.Plan.FastDevices))
	}
	fp := layout.Plan.FastDevices[0]
	if _, err := partitionFast(e.ctx, hostexec.Local{Timeout: slow}, layout.Plan, devices); err != nil {
		t.Fatalf("partitioning %s: %v", fast.dev, err)
	}
	checkPartitions(e, fast, fp)
	kernel := map[string]string{}
	for _, d := range devices {
		kernel[d.StablePath] = d.Path
	}
	for _, s := range fp.Slots {
		kernel[prismv1.PartitionPath(fp.StablePath, s.Partition.Number)] = fast.partitionDev(s.Partition.Number)
	}
	nodes := rook.RookNodes(map[string]prismv1.NodePlan{nodeName: layout.Plan}, deviceClass)
	if len(nodes) != 1 || len(nodes[0].Devices) != gateOSDs {
		t.Fatalf("RookNodes: %+v", nodes)
	}
	c := e.bootstrap()
	var osds []*osd
	for _, d := range effectiveEntries(nodes[0]) {
		osds = append(osds, c.createOSD(d, kernel, fp))
	}
	c.waitOSDsUpIn(osds)
	return c, osds
}

// udevID writes a udev database entry for the loop (what udevd would write for a drive), removed
// at the end before the loop is detached.
func udevID(t *testing.T, l *loopDev, model, serial string) {
	const db = "/run/udev/data"
	devno := strings.TrimSpace(readFile(t, sysBlock(l.name, "dev")))
	// Directories this creates are removed after the entries (cleanups run last first).
	for _, dir := range []string{filepath.Dir(db), db} {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Remove(dir) })
		}
	}
	f := filepath.Join(db, "b"+devno)
	if _, err := os.Stat(f); err == nil {
		t.Fatalf("%s exists: udev runs here, or another job wrote it", f)
	}
	body := fmt.Sprintf("E:ID_VENDOR=PRISMTEST\nE:ID_MODEL=%s\nE:ID_SERIAL_SHORT=%s\nE:ID_SERIAL=%s_%s\n", model, serial, model, serial)
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(f) })
}

func (c *cluster) healthHas(code string) bool {
	var h struct {
		Checks map[string]any `json:"checks"`
	}
	if err := c.cephJSON(&h, "health"); err != nil {
		return false
	}
	_, ok := h.Checks[code]
	return ok
}

func (c *cluster) gateWaitHealth(code string) {
	c.e.waitFor(3*time.Minute, code+" raised", func() (bool, string) { return c.healthHas(code), "" })
}

// pgSummary is `ceph pg stat`'s PG counts by state name.
type pgSummary map[string]int

func (s pgSummary) only(state string) bool { return len(s) == 1 && s[state] > 0 }

func (s pgSummary) has(part string) bool {
	for st := range s {
		if strings.Contains(st, part) {
			return true
		}
	}
	return false
}

func (s pgSummary) inactive() int {
	n := 0
	for st, k := range s {
		if !strings.Contains(st, "active") {
			n += k
		}
	}
	return n
}

func (c *cluster) pgStat() (pgSummary, error) {
	var st struct {
		PGSummary struct {
			ByState []struct {
				Name string `json:"name"`
				Num  int    `json:"num"`
			} `json:"num_pg_by_state"`
		} `json:"pg_summary"`
	}
	if err := c.cephJSON(&st, "pg", "stat"); err != nil {
		return nil, err
	}
	out := pgSummary{}
	for _, s := range st.PGSummary.ByState {
		out[s.Name] = s.Num
	}
	return out, nil
}

func (c *cluster) gateWaitPGs(what string, ok func(pgSummary) bool) {
	c.e.waitFor(5*time.Minute, what, func() (bool, string) {
		s, err := c.pgStat()
		if err != nil {
			return false, err.Error()
		}
		return ok(s), fmt.Sprint(s)
	})
	s, _ := c.pgStat()
	c.e.t.Logf("%s: %v", what, s)
}

func (c *cluster) osdDown(id int) bool {
	var dump struct {
		OSDs []struct {
			OSD int `json:"osd"`
			Up  int `json:"up"`
		} `json:"osds"`
	}
	if err := c.cephJSON(&dump, "osd", "dump"); err != nil {
		return false
	}
	for _, o := range dump.OSDs {
		if o.OSD == id {
			return o.Up == 0
		}
	}
	return true
}

type gateRecorder struct {
	c    *cluster
	dir  string
	osds []*osd
}

// record writes the gate's questions for the node (safe-to-destroy names every OSD the node had,
// as the probe asks about the OSDs it finds plus those the entries name) and ok-to-stop of one.
func (r gateRecorder) record(state string, okToStop int) {
	t := r.c.e.t
	dir := filepath.Join(r.dir, state)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range r.osds {
		ids = append(ids, strconv.Itoa(o.id))
	}
	for name, args := range map[string][]string{
		"health":            {"health"},
		"health-detail":     {"health", "detail"},
		"pg-stat":           {"pg", "stat"},
		"device-ls-by-host": {"device", "ls-by-host", nodeName},
		"safe-to-destroy":   append([]string{"osd", "safe-to-destroy"}, ids...),
		"ok-to-stop":        {"osd", "ok-to-stop", strconv.Itoa(okToStop)},
		"osd-metadata":      {"osd", "metadata"},
		"osd-tree":          {"osd", "tree"},
	} {
		out, err := r.c.ceph(slow, append(args, "-f", "json")...)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		exit := filepath.Join(dir, name+".exit")
		var ee *hostexec.ExitError
		switch {
		case errors.As(err, &ee):
			t.Logf("%s: ceph %s: exit %d: %s", state, strings.Join(args, " "), ee.ExitCode, ee.Stderr)
			if err := os.WriteFile(exit, fmt.Appendf(nil, "exit %d\nstderr: %s\n", ee.ExitCode, ee.Stderr), 0o644); err != nil {
				t.Fatal(err)
			}
		case err != nil:
			t.Fatalf("%s: ceph %s: %v", state, strings.Join(args, " "), err)
		default:
			_ = os.Remove(exit)
		}
	}
	t.Logf("recorded %s in %s", state, dir)
}
