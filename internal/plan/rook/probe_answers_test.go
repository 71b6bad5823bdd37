package rook

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recordedProbe reads what the probe's containers answered on Ceph 16 (test/ceph
// TestCephProbeClient, PRISM_UPDATE_PROBE=1).
func recordedProbe(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range ProbeContainers {
		raw, err := os.ReadFile(filepath.Join("testdata", "probe", "ceph16", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(raw)
	}
	return out
}

var probeT0 = time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC)

// probeDrive is the drive the probes of the tests ask about.
var probeDrive = ProbeDrive{Path: "/dev/disk/by-id/nvme-QLC_1", Kernel: "nvme1n1"}

// probePod is a probe pod asking about probeDrive, created at probeT0+created, in phase, with
// the given container states.
func probePod(node string, created time.Duration, phase corev1.PodPhase, states map[string]corev1.ContainerState) *corev1.Pod {
	return probePodAsking(probeDrive.Names(), node, created, phase, states)
}

func probePodAsking(devices []string, node string, created time.Duration, phase corev1.PodPhase, states map[string]corev1.ContainerState) *corev1.Pod {
	p := ProbePod(ProbeTarget{Policy: "policy-7", Owner: probeOwner, Namespace: "rook-ceph", Image: "ceph", Node: node, Devices: devices})
	p.Name = "prism-probe-" + node + "-" + created.String()
	p.CreationTimestamp = metav1.NewTime(probeT0.Add(created))
	p.Status.Phase = phase
	for _, name := range ProbeContainers {
		if st, ok := states[name]; ok {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: name, State: st})
		}
	}
	return p
}

func terminated(code int32, msg string, at time.Duration) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg, FinishedAt: metav1.NewTime(probeT0.Add(at))}}
}

// probeEnded are the five containers ended with the recorded answers, the last at probeT0+at.
func probeEnded(rec map[string]string, at time.Duration) map[string]corev1.ContainerState {
	states := map[string]corev1.ContainerState{}
	for i, name := range ProbeContainers {
		states[name] = terminated(0, rec[name], at-time.Duration(len(ProbeContainers)-1-i)*time.Second)
	}
	return states
}

func TestProbeAnswers(t *testing.T) {
	rec := recordedProbe(t)
	// A devices answer longer than the kubelet keeps: the first 2457 bytes of a long list.
	long := "[" + strings.Repeat(rec[ProbeHealth]+",", 20) + rec[ProbeHealth] + "]"
	cut := long[:ProbeMessageLimit(len(ProbeContainers))]
	with := func(states map[string]corev1.ContainerState, name string, st corev1.ContainerState) map[string]corev1.ContainerState {
		out := map[string]corev1.ContainerState{}
		for k, v := range states {
			out[k] = v
		}
		out[name] = st
		return out
	}
	cases := []struct {
		name     string
		pod      *corev1.Pod
		now      time.Duration
		wantDone bool
		// wantAnswered are the containers whose recorded answer is kept; wantErr parts of Err
		// ("" : none).
		wantAnswered []string
		wantErr      []string
		wantAt       time.Duration
	}{
		{name: "every question answered", pod: probePod("n1", 0, corev1.PodSucceeded, probeEnded(rec, 10*time.Second)), now: 20 * time.Second,
			wantDone: true, wantAnswered: ProbeContainers, wantAt: 10 * time.Second},
		{name: "safe-to-destroy's JSON with a non-zero exit is its answer",
			pod: probePod("n1", 0, corev1.PodFailed, with(probeEnded(rec, 10*time.Second), ProbeSafeToDestroy, terminated(16, rec[ProbeSafeToDestroy], 10*time.Second))),
			now: 20 * time.Second, wantDone: true, wantAnswered: ProbeContainers, wantAt: 10 * time.Second},
		{name: "a question without JSON says why",
			pod: probePod("n1", 0, corev1.PodFailed, with(probeEnded(rec, 10*time.Second), ProbeHealth, terminated(1, "ceph health: exit 1: [errno 110] RADOS timed out (error connecting to the cluster)\n", 9*time.Second))),
			now: 20 * time.Second, wantDone: true, wantAnswered: []string{ProbePGStat, ProbeDevices, ProbeSafeToDestroy, ProbeDestroyed},
			wantErr: []string{"health: exit 1: ceph health: exit 1: [errno 110] RADOS timed out (error connecting to the cluster)"}, wantAt: 10 * time.Second},
		{name: "an answer the kubelet cut",
			pod: probePod("n1", 0, corev1.PodSucceeded, with(probeEnded(rec, 10*time.Second), ProbeDevices, terminated(0, cut, 8*time.Second))),
			now: 20 * time.Second, wantDone: true, wantAnswered: []string{ProbeHealth, ProbePGStat, ProbeSafeToDestroy, ProbeDestroyed},
			wantErr: []string{"devices: the answer is longer than the 2457 bytes the kubelet keeps of it (exit 0)"}, wantAt: 10 * time.Second},
		{name: "killed at the deadline",
			pod: func() *corev1.Pod {
				p := probePod("n1", 0, corev1.PodFailed, with(probeEnded(rec, 10*time.Second), ProbeSafeToDestroy, terminated(137, "", 2*time.Minute)))
				p.Status.Reason, p.Status.Message = "DeadlineExceeded", "Pod was active on the node longer than the specified deadline"
				return p
			}(),
			now: 3 * time.Minute, wantDone: true, wantAnswered: []string{ProbeHealth, ProbePGStat, ProbeDevices, ProbeDestroyed},
			wantErr: []string{"pod DeadlineExceeded: Pod was active on the node longer than the specified deadline", "safe-to-destroy: exit 137 without an answer"}, wantAt: 2 * time.Minute},
		// A probe pod made before the destroyed question (decision 0058) has four containers:
		// the missing answer is a reason, so the node holds until the next probe.
		{name: "a probe without the destroyed question",
			pod: func() *corev1.Pod {
				states := probeEnded(rec, 10*time.Second)
				delete(states, ProbeDestroyed)
				p := probePod("n1", 0, corev1.PodSucceeded, states)
				p.Spec.Containers = p.Spec.Containers[:4]
				return p
			}(),
			now: 20 * time.Second, wantDone: true, wantAnswered: []string{ProbeHealth, ProbePGStat, ProbeDevices, ProbeSafeToDestroy},
			wantErr: []string{"destroyed: did not finish"}, wantAt: 9 * time.Second},
		{name: "an image that cannot be pulled ends the probe at once",
			pod: probePod("n1", 0, corev1.PodPending, map[string]corev1.ContainerState{
				ProbeHealth: {Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "quay.io/ceph/ceph:v99: not found"}}}),
			now: 10 * time.Second, wantDone: true, wantErr: []string{"health: ErrImagePull: quay.io/ceph/ceph:v99: not found", "pg-stat: did not finish"}},
		{name: "still running", pod: probePod("n1", 0, corev1.PodRunning, map[string]corev1.ContainerState{ProbeHealth: terminated(0, rec[ProbeHealth], 5*time.Second)}),
			now: 30 * time.Second, wantDone: false},
		{name: "never scheduled",
			pod: func() *corev1.Pod {
				p := probePod("n1", 0, corev1.PodPending, nil)
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}
				return p
			}(),
			now: ProbeStuck, wantDone: true, wantErr: []string{"Pending after 3m0s (PodScheduled: Unschedulable 0/3 nodes are available)", "health: not finished"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, done := ProbeAnswers(tc.pod, probeT0.Add(tc.now))
			if done != tc.wantDone {
				t.Fatalf("done %v, want %v (%+v)", done, tc.wantDone, a)
			}
			if !done {
				return
			}
			got := map[string][]byte{ProbeHealth: a.Health, ProbePGStat: a.PGStat, ProbeDevices: a.Devices, ProbeSafeToDestroy: a.SafeToDestroy,
				ProbeDestroyed: a.Destroyed}
			for _, name := range ProbeContainers {
				want := ""
				if slices.Contains(tc.wantAnswered, name) {
					want = rec[name]
				}
				if string(got[name]) != want {
					t.Errorf("%s: %q, want %q", name, got[name], want)
				}
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(a.Err, part) {
					t.Errorf("Err %q lacks %q", a.Err, part)
				}
			}
			if len(tc.wantErr) == 0 && a.Err != "" {
				t.Errorf("Err %q, want none", a.Err)
			}
			if !a.At.Equal(probeT0.Add(tc.wantAt)) {
				t.Errorf("At %v, want %v", a.At, probeT0.Add(tc.wantAt))
			}
		})
	}
}

func TestPlanProbes(t *testing.T) {
	rec := recordedProbe(t)
	failed := map[string]corev1.ContainerState{}
	for _, name := range ProbeContainers {
		failed[name] = terminated(1, "ceph "+name+": exit 13: [errno 13] RADOS permission denied", 5*time.Second)
	}
	deleting := probePod("n3", 0, corev1.PodRunning, nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: probeT0}
	cases := []struct {
		name string
		pods []*corev1.Pod
		ask  []string
		now  time.Duration
		// wantAnswers are the nodes answered (without Err unless in wantFailed).
		wantAnswers, wantCreate, wantDelete, wantFailed []string
	}{
		{name: "nothing held, nothing probed", now: time.Minute},
		{name: "held nodes without probes get one", ask: []string{"n1", "n2"}, now: time.Minute, wantCreate: []string{"n1", "n2"}},
		{name: "a running probe is waited for", pods: []*corev1.Pod{probePod("n1", 0, corev1.PodRunning, nil)}, ask: []string{"n1"}, now: 30 * time.Second},
		{name: "fresh answers are kept", pods: []*corev1.Pod{probePod("n1", 0, corev1.PodSucceeded, probeEnded(rec, 10*time.Second))},
			ask: []string{"n1"}, now: 40 * time.Second, wantAnswers: []string{"n1"}},
		{name: "old answers are asked again", pods: []*corev1.Pod{probePod("n1", 0, corev1.PodSucceeded, probeEnded(rec, 10*time.Second))},
			ask: []string{"n1"}, now: 10*time.Second + ProbeMaxAge, wantAnswers: []string{"n1"}, wantCreate: []string{"n1"}, wantDelete: []string{"n1/0s"}},
		{name: "a failed probe is reported when it is replaced", pods: []*corev1.Pod{probePod("n1", 0, corev1.PodFailed, failed)},
			ask: []string{"n1"}, now: 2 * time.Minute, wantAnswers: []string{"n1"}, wantCreate: []string{"n1"}, wantDelete: []string{"n1/0s"}, wantFailed: []string{"n1"}},
		{name: "older probes of a node go", pods: []*corev1.Pod{probePod("n1", 0, corev1.PodSucceeded, probeEnded(rec, 10*time.Second)),
			probePod("n1", time.Minute, corev1.PodSucceeded, probeEnded(rec, 70*time.Second))},
			ask: []string{"n1"}, now: 80 * time.Second, wantAnswers: []string{"n1"}, wantDelete: []string{"n1/0s"}},
		{name: "probes of nodes no longer held go", pods: []*corev1.Pod{probePod("n2", 0, corev1.PodRunning, nil),
			probePod("n1", 0, corev1.PodSucceeded, probeEnded(rec, 10*time.Second))},
			ask: nil, now: 20 * time.Second, wantAnswers: []string{"n1"}, wantDelete: []string{"n1/0s", "n2/0s"}},
		{name: "a pod being deleted is left to go", pods: []*corev1.Pod{deleting}, ask: []string{"n3"}, now: time.Second, wantCreate: []string{"n3"}},
		{name: "fresh answers about other drives are asked again at once",
			pods: []*corev1.Pod{probePodAsking([]string{"/dev/disk/by-id/nvme-QLC_2", "nvme2n1"}, "n1", 0, corev1.PodSucceeded, probeEnded(rec, 10*time.Second))},
			ask:  []string{"n1"}, now: 20 * time.Second, wantAnswers: []string{"n1"}, wantCreate: []string{"n1"}, wantDelete: []string{"n1/0s"}},
		{name: "a probe of Prism before 0057 kept Ceph's whole list: its answers cover every drive",
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := probePod("n1", 0, corev1.PodSucceeded, probeEnded(rec, 10*time.Second))
				for i := range p.Spec.Containers {
					p.Spec.Containers[i].Env = slices.DeleteFunc(p.Spec.Containers[i].Env, func(e corev1.EnvVar) bool { return e.Name == probeDevicesEnv })
				}
				return p
			}()},
			ask: []string{"n1"}, now: 20 * time.Second, wantAnswers: []string{"n1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ask := map[string][]ProbeDrive{}
			for _, n := range tc.ask {
				ask[n] = []ProbeDrive{probeDrive}
			}
			ch := PlanProbes(tc.pods, ask, probeT0.Add(tc.now))
			var answers, deleted, failedNodes, created []string
			for _, c := range ch.Create {
				created = append(created, c.Node)
				if !slices.Equal(c.Devices, probeDrive.Names()) {
					t.Errorf("the probe of %s asks about %q, want %q", c.Node, c.Devices, probeDrive.Names())
				}
			}
			for n, a := range ch.Answers {
				answers = append(answers, n)
				if a.Err != "" && !slices.Contains(tc.wantFailed, n) {
					t.Errorf("%s: Err %q", n, a.Err)
				}
			}
			for _, p := range ch.Delete {
				deleted = append(deleted, ProbeNodeOf(p)+"/"+p.CreationTimestamp.Sub(probeT0).String())
			}
			for n := range ch.Failed {
				failedNodes = append(failedNodes, n)
			}
			for _, l := range [][]string{answers, deleted, failedNodes} {
				slices.Sort(l)
			}
			for what, pair := range map[string][2][]string{"answers": {answers, tc.wantAnswers}, "create": {created, tc.wantCreate},
				"delete": {deleted, tc.wantDelete}, "failed": {failedNodes, tc.wantFailed}} {
				if !slices.Equal(pair[0], pair[1]) {
					t.Errorf("%s %v, want %v", what, pair[0], pair[1])
				}
			}
		})
	}
}

// FuzzProbeAnswers: whatever a container leaves in its termination message, a finished probe
// is done, keeps only JSON as an answer, and gives a reason for every question without one.
func FuzzProbeAnswers(f *testing.F) {
	for _, name := range ProbeContainers {
		raw, err := os.ReadFile(filepath.Join("testdata", "probe", "ceph16", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(raw), int32(0))
	}
	f.Add("ceph health: exit 1: timed out", int32(1))
	f.Add(`{"safe_to_destroy":[`, int32(16))
	f.Fuzz(func(t *testing.T, msg string, code int32) {
		states := map[string]corev1.ContainerState{}
		for _, name := range ProbeContainers {
			states[name] = terminated(code, msg, time.Second)
		}
		a, done := ProbeAnswers(probePod("n1", 0, corev1.PodSucceeded, states), probeT0.Add(time.Minute))
		if !done {
			t.Fatal("a finished probe is not done")
		}
		valid := json.Valid([]byte(msg))
		for _, out := range [][]byte{a.Health, a.PGStat, a.Devices, a.SafeToDestroy, a.Destroyed} {
			if valid != (string(out) == msg && out != nil) {
				t.Fatalf("message %q (valid JSON %v) read as %q", msg, valid, out)
			}
		}
		if valid == (a.Err != "") {
			t.Fatalf("message %q (valid JSON %v): Err %q", msg, valid, a.Err)
		}
	})
}

// FuzzProbeDevicesOf: whatever a probe pod's PRISM_DEVICES holds, the devices answer is kept
// only with the names it lists; anything else is a reason and no devices answer, never Ceph's
// whole list.
func FuzzProbeDevicesOf(f *testing.F) {
	for _, seed := range []string{`["/dev/disk/by-id/nvme-QLC_1","nvme1n1","nvme-QLC_1"]`, `[]`, `null`, `"nvme1n1"`, `[1]`, `[`} {
		f.Add(seed)
	}
	rec := map[string]string{}
	for _, name := range ProbeContainers {
		raw, err := os.ReadFile(filepath.Join("testdata", "probe", "ceph16", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		rec[name] = string(raw)
	}
	f.Fuzz(func(t *testing.T, devices string) {
		p := probePod("n1", 0, corev1.PodSucceeded, probeEnded(rec, 10*time.Second))
		for i := range p.Spec.Containers {
			for j := range p.Spec.Containers[i].Env {
				if p.Spec.Containers[i].Env[j].Name == probeDevicesEnv {
					p.Spec.Containers[i].Env[j].Value = devices
				}
			}
		}
		a, done := ProbeAnswers(p, probeT0.Add(20*time.Second))
		if !done {
			t.Fatal("a finished probe is not done")
		}
		var names []string
		if err := json.Unmarshal([]byte(devices), &names); err != nil || names == nil {
			if a.Devices != nil || !strings.Contains(a.Err, probeDevicesEnv) {
				t.Fatalf("PRISM_DEVICES %q: devices %q, DevicesOf %q, Err %q", devices, a.Devices, a.DevicesOf, a.Err)
			}
			return
		}
		if a.Devices == nil || a.DevicesOf == nil || !slices.Equal(a.DevicesOf, names) || a.Err != "" {
			t.Fatalf("PRISM_DEVICES %q: devices %q, DevicesOf %q, Err %q", devices, a.Devices, a.DevicesOf, a.Err)
		}
	})
}

// TestProbeDrives: a probe asks about at most ProbeDrivesMax held drives, the next probe
// about the ones after those, around the end of the list, so that each drive gets its turn.
func TestProbeDrives(t *testing.T) {
	drives := func(n int) []ProbeDrive {
		var out []ProbeDrive
		for i := range n {
			out = append(out, ProbeDrive{Path: fmt.Sprintf("/dev/disk/by-id/nvme-QLC_%02d", i), Kernel: fmt.Sprintf("nvme%dn1", i+1)})
		}
		return out
	}
	// turn names which of held a probe asks about, by index.
	turn := func(held []ProbeDrive, names []string) []int {
		var out []int
		for i, d := range held {
			if askedAbout(names, d) {
				out = append(out, i)
			}
		}
		if len(names) != 3*len(out) {
			t.Errorf("%q: %d names for %d drives, want each drive's three", names, len(names), len(out))
		}
		return out
	}
	seq := func(from, to int) []int {
		var out []int
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	held := drives(20)
	var prev []string
	for i, want := range [][]int{seq(0, 7), seq(8, 15), append(seq(0, 3), seq(16, 19)...), seq(4, 11)} {
		prev = ProbeDrives(held, prev)
		if got := turn(held, prev); !slices.Equal(got, want) {
			t.Errorf("probe %d asks about drives %v, want %v", i+1, got, want)
		}
	}
	if got := turn(held[:5], ProbeDrives(held[:5], prev)); !slices.Equal(got, seq(0, 4)) {
		t.Errorf("five held: %v", got)
	}
	if got := turn(held, ProbeDrives(held, nil)); !slices.Equal(got, seq(0, 7)) {
		t.Errorf("no previous probe: %v", got)
	}
	if got := ProbeDrives(nil, nil); got == nil || len(got) != 0 {
		t.Errorf("nothing held: %#v, want an empty list (never null)", got)
	}
}

// TestGateAwaiting: the gate names the drives it holds by node, in its order, with their
// kernel names, for the probe to ask about.
func TestGateAwaiting(t *testing.T) {
	existing := []any{
		map[string]any{"name": "n2", "devices": []any{map[string]any{"name": "/dev/a", "config": map[string]any{"metadataDevice": "/dev/old"}},
			map[string]any{"name": "/dev/b", "config": map[string]any{"metadataDevice": "/dev/old"}}}},
		map[string]any{"name": "n1", "devices": []any{map[string]any{"name": "/dev/c", "config": map[string]any{"metadataDevice": "/dev/old"}},
			map[string]any{"name": "/dev/d", "config": map[string]any{"metadataDevice": "/dev/new"}}}},
	}
	entries := []RookNode{
		{Name: "n2", Devices: []RookDevice{{Name: "/dev/a", Config: RookDeviceConfig{MetadataDevice: "/dev/new"}}, {Name: "/dev/b", Config: RookDeviceConfig{MetadataDevice: "/dev/new"}}}},
		{Name: "n1", Devices: []RookDevice{{Name: "/dev/c", Config: RookDeviceConfig{MetadataDevice: "/dev/new"}}, {Name: "/dev/d", Config: RookDeviceConfig{MetadataDevice: "/dev/new"}}}},
	}
	g := GateReplacements(GateInput{Entries: entries, Existing: existing, Kernel: map[string]map[string]string{"n2": {"/dev/b": "sdb"}}, Now: probeT0})
	want := map[string][]ProbeDrive{"n1": {{Path: "/dev/c"}}, "n2": {{Path: "/dev/a"}, {Path: "/dev/b", Kernel: "sdb"}}}
	if len(g.Awaiting) != len(want) || !slices.Equal(g.Awaiting["n1"], want["n1"]) || !slices.Equal(g.Awaiting["n2"], want["n2"]) {
		t.Errorf("Awaiting = %v of held %q, want %v", g.Awaiting, g.Held, want)
	}
	if g := GateReplacements(GateInput{Entries: entries[1:2], Existing: []any{map[string]any{"name": "n2", "devices": []any{}}}, Now: probeT0}); g.Awaiting != nil {
		t.Errorf("nothing held: %v", g.Awaiting)
	}
}
