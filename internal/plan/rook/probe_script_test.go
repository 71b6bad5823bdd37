package rook

import (
	"cmp"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeCeph stands in for the ceph CLI: it records its arguments one per line, then prints what
// $FAKE_OUT holds on stdout and $FAKE_ERR on stderr and exits $FAKE_RC; `osd ls-tree` prints
// $FAKE_IDS instead, or $FAKE_IDS_ERR on stderr and exits $FAKE_IDS_RC when that is set;
// `osd tree destroyed` prints $FAKE_TREE and exits $FAKE_TREE_RC (0 when empty).
const fakeCeph = `#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >>"$FAKE_ARGS"
echo -- >>"$FAKE_ARGS"
case " $* " in *" ls-tree "*)
	[ -z "$FAKE_IDS_RC" ] || { printf '%s\n' "$FAKE_IDS_ERR" >&2; exit "$FAKE_IDS_RC"; }
	printf '%s' "$FAKE_IDS"; exit 0 ;;
*" osd tree destroyed "*)
	printf '%s' "$FAKE_TREE"; exit "${FAKE_TREE_RC:-0}" ;;
esac
printf '%s' "$FAKE_OUT"
printf '%s' "$FAKE_ERR" >&2
exit "$FAKE_RC"
`

// recorded is a file of testdata, as recorded.
func recorded(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// recordedDeviceLs is `ceph device ls-by-host` as recorded on Ceph 16 (healthy): five
// elements, the fast device's first.
var recordedDeviceLs = func() string {
	b, err := os.ReadFile(filepath.Join("testdata", "ceph16", "healthy", "device-ls-by-host.json"))
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(b))
}()

// TestProbeScript runs ProbeScript with a stand-in ceph: what it asks Ceph, and what it leaves
// in the termination message. test/ceph TestCephProbeClient runs it against a real Ceph.
func TestProbeScript(t *testing.T) {
	cases := []struct {
		name, question, endpoints, ids, out, errOut, rc string
		// idsRC and idsErr make `osd ls-tree` fail; tree and treeRC are `osd tree destroyed`.
		idsRC, idsErr, tree, treeRC string
		// devices is PRISM_DEVICES ("": []).
		devices string
		wantRC  int
		// wantCalls are the ceph calls after the common options, each its arguments joined by |.
		wantCalls []string
		// wantMsg is the termination message, or its start when it ends in "...".
		wantMsg string
	}{
		{name: "health, Rook's msgr1 and msgr2-only endpoints", question: ProbeHealth, endpoints: "a=10.0.0.1:6789,b=[fd00::2]:3300",
			out: `{"status":"HEALTH_OK","checks":{},"mutes":[]}`, rc: "0", wantCalls: []string{"health|--format|json"}, wantMsg: `{"status":"HEALTH_OK","checks":{}}`},
		// Recorded on Ceph 16 (testdata/ceph16/muted): counts and mutes go, muted and summaries stay.
		{name: "health keeps the status and each check's severity, muted and summary", question: ProbeHealth, endpoints: "a=10.0.0.1:6789",
			out: recorded("ceph16/muted/health.json"), rc: "0", wantCalls: []string{"health|--format|json"},
			wantMsg: `{"status":"HEALTH_WARN","checks":{"AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED":{"severity":"HEALTH_WARN","muted":false,"summary":{"message":"mon is allowing insecure global_id reclaim"}},` +
				`"MON_DISK_LOW":{"severity":"HEALTH_WARN","muted":false,"summary":{"message":"mon a is low on available space"}},` +
				`"OSD_NEARFULL":{"severity":"HEALTH_WARN","muted":true,"summary":{"message":"3 nearfull osd(s)"}},` +
				`"POOL_NEARFULL":{"severity":"HEALTH_WARN","muted":true,"summary":{"message":"2 pool(s) nearfull"}}}}`},
		{name: "health detail's details go too", question: ProbeHealth, endpoints: "a=10.0.0.1:6789",
			out: recorded("ceph20/destroyed-stale/health-detail.json"), rc: "0", wantCalls: []string{"health|--format|json"},
			wantMsg: `{"status":"HEALTH_WARN","checks":{"PG_AVAILABILITY":{"severity":"HEALTH_WARN","muted":false,"summary":{"message":"Reduced data availability: 8 pgs stale"}}}}`},
		{name: "health without checks fails", question: ProbeHealth, endpoints: "a=10.0.0.1:6789", out: `{"status":"HEALTH_OK"}`, rc: "0", wantRC: 1,
			wantCalls: []string{"health|--format|json"}, wantMsg: "ceph health: keeping the status and checks: KeyError: 'checks'"},
		{name: "a check without severity fails", question: ProbeHealth, endpoints: "a=10.0.0.1:6789", out: `{"status":"HEALTH_WARN","checks":{"X":{"muted":true}}}`, rc: "0", wantRC: 1,
			wantCalls: []string{"health|--format|json"}, wantMsg: "ceph health: keeping the status and checks: KeyError: 'severity'"},
		{name: "destroyed keeps each OSD's id and status (Ceph 20.2.4, osd.2 destroyed)", question: ProbeDestroyed, endpoints: "a=10.0.0.1:6789",
			out: recorded("ceph20/destroyed-stale/osd-tree-from-destroyed.json"), rc: "0", wantCalls: []string{"osd|tree-from|crush-host|destroyed|--format|json"},
			wantMsg: `{"nodes":[{"id":2,"status":"destroyed"}]}`},
		{name: "destroyed: none (Ceph 20.2.4)", question: ProbeDestroyed, endpoints: "a=10.0.0.1:6789",
			out: recorded("ceph20/before-destroy/osd-tree-from-destroyed.json"), rc: "0", wantCalls: []string{"osd|tree-from|crush-host|destroyed|--format|json"},
			wantMsg: `{"nodes":[]}`},
		{name: "destroyed: an OSD without status fails", question: ProbeDestroyed, endpoints: "a=10.0.0.1:6789",
			out: `{"nodes":[{"id":2}]}`, rc: "0", wantRC: 1, wantCalls: []string{"osd|tree-from|crush-host|destroyed|--format|json"},
			wantMsg: "ceph osd tree-from crush-host destroyed: keeping the OSDs: KeyError: 'status'"},
		// Ceph's ENOENT as recorded on Ceph 16 (testdata/probe/ceph16/destroyed-no-bucket-destroyed.txt), and its
		// `ceph osd tree destroyed` (destroyed-cluster-*.json, test/ceph TestCephProbeClient).
		// A missing bucket: the cluster's destroyed OSDs decide (decision 0061).
		{name: "destroyed: a missing bucket, and none destroyed in the cluster", question: ProbeDestroyed, endpoints: "a=10.0.0.1:6789",
			errOut: "Error ENOENT: bucket 'crush-host' does not exist", rc: "2", tree: recorded("probe/ceph16/destroyed-cluster-none.json"),
			wantCalls: []string{"osd|tree-from|crush-host|destroyed|--format|json", "osd|tree|destroyed|--format|json"}, wantMsg: `{"nodes":[]}`},
		{name: "destroyed: a missing bucket, and osd.0 destroyed elsewhere", question: ProbeDestroyed, endpoints: "a=10.0.0.1:6789",
			errOut: "Error ENOENT: bucket 'crush-host' does not exist", rc: "2", tree: recorded("probe/ceph16/destroyed-cluster-destroyed.json"), wantRC: 1,
			wantCalls: []string{"osd|tree-from|crush-host|destroyed|--format|json", "osd|tree|destroyed|--format|json"},
			wantMsg:   "ceph osd tree-from crush-host destroyed: exit 2: Error ENOENT: bucket 'crush-host' does not exist; ceph osd tree destroyed: ValueError: the cluster has OSDs destroyed: [0]"},
		{name: "destroyed: a missing bucket, and a destroyed stray OSD", question: ProbeDestroyed, endpoints: "a=10.0.0.1:6789",
			errOut: "Error ENOENT: bucket 'crush-host' does not exist", rc: "2", tree: `{"nodes":[],"stray":[{"id":7,"name":"osd.7","status":"destroyed"}]}`, wantRC: 1,
			wantCalls: []string{"osd|tree-from|crush-host|destroyed|--format|json", "osd|tree|destroyed|--format|json"},
			wantMsg:   "ceph osd tree-from crush-host destroyed: exit 2: Error ENOENT: bucket 'crush-host' does not exist; ceph osd tree destroyed: ValueError: the cluster has OSDs destroyed: [7]"},
		{name: "destroyed: a missing bucket, and the cluster's tree not answered", question: ProbeDestroyed, endpoints: "a=10.0.0.1:6789",
			errOut: "Error ENOENT: bucket 'crush-host' does not exist", rc: "2", treeRC: "13", wantRC: 1,
			wantCalls: []string{"osd|tree-from|crush-host|destroyed|--format|json", "osd|tree|destroyed|--format|json"},
			wantMsg:   "ceph osd tree-from crush-host destroyed: exit 2: Error ENOENT: bucket 'crush-host' does not exist"},
		{name: "destroyed: a missing bucket, and a cut tree", question: ProbeDestroyed, endpoints: "a=10.0.0.1:6789",
			errOut: "Error ENOENT: bucket 'crush-host' does not exist", rc: "2", tree: `{"nodes":[`, wantRC: 1,
			wantCalls: []string{"osd|tree-from|crush-host|destroyed|--format|json", "osd|tree|destroyed|--format|json"},
			wantMsg:   "ceph osd tree-from crush-host destroyed: exit 2: Error ENOENT: bucket 'crush-host' does not exist; ceph osd tree destroyed: JSONDecodeError: ..."},
		{name: "pg stat", question: ProbePGStat, endpoints: "a=10.0.0.1:6789", out: `{}`, rc: "0",
			wantCalls: []string{"pg|stat|--format|json"}, wantMsg: `{}`},
		{name: "a node name is one argument, never shell text", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", out: `[]`, rc: "0",
			wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"}, wantMsg: `[]`},
		{name: "devices keeps Ceph's elements of the drives asked about, as Ceph printed them", question: ProbeDevices, endpoints: "a=10.0.0.1:6789",
			devices: `["/dev/disk/by-id/nvme-PRISMTEST_QLC_1","loop2","nvme-PRISMTEST_QLC_1","/dev/disk/by-id/nvme-PRISMTEST_QLC_3","loop4"]`,
			out:     recordedDeviceLs, rc: "0", wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"},
			wantMsg: `[{"devid":"PRISMTEST_QLC_1","location":[{"host":"prismtest-node","dev":"loop2","path":""}],"daemons":["osd.1"]},` +
				`{"devid":"PRISMTEST_QLC_3","location":[{"host":"prismtest-node","dev":"loop4","path":""}],"daemons":["osd.3"]}]`},
		{name: "a drive found by its path", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", devices: `["/dev/disk/by-path/pci-0000:3c:00.0-nvme-1"]`,
			out: `[{"devid":"A_1","location":[{"host":"h","dev":"nvme1n1","path":"/dev/disk/by-path/pci-0000:3b:00.0-nvme-1"}],"daemons":["osd.0"]},` +
				`{"devid":"A_2","location":[{"host":"h","dev":"nvme2n1","path":"/dev/disk/by-path/pci-0000:3c:00.0-nvme-1"}],"daemons":["osd.1"],"wear_level":0.01}]`,
			rc: "0", wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"},
			wantMsg: `[{"devid":"A_2","location":[{"host":"h","dev":"nvme2n1","path":"/dev/disk/by-path/pci-0000:3c:00.0-nvme-1"}],"daemons":["osd.1"],"wear_level":0.01}]`},
		{name: "a drive Ceph does not list", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", devices: `["/dev/disk/by-id/nvme-X","nvme9n1"]`,
			out: recordedDeviceLs, rc: "0", wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"}, wantMsg: `[]`},
		{name: "a cut answer fails, never a partial list", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", devices: `["loop2"]`,
			out: recordedDeviceLs[:200], rc: "0", wantRC: 1, wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"},
			wantMsg: "ceph device ls-by-host n1; touch /tmp/x $(id): keeping the drives asked about: JSONDecodeError: ..."},
		{name: "an answer that is not a list fails", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", devices: `["loop2"]`,
			out: `{"devid":"A"}`, rc: "0", wantRC: 1, wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"},
			wantMsg: "ceph device ls-by-host n1; touch /tmp/x $(id): keeping the drives asked about: ValueError: not a list"},
		{name: "an element without its location fails", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", devices: `["loop2"]`,
			out: `[{"devid":"A","daemons":["osd.1"]}]`, rc: "0", wantRC: 1, wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"},
			wantMsg: "ceph device ls-by-host n1; touch /tmp/x $(id): keeping the drives asked about: KeyError: 'location'"},
		{name: "drives that are not a list of names fail", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", devices: `"loop2"`,
			out: `[]`, rc: "0", wantRC: 1, wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"},
			wantMsg: "ceph device ls-by-host n1; touch /tmp/x $(id): keeping the drives asked about: ValueError: PRISM_DEVICES is not a list of device names"},
		{name: "devices refused leaves stderr", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", devices: `["loop2"]`,
			out: "\n", errOut: "Error EACCES: access denied", rc: "13", wantRC: 1, wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"},
			wantMsg: "ceph device ls-by-host n1; touch /tmp/x $(id): exit 13: Error EACCES: access denied"},
		{name: "safe-to-destroy asks about the host's OSDs", question: ProbeSafeToDestroy, endpoints: "a=10.0.0.1:6789", ids: "3\n11\n",
			out: `{"safe_to_destroy":[]}`, rc: "16",
			wantRC: 16, wantCalls: []string{"osd|ls-tree|crush-host", "osd|safe-to-destroy|3|11|--format|json"}, wantMsg: `{"safe_to_destroy":[]}`},
		{name: "a CRUSH host without OSDs answers an empty list and asks nothing more", question: ProbeSafeToDestroy, endpoints: "a=10.0.0.1:6789", ids: "",
			wantCalls: []string{"osd|ls-tree|crush-host"}, wantMsg: "[]"},
		// Recorded on Ceph 20.2.4 (testdata/ceph20/before-destroy/osd-ls-tree-no-such-host.exit).
		{name: "a missing CRUSH host fails with Ceph's reason", question: ProbeSafeToDestroy, endpoints: "a=10.0.0.1:6789",
			idsRC: "2", idsErr: `Error ENOENT: "crush-host" does not exist`,
			wantRC: 1, wantCalls: []string{"osd|ls-tree|crush-host"}, wantMsg: `ceph osd ls-tree crush-host: Error ENOENT: "crush-host" does not exist`},
		{name: "ls-tree printing something else", question: ProbeSafeToDestroy, endpoints: "a=10.0.0.1:6789", ids: "3\n*\n",
			wantRC: 1, wantCalls: []string{"osd|ls-tree|crush-host"}, wantMsg: "ceph osd ls-tree crush-host: not an OSD id: *"},
		{name: "an error leaves stderr", question: ProbeHealth, endpoints: "a=10.0.0.1:6789", errOut: "[errno 13] RADOS permission denied", rc: "13",
			wantRC: 1, wantCalls: []string{"health|--format|json"}, wantMsg: "ceph health: exit 13: [errno 13] RADOS permission denied"},
		// Ceph 16 refusing a command to a client without the cap prints a newline on stdout and
		// its reason on stderr (test/ceph TestCephProbeClient without the mgr cap).
		{name: "a refusal with a bare newline on stdout", question: ProbePGStat, endpoints: "a=10.0.0.1:6789", out: "\n", errOut: "Error EACCES: access denied", rc: "13",
			wantRC: 1, wantCalls: []string{"pg|stat|--format|json"}, wantMsg: "ceph pg stat: exit 13: Error EACCES: access denied"},
		{name: "no mons", question: ProbeHealth, endpoints: "", wantRC: 1, wantMsg: "no mon endpoints in ConfigMap rook-ceph-mon-endpoints"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "ceph"), []byte(fakeCeph), 0o755); err != nil {
				t.Fatal(err)
			}
			args, msg := filepath.Join(dir, "args"), filepath.Join(dir, "termination-log")
			cmd := exec.Command("sh", "-c", ProbeScript, "prism-probe", tc.question)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "PRISM_MON_ENDPOINTS=" + tc.endpoints, "PRISM_NODE=n1; touch /tmp/x $(id)",
				"PRISM_CRUSH_HOST=crush-host", "PRISM_KEYFILE=/etc/prism-probe/key", "PRISM_TERMINATION_LOG=" + msg, "PRISM_DEVICES=" + cmp.Or(tc.devices, "[]"),
				"FAKE_ARGS=" + args, "FAKE_IDS=" + tc.ids, "FAKE_IDS_RC=" + tc.idsRC, "FAKE_IDS_ERR=" + tc.idsErr,
				"FAKE_TREE=" + tc.tree, "FAKE_TREE_RC=" + tc.treeRC,
				"FAKE_OUT=" + tc.out, "FAKE_ERR=" + tc.errOut, "FAKE_RC=" + tc.rc}
			err := cmd.Run()
			rc := 0
			if ee, ok := err.(*exec.ExitError); ok {
				rc = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			gotMsg, _ := os.ReadFile(msg)
			want, prefix := strings.CutSuffix(tc.wantMsg, "...")
			if rc != tc.wantRC || (prefix && !strings.HasPrefix(string(gotMsg), want)) || (!prefix && string(gotMsg) != want) {
				t.Errorf("exit %d, message %q; want %d, %q", rc, gotMsg, tc.wantRC, tc.wantMsg)
			}
			raw, _ := os.ReadFile(args)
			var calls []string
			for _, call := range strings.Split(strings.TrimSuffix(string(raw), "--\n"), "--\n") {
				if call == "" {
					continue
				}
				argv := strings.Split(strings.TrimSuffix(call, "\n"), "\n")
				mons := "[v2:10.0.0.1:3300,v1:10.0.0.1:6789]"
				if tc.endpoints != "a=10.0.0.1:6789" {
					mons = "[v2:10.0.0.1:3300,v1:10.0.0.1:6789],[v2:[fd00::2]:3300]"
				}
				common := []string{"--conf", "/dev/null", "--mon-host", mons, "--id", ProbeClient, "--keyfile", "/etc/prism-probe/key", "--connect-timeout", "20"}
				if len(argv) < len(common) || strings.Join(argv[:len(common)], "|") != strings.Join(common, "|") {
					t.Errorf("ceph called with %q, want it to start with %q", argv, common)
					continue
				}
				calls = append(calls, strings.Join(argv[len(common):], "|"))
			}
			if strings.Join(calls, "\n") != strings.Join(tc.wantCalls, "\n") {
				t.Errorf("ceph calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(tc.wantCalls, "\n"))
			}
		})
	}
}

// keepAsked runs the devices question of ProbeScript with a stand-in ceph printing out and
// PRISM_DEVICES names, and returns the termination message.
func keepAsked(t *testing.T, out string, names []string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ceph"), []byte(fakeCeph), 0o755); err != nil {
		t.Fatal(err)
	}
	devices, _ := json.Marshal(names)
	msg := filepath.Join(dir, "termination-log")
	cmd := exec.Command("sh", "-c", ProbeScript, "prism-probe", ProbeDevices)
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "PRISM_MON_ENDPOINTS=a=10.0.0.1:6789", "PRISM_NODE=n1", "PRISM_CRUSH_HOST=n1",
		"PRISM_KEYFILE=/k", "PRISM_TERMINATION_LOG=" + msg, "PRISM_DEVICES=" + string(devices),
		"FAKE_ARGS=" + filepath.Join(dir, "args"), "FAKE_OUT=" + out, "FAKE_RC=0"}
	if b, err := cmd.CombinedOutput(); err != nil {
		raw, _ := os.ReadFile(msg)
		t.Fatalf("devices question: %v %s: %s", err, b, raw)
	}
	raw, err := os.ReadFile(msg)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestProbeKeepsWhatTheGateReads: for every drive, what the probe keeps of Ceph's list for
// that drive's names gives OSDsOnDevice the same OSDs, and the same "listed", as Ceph's whole
// list: on each list recorded on Ceph 16 (drives listed, dropped, a device without location)
// and on a dense node's.
func TestProbeKeepsWhatTheGateReads(t *testing.T) {
	kernel := recordedKernelNames(t)
	lists := map[string]bool{}
	for _, state := range []string{"healthy", "destroyed"} {
		b, err := os.ReadFile(filepath.Join("testdata", "ceph16", state, "device-ls-by-host.json"))
		if err != nil {
			t.Fatal(err)
		}
		lists[string(b)] = true
	}
	dense, _ := json.Marshal(denseDeviceLs(denseDrives))
	lists[string(dense)] = true
	var drives []ProbeDrive
	for i := range 5 {
		path := recordedQLC + string(rune('0'+i))
		drives = append(drives, ProbeDrive{Path: path, Kernel: kernel[path]}, ProbeDrive{Path: path})
	}
	for i := range denseDrives + 1 {
		byID, k := denseDrive(i)
		drives = append(drives, ProbeDrive{Path: byID, Kernel: k})
	}
	drives = append(drives, ProbeDrive{Path: "/dev/disk/by-path/pci-0000:3c:00.0-nvme-1"}, ProbeDrive{Path: "/dev/loop0"})
	for list := range lists {
		whole, err := ParseDeviceLs([]byte(list))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range drives {
			wantIDs, wantListed := OSDsOnDevice(whole, d.Path, d.Kernel)
			kept := keepAsked(t, list, d.Names())
			devs, err := ParseDeviceLs([]byte(kept))
			if err != nil {
				t.Fatalf("%v: kept %s: %v", d, kept, err)
			}
			ids, listed := OSDsOnDevice(devs, d.Path, d.Kernel)
			if !slices.Equal(ids, wantIDs) || listed != wantListed {
				t.Errorf("%v: kept %s: OSDs %v listed %v, whole list: %v %v", d, kept, ids, listed, wantIDs, wantListed)
			}
		}
	}
}
