package rook

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCeph stands in for the ceph CLI: it records its arguments one per line, then prints what
// $FAKE_OUT holds on stdout and $FAKE_ERR on stderr and exits $FAKE_RC; `osd ls-tree` prints
// $FAKE_IDS instead.
const fakeCeph = `#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >>"$FAKE_ARGS"
echo -- >>"$FAKE_ARGS"
case " $* " in *" ls-tree "*) printf '%s' "$FAKE_IDS"; exit 0 ;; esac
printf '%s' "$FAKE_OUT"
printf '%s' "$FAKE_ERR" >&2
exit "$FAKE_RC"
`

// TestProbeScript runs ProbeScript with a stand-in ceph: what it asks Ceph, and what it leaves
// in the termination message. test/ceph TestCephProbeClient runs it against a real Ceph.
func TestProbeScript(t *testing.T) {
	cases := []struct {
		name, question, endpoints, ids, out, errOut, rc string
		wantRC                                          int
		// wantCalls are the ceph calls after the common options, each its arguments joined by |.
		wantCalls []string
		wantMsg   string
	}{
		{name: "health, Rook's msgr1 and msgr2-only endpoints", question: ProbeHealth, endpoints: "a=10.0.0.1:6789,b=[fd00::2]:3300",
			out: `{"status":"HEALTH_OK"}`, rc: "0", wantCalls: []string{"health|--format|json"}, wantMsg: `{"status":"HEALTH_OK"}`},
		{name: "pg stat", question: ProbePGStat, endpoints: "a=10.0.0.1:6789", out: `{}`, rc: "0",
			wantCalls: []string{"pg|stat|--format|json"}, wantMsg: `{}`},
		{name: "a node name is one argument, never shell text", question: ProbeDevices, endpoints: "a=10.0.0.1:6789", out: `[]`, rc: "0",
			wantCalls: []string{"device|ls-by-host|n1; touch /tmp/x $(id)|--format|json"}, wantMsg: `[]`},
		{name: "safe-to-destroy asks about the host's OSDs", question: ProbeSafeToDestroy, endpoints: "a=10.0.0.1:6789", ids: "3\n11\n",
			out: `{"safe_to_destroy":[]}`, rc: "16",
			wantRC: 16, wantCalls: []string{"osd|ls-tree|crush-host", "osd|safe-to-destroy|3|11|--format|json"}, wantMsg: `{"safe_to_destroy":[]}`},
		{name: "a host without OSDs answers nothing", question: ProbeSafeToDestroy, endpoints: "a=10.0.0.1:6789", ids: "",
			wantRC: 1, wantCalls: []string{"osd|ls-tree|crush-host"}, wantMsg: "no OSD under CRUSH host crush-host"},
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
				"PRISM_CRUSH_HOST=crush-host", "PRISM_KEYFILE=/etc/prism-probe/key", "PRISM_TERMINATION_LOG=" + msg,
				"FAKE_ARGS=" + args, "FAKE_IDS=" + tc.ids, "FAKE_OUT=" + tc.out, "FAKE_ERR=" + tc.errOut, "FAKE_RC=" + tc.rc}
			err := cmd.Run()
			rc := 0
			if ee, ok := err.(*exec.ExitError); ok {
				rc = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			gotMsg, _ := os.ReadFile(msg)
			if rc != tc.wantRC || string(gotMsg) != tc.wantMsg {
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
