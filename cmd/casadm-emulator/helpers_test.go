package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// env is one emulated host: a state file in a temporary directory.
type env struct {
	t     *testing.T
	state string
	now   string
	// release is $CASADM_EMULATOR_RELEASE ("": master's formats).
	release string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{t: t, state: filepath.Join(t.TempDir(), "state.json"), now: "1000"}
}

func (e *env) getenv(k string) string {
	switch k {
	case StateEnv:
		return e.state
	case NowEnv:
		return e.now
	case ReleaseEnv:
		return e.release
	}
	return ""
}

// run runs casadm with args and returns stdout, stderr and the exit code.
func (e *env) run(args ...string) (string, string, int) {
	return e.runStdin("", args...)
}

func (e *env) runStdin(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	rc := run(append([]string{"casadm"}, args...), strings.NewReader(stdin), &out, &errb, e.getenv)
	return out.String(), errb.String(), rc
}

// combined runs a command with stdout and stderr into one stream, as a terminal or
// `2>&1` shows them.
func (e *env) combined(args ...string) (string, int) {
	var b syncBuffer
	rc := run(append([]string{"casadm"}, args...), strings.NewReader(""), &b, &b, e.getenv)
	return b.String(), rc
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { return s.b.String() }

// must runs a command that has to succeed and returns its stdout.
func (e *env) must(args ...string) string {
	e.t.Helper()
	out, errs, rc := e.run(args...)
	if rc != 0 {
		e.t.Fatalf("casadm %s: rc %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), rc, out, errs)
	}
	return out
}

// fail runs a command that has to fail and returns its combined output.
func (e *env) fail(args ...string) string {
	e.t.Helper()
	out, rc := e.combined(args...)
	if rc == 0 {
		e.t.Fatalf("casadm %s succeeded: %s", strings.Join(args, " "), out)
	}
	return out
}

func (e *env) snapshot() *State {
	e.t.Helper()
	b, err := os.ReadFile(e.state)
	if err != nil {
		e.t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		e.t.Fatal(err)
	}
	return &st
}

func (e *env) writeState(st *State) {
	e.t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(e.state, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

const (
	cacheDev = "/dev/disk/by-id/nvme-OPTANE_SSDPE21K375GA_PHKE0001-part3"
	qlc1     = "/dev/disk/by-id/wwn-0x5000000000000001"
	qlc2     = "/dev/disk/by-id/wwn-0x5000000000000002"
)

// setup registers a cache partition and two QLC devices and starts cache 1 in mode with
// both as cores.
func (e *env) setup(mode string, size int64) {
	e.t.Helper()
	e.must("--emulator-add-device", "--device", cacheDev, "--size", strconv.FormatInt(size, 10), "--kernel-name", "/dev/nvme0n1p3")
	e.must("--emulator-add-device", "--device", qlc1, "--size", strconv.FormatInt(8<<30, 10))
	e.must("--emulator-add-device", "--device", qlc2, "--size", strconv.FormatInt(8<<30, 10))
	e.must("-S", "-d", cacheDev, "-i", "1", "-c", mode, "-x", "4")
	e.must("-A", "-i", "1", "-d", qlc1, "-j", "1")
	e.must("-A", "-i", "1", "-d", qlc2, "-j", "2")
}

// transcript is one reference output file: the command, stdout, rc and stderr.
type transcript struct {
	args           []string
	stdout, stderr string
	rc             int
}

func readTranscript(t *testing.T, name string) transcript {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	var tr transcript
	tr.args = strings.Fields(strings.TrimPrefix(lines[0], "$ casadm"))
	i := 1
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "[rc="); i++ {
		tr.stdout += lines[i] + "\n"
	}
	if i == len(lines) {
		t.Fatalf("%s: no [rc=] line", name)
	}
	tr.rc, err = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(lines[i], "[rc="), "]"))
	if err != nil {
		t.Fatal(err)
	}
	if i+1 < len(lines) && lines[i+1] == "[stderr]" {
		tr.stderr = strings.Join(lines[i+2:], "\n") + "\n"
	}
	return tr
}

// sections splits a "=== casadm ..." results file into command → output.
func sections(t *testing.T, name, marker string) []struct {
	args []string
	text string
	rc   int
} {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []struct {
		args []string
		text string
		rc   int
	}
	for _, block := range strings.Split(string(raw), marker)[1:] {
		lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
		var body []string
		rc := -1
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "[rc=") {
				rc, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(l, "[rc="), "]"))
				break
			}
			body = append(body, l)
		}
		text := ""
		if len(body) > 0 {
			text = strings.Join(body, "\n") + "\n"
		}
		out = append(out, struct {
			args []string
			text string
			rc   int
		}{strings.Fields(lines[0]), text, rc})
	}
	return out
}
