//go:build linux

package ceph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prism-storage/prism/internal/plan/rook"
)

// probeRecordDir is where PRISM_UPDATE_PROBE=1 writes what the probe answered, relative to
// this package.
const probeRecordDir = "../../internal/plan/rook/testdata/probe/ceph16"

// TestCephProbeClient runs the probe pod's own script (rook.ProbeScript) against a real Ceph
// as a cephx client with only the probe's caps (rook.ProbeCaps), as the pod does: no config
// file, the mons as Rook's ConfigMap lists them, the bare key in a file, nothing else in the
// environment. Each question must be answered with Ceph's JSON, and the answers read back
// through rook.ProbeAnswers with no error; the client must be refused any change. The mon
// listens on 127.0.0.1:3300, Ceph's msgr2 port, which a Rook endpoint names without a type.
// About 1-2 minutes.
func TestCephProbeClient(t *testing.T) {
	e := newEnv(t)
	c := bootstrapForProbe(e)

	// A CRUSH host with one OSD id under it, as Rook's OSDs of node probe.node.example sit
	// under host probe-node-example.
	node := "probe.node.example"
	host := rook.CrushHost(node, "")
	c.mustCeph("osd", "crush", "add-bucket", host, "host")
	c.mustCeph("osd", "crush", "move", host, "root=default")
	id := strings.TrimSpace(c.mustCeph("osd", "create"))
	c.mustCeph("osd", "crush", "add", "osd."+id, "0.01", "host="+host)

	keyfile := newProbeKey(c)
	pod := askProbe(t, c, node, host, keyfile, rook.ProbeDrive{Path: "/dev/disk/by-id/nvme-PROBE_QLC", Kernel: "nvme1n1"}.Names(), time.Now(), func(name string, out []byte, rc int, stderr string) {
		t.Logf("%s: exit %d, %d bytes: %s", name, rc, len(out), out)
		if !json.Valid(out) {
			t.Errorf("%s: exit %d, not JSON: %q (stderr %q)", name, rc, out, stderr)
		}
		if len(out) >= rook.ProbeMessageLimit(len(rook.ProbeContainers)) {
			t.Errorf("%s: %d bytes, more than a probe pod keeps", name, len(out))
		}
		if os.Getenv("PRISM_UPDATE_PROBE") != "" {
			if err := os.MkdirAll(probeRecordDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(probeRecordDir, name+".json"), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
	a, done := rook.ProbeAnswers(pod, time.Now())
	if !done || a.Err != "" || a.Health == nil || a.PGStat == nil || a.Devices == nil || a.SafeToDestroy == nil {
		t.Errorf("answers read back: done %v, %+v", done, a)
	}
	var safe struct {
		Safe  []int `json:"safe_to_destroy"`
		Other []int `json:"missing_stats"`
	}
	if err := json.Unmarshal(a.SafeToDestroy, &safe); err != nil || len(safe.Safe)+len(safe.Other) != 1 || fmt.Sprint(append(safe.Safe, safe.Other...)[0]) != id {
		t.Errorf("safe-to-destroy does not ask about osd.%s alone: %s (%v)", id, a.SafeToDestroy, err)
	}
	if ids, err := rook.ParseDestroyed(a.Destroyed); err != nil || len(ids) != 0 {
		t.Errorf("destroyed before any destroy: %v %v (%s)", ids, err, a.Destroyed)
	}
	probeHostStates(t, c, node, host, keyfile, id)

	// A key Ceph does not know: the probe fails with Ceph's own reason, which the operator
	// reports (recorded for the envtest's failing probe).
	wrong := c.path("wrong.key")
	if err := os.WriteFile(wrong, []byte("AQBQlBVrAAAAABAAp3SR1fH0UDLzRtoIIXCsZw=="), 0o400); err != nil {
		t.Fatal(err)
	}
	out, rc, _ := runProbe(t, c, rook.ProbeHealth, node, host, wrong, nil)
	t.Logf("health with a wrong key: exit %d: %s", rc, out)
	if rc == 0 || json.Valid(out) || !strings.HasPrefix(string(out), "ceph health: exit ") {
		t.Errorf("health with a wrong key: exit %d, message %q", rc, out)
	}
	if os.Getenv("PRISM_UPDATE_PROBE") != "" {
		if err := os.WriteFile(filepath.Join(probeRecordDir, "health-wrong-key.txt"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Read-only: every change is refused.
	for _, argv := range [][]string{{"osd", "set", "noout"}, {"osd", "out", id}, {"config", "set", "osd", "osd_max_backfills", "2"}} {
		out, err := c.e.run(quick, append([]string{"ceph", "--conf", "/dev/null", "--mon-host", "[v2:127.0.0.1:3300]", "--id", rook.ProbeClient,
			"--keyfile", keyfile, "--connect-timeout", "20"}, argv...)...)
		if err == nil || !strings.Contains(out+err.Error(), "EACCES: access denied") {
			t.Errorf("ceph %s as the probe client: want permission denied, got %v: %s", strings.Join(argv, " "), err, out)
		}
	}
}

// bootstrapForProbe is bootstrap with the mon on 127.0.0.1:3300, Ceph's msgr2 port, which a
// Rook endpoint names without a type: the probe's script reaches it as it reaches Rook's mons.
func bootstrapForProbe(e *env) *cluster {
	if l, err := net.Listen("tcp", "127.0.0.1:3300"); err != nil {
		e.t.Fatalf("the test's mon needs 127.0.0.1:3300, Ceph's msgr2 port: %v", err)
	} else {
		_ = l.Close()
	}
	return e.bootstrapOn(3300)
}

// newProbeKey creates the probe's cephx user with exactly rook.ProbeCaps, as Rook does for
// Prism's CephClient, and writes its bare key to a file, as the pod mounts it.
func newProbeKey(c *cluster) string {
	t := c.e.t
	caps := []string{"auth", "get-or-create-key", "client." + rook.ProbeClient}
	for _, k := range slices.Sorted(maps.Keys(rook.ProbeCaps)) {
		caps = append(caps, k, rook.ProbeCaps[k])
	}
	key := strings.TrimSpace(c.mustCeph(caps...))
	keyfile := c.path("prism-probe.key")
	if err := os.WriteFile(keyfile, []byte(key), 0o400); err != nil {
		t.Fatal(err)
	}
	t.Logf("client.%s: %s", rook.ProbeClient, strings.TrimSpace(c.mustCeph("auth", "get", "client."+rook.ProbeClient)))
	return keyfile
}

// askProbe runs the probe pod's containers one after the other (runProbe), the devices question
// keeping Ceph's elements for devices (rook.ProbeTarget.Devices), and returns the pod as the
// kubelet reports it once they ended at the time given: each answer in its container's
// termination message. each, when not nil, sees every container's answer first.
func askProbe(t *testing.T, c *cluster, node, host, keyfile string, devices []string, at time.Time, each func(name string, out []byte, rc int, stderr string)) *corev1.Pod {
	pod := rook.ProbePod(rook.ProbeTarget{Node: node, Devices: devices})
	pod.Name, pod.Status = "probe", corev1.PodStatus{Phase: corev1.PodSucceeded}
	for _, ctr := range pod.Spec.Containers {
		name := ctr.Name
		out, rc, stderr := runProbe(t, c, name, node, host, keyfile, devices)
		if each != nil {
			each(name, out, rc, stderr)
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: name, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(rc), Message: string(out), FinishedAt: metav1.NewTime(at)}}})
	}
	return pod
}

// runProbe runs one probe container's script the way the pod does: as the ceph user, in an
// environment of its own, the key readable through its group (the pod's fsGroup), the
// termination message file made world-writable beforehand (as the kubelet makes it); it
// returns the termination message, the exit status and stderr.
func runProbe(t *testing.T, c *cluster, name, node, host, keyfile string, devices []string) ([]byte, int, string) {
	t.Helper()
	asked, err := json.Marshal(append([]string{}, devices...))
	if err != nil {
		t.Fatal(err)
	}
	ceph, err := user.Lookup("ceph")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.ParseUint(ceph.Uid, 10, 32)
	gid, _ := strconv.ParseUint(ceph.Gid, 10, 32)
	if err := os.Chown(keyfile, 0, int(gid)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(keyfile, 0o440); err != nil {
		t.Fatal(err)
	}
	msg := c.path("termination-" + name)
	if err := os.WriteFile(msg, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(msg, 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(c.e.ctx, "sh", "-c", rook.ProbeScript, "prism-probe", name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent", "LC_ALL=C",
		"PRISM_MON_ENDPOINTS=a=127.0.0.1:3300", "PRISM_NODE=" + node, "PRISM_CRUSH_HOST=" + host,
		"PRISM_KEYFILE=" + keyfile, "PRISM_TERMINATION_LOG=" + msg, "PRISM_DEVICES=" + string(asked)}
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	rc := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		rc = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out, rerr := os.ReadFile(msg)
	if rerr != nil {
		t.Fatalf("%s: exit %d, no termination message: %v (stderr %q)", name, rc, rerr, stderr.String())
	}
	return out, rc, stderr.String()
}

// probeHostStates asks the destroyed and safe-to-destroy questions while the host's one OSD
// (id) is destroyed, then purged (the bucket stays, empty), and about a host with no bucket
// (decision 0058), whose destroyed answer is the whole cluster's (decision 0061: it fails
// while an OSD is destroyed anywhere, and says none once none is); PRISM_UPDATE_PROBE=1
// records each answer as <question>-<state>, and `ceph osd tree destroyed` as the admin
// printed it as destroyed-cluster-<state>.json.
func probeHostStates(t *testing.T, c *cluster, node, host, keyfile, id string) {
	ask := func(state, name, askHost string, wantRC int) []byte {
		out, rc, stderr := runProbe(t, c, name, node, askHost, keyfile, nil)
		t.Logf("%s %s: exit %d, %d bytes: %s", state, name, rc, len(out), out)
		if rc != wantRC {
			t.Errorf("%s %s: exit %d, want %d (stderr %q)", state, name, rc, wantRC, stderr)
		}
		if os.Getenv("PRISM_UPDATE_PROBE") != "" {
			ext := ".json"
			if !json.Valid(out) {
				ext = ".txt"
			}
			if err := os.WriteFile(filepath.Join(probeRecordDir, name+"-"+state+ext), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	tree := func(state string) {
		out := strings.TrimSpace(c.mustCeph("osd", "tree", "destroyed", "-f", "json"))
		t.Logf("ceph osd tree destroyed (%s): %s", state, out)
		if os.Getenv("PRISM_UPDATE_PROBE") != "" {
			if err := os.WriteFile(filepath.Join(probeRecordDir, "destroyed-cluster-"+state+".json"), []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	missing := "no-such-host"
	c.mustCeph("osd", "destroy", id, "--yes-i-really-mean-it")
	if ids, err := rook.ParseDestroyed(ask("destroyed", rook.ProbeDestroyed, host, 0)); err != nil || fmt.Sprint(ids) != "["+id+"]" {
		t.Errorf("destroyed: %v %v, want [%s]", ids, err, id)
	}
	tree("destroyed")
	if out := ask("no-bucket-destroyed", rook.ProbeDestroyed, missing, 1); !strings.HasSuffix(string(out), "the cluster has OSDs destroyed: ["+id+"]") {
		t.Errorf("destroyed on a missing bucket while osd.%s is destroyed: %q", id, out)
	}
	c.mustCeph("osd", "purge", id, "--yes-i-really-mean-it")
	tree("none")
	if ids, err := rook.ParseDestroyed(ask("purged", rook.ProbeDestroyed, host, 0)); err != nil || len(ids) != 0 {
		t.Errorf("purged: %v %v, want none", ids, err)
	}
	if out := ask("purged", rook.ProbeSafeToDestroy, host, 0); string(out) != "[]" {
		t.Errorf("safe-to-destroy on the empty bucket %s: %q, want []", host, out)
	}
	if out := ask("no-bucket", rook.ProbeSafeToDestroy, missing, 1); !strings.HasPrefix(string(out), "ceph osd ls-tree "+missing+": ") {
		t.Errorf("safe-to-destroy on a missing bucket: %q", out)
	}
	if out := ask("no-bucket", rook.ProbeDestroyed, missing, 0); string(out) != `{"nodes":[]}` {
		t.Errorf("destroyed on a missing bucket with none destroyed in the cluster: %q", out)
	}
}
