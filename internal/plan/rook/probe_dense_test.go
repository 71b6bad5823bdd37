package rook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// denseNode is a QLC node as Prism is meant for: 24 NVMe drives, osd.N on drive N, every DB on
// one fast device that was just replaced, so each OSD must be re-created.
const (
	denseNode   = "qlc-worker-01"
	denseDrives = 24
)

func denseDrive(i int) (byID, kernel string) {
	return fmt.Sprintf("/dev/disk/by-id/nvme-INTEL_SSDPF2NV307TZ_PHAB%010dAB", 1234567890+i), fmt.Sprintf("nvme%dn1", i+1)
}

// denseDeviceLs is `ceph device ls-by-host` of the dense node, each element in the shape
// recorded on Ceph 16 (testdata/ceph16/*/device-ls-by-host.json: devid, location with host, dev
// and path, daemons), with a real drive's model_serial devid and the by-path path Ceph records
// for a drive that has one: the QLC drives, then the fast device holding every OSD's DB.
func denseDeviceLs(drives int) []cephDeviceElement {
	var out []cephDeviceElement
	var all []string
	for i := range drives {
		_, kernel := denseDrive(i)
		out = append(out, cephDeviceElement{
			DevID:    fmt.Sprintf("INTEL_SSDPF2NV307TZ_PHAB%010dAB", 1234567890+i),
			Location: []cephDeviceLocation{{Host: denseNode, Dev: kernel, Path: fmt.Sprintf("/dev/disk/by-path/pci-0000:%02x:00.0-nvme-1", 0x3b+i)}},
			Daemons:  []string{fmt.Sprintf("osd.%d", i)},
		})
		all = append(all, fmt.Sprintf("osd.%d", i))
	}
	return append(out, cephDeviceElement{
		DevID:    "INTEL_SSDPF21Q800GB_PHAL1234000A800CGN",
		Location: []cephDeviceLocation{{Host: denseNode, Dev: "nvme0n1", Path: "/dev/disk/by-path/pci-0000:5e:00.0-nvme-1"}},
		Daemons:  all,
	})
}

// cephDeviceElement is one element of `ceph device ls-by-host`, its keys in Ceph's order.
type cephDeviceElement struct {
	DevID    string               `json:"devid"`
	Location []cephDeviceLocation `json:"location"`
	Daemons  []string             `json:"daemons"`
}

type cephDeviceLocation struct {
	Host string `json:"host"`
	Dev  string `json:"dev"`
	Path string `json:"path"`
}

// denseAnswers is what Ceph prints for each question on the dense node once the fast device's
// OSDs are down and their PGs recovered elsewhere: health and PGs as recorded on Ceph 16
// (out-recovered), the OSDs in safe safe to destroy, the others still active, none destroyed
// (as recorded on Ceph 20.2.4 before a destroy).
func denseAnswers(t *testing.T, safe ...int) (stdout map[string]string, ids string) {
	t.Helper()
	devs, err := json.Marshal(denseDeviceLs(denseDrives))
	if err != nil {
		t.Fatal(err)
	}
	active := []int{}
	for i := range denseDrives {
		if !slices.Contains(safe, i) {
			active = append(active, i)
		}
		ids += fmt.Sprintf("%d\n", i)
	}
	std, _ := json.Marshal(map[string][]int{"safe_to_destroy": safe, "active": active, "missing_stats": {}, "stored_pgs": {}})
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "ceph16", "out-recovered", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return map[string]string{ProbeHealth: read("health.json"), ProbePGStat: read("pg-stat.json"), ProbeDevices: string(devs),
		ProbeSafeToDestroy: string(std), ProbeDestroyed: recorded("ceph20/before-destroy/osd-tree-from-destroyed.json")}, ids
}

// denseGate is the gate's question for the dense node: every drive's DB moves; the policy
// ignores the health checks in ignore.
func denseGate(answers map[string]CephAnswers, ignore []string, now time.Time) GateResult {
	planned := RookNode{Name: denseNode}
	var devices []any
	kernel := map[string]string{}
	for i := range denseDrives {
		byID, k := denseDrive(i)
		kernel[byID] = k
		planned.Devices = append(planned.Devices, RookDevice{Name: byID, Config: RookDeviceConfig{MetadataDevice: fmt.Sprintf("/dev/prism-db-new/prism-db-%02d", i)}})
		devices = append(devices, map[string]any{"name": byID, "config": map[string]any{"metadataDevice": fmt.Sprintf("/dev/prism-db-old/prism-db-%02d", i)}})
	}
	return GateReplacements(GateInput{Entries: []RookNode{planned}, Existing: []any{map[string]any{"name": denseNode, "devices": devices}},
		Answers: answers, Kernel: map[string]map[string]string{denseNode: kernel}, Ignore: ignore, Now: now})
}

// runProbe runs each container of pod as the kubelet would (its command, its environment,
// with the mons as Rook's ConfigMap gives them) against a stand-in ceph printing stdout[name],
// and leaves in its status what the kubelet keeps of each termination message: the file's
// last 4096 bytes, then the pod's share (ProbeMessageLimit), from the start. fake are more of
// the stand-in's variables (fakeCeph).
func runProbe(t *testing.T, pod *corev1.Pod, stdout map[string]string, ids string, at time.Time, fake ...string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ceph"), []byte(fakeCeph), 0o755); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	for _, c := range pod.Spec.Containers {
		msgFile := filepath.Join(dir, c.Name+".termination-log")
		env := []string{"PATH=" + dir + ":/usr/bin:/bin", "FAKE_ARGS=" + filepath.Join(dir, "args"), "FAKE_IDS=" + ids,
			"FAKE_OUT=" + stdout[c.Name], "FAKE_RC=0"}
		env = append(env, fake...)
		for _, e := range c.Env {
			switch {
			case e.Name == "PRISM_MON_ENDPOINTS":
				env = append(env, e.Name+"=a=10.0.0.1:6789")
			case e.Name == "PRISM_TERMINATION_LOG":
				env = append(env, e.Name+"="+msgFile)
			case e.ValueFrom == nil:
				env = append(env, e.Name+"="+e.Value)
			}
		}
		cmd := exec.Command(c.Command[0], c.Command[1:]...)
		cmd.Dir, cmd.Env = dir, env
		var code int32
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = int32(ee.ExitCode())
		}
		msg, _ := os.ReadFile(msgFile)
		msg = msg[max(0, len(msg)-maxContainerMessage):]
		msg = msg[:min(len(msg), ProbeMessageLimit(len(pod.Spec.Containers)))]
		if code != 0 {
			pod.Status.Phase = corev1.PodFailed
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name,
			State: terminated(code, string(msg), at.Sub(probeT0))})
	}
}

// probeAndGate is one round of the controller on the dense node: the gate's pass without
// answers names the held drives, PlanProbes the probe to start (after prev, the previous
// probe, if any), its containers answer (runProbe, fake more of the stand-in's variables),
// observe reads the finished pod (PlanProbes' Answers) and the gate judges again with them,
// with the policy ignoring the checks in ignore.
func probeAndGate(t *testing.T, stdout map[string]string, ids string, prev *corev1.Pod, at time.Time, ignore []string, fake ...string) (*corev1.Pod, GateResult) {
	t.Helper()
	held := denseGate(nil, ignore, at)
	if len(held.Held) != denseDrives || held.Released != nil {
		t.Fatalf("without answers: held %d, released %v; want all %d held", len(held.Held), held.Released, denseDrives)
	}
	var pods []*corev1.Pod
	if prev != nil {
		pods = append(pods, prev)
	}
	ch := PlanProbes(pods, held.Awaiting, at)
	if len(ch.Create) != 1 || ch.Create[0].Node != denseNode {
		t.Fatalf("probes to start: %v, want one of %s", ch.Create, denseNode)
	}
	pod := ProbePod(ProbeTarget{Policy: "policy-7", Owner: probeOwner, Namespace: "rook-ceph", Image: "ceph", Node: denseNode, Devices: ch.Create[0].Devices})
	pod.CreationTimestamp.Time = at
	runProbe(t, pod, stdout, ids, at.Add(20*time.Second), fake...)
	now := at.Add(30 * time.Second)
	a, ok := PlanProbes([]*corev1.Pod{pod}, nil, now).Answers[denseNode]
	if !ok {
		t.Fatal("the finished probe has no answers")
	}
	return pod, denseGate(map[string]CephAnswers{denseNode: a}, ignore, now)
}

// TestDenseNodeReleasesThroughTheProbe follows the controller's path on a 24-drive node whose
// fast device was replaced, so that all 24 OSDs wait: with every OSD safe to destroy, the
// gate releases the first drive.
func TestDenseNodeReleasesThroughTheProbe(t *testing.T) {
	stdout, ids := denseAnswers(t, slices.Collect(func(yield func(int) bool) {
		for i := range denseDrives {
			if !yield(i) {
				return
			}
		}
	})...)
	element, _ := json.Marshal(denseDeviceLs(1)[0])
	t.Logf("ceph device ls-by-host of %d drives and the fast device: %d bytes, one drive's element %d bytes (%s); the kubelet keeps %d",
		denseDrives, len(stdout[ProbeDevices]), len(element), element, ProbeMessageLimit(len(ProbeContainers)))
	pod, g := probeAndGate(t, stdout, ids, nil, probeT0, nil)
	t.Logf("the probe kept %d bytes of ceph device ls-by-host", len(answerOf(pod, ProbeDevices)))
	byID, _ := denseDrive(0)
	if g.Released == nil || g.Released.Device != byID {
		t.Fatalf("released %v, want %s; first held: %s", g.Released, byID, strings.Join(g.Held[:1], ""))
	}
}

// TestDenseNodeAsksAboutEachDriveInTurn: one probe asks about ProbeDrivesMax of the held drives;
// when none of them may go, the next probe asks about the next ones, and the one drive whose
// OSD is safe to destroy (osd.10) goes.
func TestDenseNodeAsksAboutEachDriveInTurn(t *testing.T) {
	stdout, ids := denseAnswers(t, 10)
	pod, g := probeAndGate(t, stdout, ids, nil, probeT0, nil)
	if g.Released != nil {
		t.Fatalf("the first probe asks about drives 0-%d, and %s is released", ProbeDrivesMax-1, g.Released.Device)
	}
	for i, want := range map[int]string{0: "osd.0 not safe to destroy", ProbeDrivesMax: "the probe kept ceph device ls-by-host for other drives than"} {
		if !strings.Contains(g.Held[i], want) {
			t.Errorf("held[%d] = %q, want it to say %q", i, g.Held[i], want)
		}
	}
	_, g = probeAndGate(t, stdout, ids, pod, probeT0.Add(30*time.Second+ProbeMaxAge), nil)
	byID, _ := denseDrive(10)
	if g.Released == nil || g.Released.Device != byID {
		t.Fatalf("the second probe: released %v, want %s; held: %s", g.Released, byID, strings.Join(g.Held, "\n"))
	}
}

// answerOf is what the kubelet kept of container name's termination message.
func answerOf(pod *corev1.Pod, name string) string {
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == name && st.State.Terminated != nil {
			return st.State.Terminated.Message
		}
	}
	return ""
}

// allDense are the dense node's OSD ids, every one safe to destroy in denseAnswers.
func allDense() []int {
	ids := make([]int, denseDrives)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// TestDenseNodeHoldsOnADestroyedID: with every OSD safe to destroy, one id left destroyed under
// the node's CRUSH host (Ceph 20.2.4's answer as recorded, osd.2) holds every drive: Rook v1.21
// would give that id to the drive released (decision 0058).
func TestDenseNodeHoldsOnADestroyedID(t *testing.T) {
	stdout, ids := denseAnswers(t, allDense()...)
	stdout[ProbeDestroyed] = recorded("ceph20/destroyed-stale/osd-tree-from-destroyed.json")
	pod, g := probeAndGate(t, stdout, ids, nil, probeT0, nil)
	t.Logf("the probe kept %s of ceph osd tree-from destroyed", answerOf(pod, ProbeDestroyed))
	if g.Released != nil || len(g.Held) != denseDrives || !strings.Contains(g.Held[0], "waiting: Ceph has osd.2 destroyed under "+denseNode+"'s CRUSH host") {
		t.Fatalf("released %v; held %d, first: %s", g.Released, len(g.Held), strings.Join(g.Held[:1], ""))
	}
}

// TestDenseNodeWithItsCRUSHHostEmptyReleases: every OSD of the node purged (the fast-device
// runbook's step 2), its CRUSH host bucket left empty: `ceph osd ls-tree` prints nothing and
// exits 0 (recorded on Ceph 16), Ceph lists none of its drives, and the first drive goes.
func TestDenseNodeWithItsCRUSHHostEmptyReleases(t *testing.T) {
	stdout, _ := denseAnswers(t)
	stdout[ProbeDevices] = "[]"
	stdout[ProbeSafeToDestroy] = "" // not asked: no OSD
	stdout[ProbeDestroyed] = recorded("ceph20/purged/osd-tree-from-destroyed.json")
	pod, g := probeAndGate(t, stdout, "", nil, probeT0, nil)
	byID, _ := denseDrive(0)
	if answerOf(pod, ProbeSafeToDestroy) != "[]" || g.Released == nil || g.Released.Device != byID {
		t.Fatalf("safe-to-destroy %q; released %v, want %s; first held: %s", answerOf(pod, ProbeSafeToDestroy), g.Released, byID, strings.Join(g.Held[:1], ""))
	}
}

// TestDenseNodeWithoutItsCRUSHHostHolds: a CRUSH host Ceph does not have (Ceph 20.2.4's
// `ceph osd ls-tree no-such-host`: ENOENT, exit 2) is not an empty one: the node holds.
func TestDenseNodeWithoutItsCRUSHHostHolds(t *testing.T) {
	stdout, _ := denseAnswers(t)
	stdout[ProbeDevices] = "[]"
	_, g := probeAndGate(t, stdout, "", nil, probeT0, nil, "FAKE_IDS_RC=2", `FAKE_IDS_ERR=Error ENOENT: "`+denseNode+`" does not exist`)
	want := `waiting: Ceph could not answer for ` + denseNode + `: safe-to-destroy: exit 1: ceph osd ls-tree ` + denseNode + `: Error ENOENT: "` + denseNode + `" does not exist`
	if g.Released != nil || len(g.Held) != denseDrives || !strings.HasSuffix(g.Held[0], want) {
		t.Fatalf("released %v; held %d, first: %s; want it to end in %s", g.Released, len(g.Held), strings.Join(g.Held[:1], ""), want)
	}
}

// manyChecks is `ceph health` on a bad day, in the shape recorded on Ceph 16: every check
// recorded in testdata/ceph16 as Ceph printed it (PG_AVAILABILITY muted, with its mute in
// `mutes` as the muted state records them), and every other code the gate knows as harmless,
// each with the recorded MON_DISK_LOW element (only the code is not recorded).
func manyChecks(t *testing.T) string {
	t.Helper()
	checks := map[string]json.RawMessage{}
	var mutes []json.RawMessage
	for _, state := range recordedStates(t) {
		var h struct {
			Checks map[string]json.RawMessage `json:"checks"`
			Mutes  []json.RawMessage          `json:"mutes"`
		}
		if err := json.Unmarshal(readRecorded(t, state, "health"), &h); err != nil {
			t.Fatal(err)
		}
		for code, c := range h.Checks {
			checks[code] = c
		}
		if state == "muted" {
			mutes = h.Mutes
		}
	}
	checks["PG_AVAILABILITY"] = json.RawMessage(strings.Replace(string(checks["PG_AVAILABILITY"]), `"muted":false`, `"muted":true`, 1))
	mutes = append(mutes, json.RawMessage(`{"code":"PG_AVAILABILITY","sticky":false,"summary":"Reduced data availability: 16 pgs inactive","count":16}`))
	for code := range harmlessChecks {
		if _, ok := checks[code]; !ok {
			checks[code] = checks["MON_DISK_LOW"]
		}
	}
	out, err := json.Marshal(map[string]any{"status": "HEALTH_WARN", "checks": checks, "mutes": mutes})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestDenseNodeJudgesAHealthOfManyChecks: a health answer of more checks than the kubelet
// keeps in Ceph's shape still reaches the gate (the probe keeps the status and each check's
// severity and muted, decision 0058), which judges it as before: the muted PG_AVAILABILITY
// does not hold, OSD_NEARFULL (unknown to Prism) holds until the policy ignores it.
func TestDenseNodeJudgesAHealthOfManyChecks(t *testing.T) {
	stdout, ids := denseAnswers(t, allDense()...)
	stdout[ProbeHealth] = manyChecks(t)
	limit := ProbeMessageLimit(len(ProbeContainers))
	if len(stdout[ProbeHealth]) <= limit {
		t.Fatalf("ceph health of the test is %d bytes, not longer than the %d the kubelet keeps", len(stdout[ProbeHealth]), limit)
	}
	pod, g := probeAndGate(t, stdout, ids, nil, probeT0, nil)
	kept := answerOf(pod, ProbeHealth)
	health, err := ParseHealth([]byte(kept))
	t.Logf("ceph health: %d checks in %d bytes, the probe kept %d bytes (%v)", len(health.Checks), len(stdout[ProbeHealth]), len(kept), err)
	want := "waiting: Ceph reports OSD_NEARFULL is a check Prism does not know"
	if g.Released != nil || !strings.Contains(g.Held[0], want) {
		t.Fatalf("released %v; first held: %s; want %q", g.Released, strings.Join(g.Held[:1], ""), want)
	}
	_, g = probeAndGate(t, stdout, ids, nil, probeT0, []string{"OSD_NEARFULL", "POOL_NEARFULL"})
	byID, _ := denseDrive(0)
	if g.Released == nil || g.Released.Device != byID {
		t.Fatalf("the policy ignoring OSD_NEARFULL and POOL_NEARFULL: released %v, want %s; first held: %s", g.Released, byID, strings.Join(g.Held[:1], ""))
	}
}
