package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCommandLine: whatever the command line and $CASADM_EMULATOR_RELEASE, the emulator never
// panics, exits 0 or 1, prints what casadm prints for an unusable line (or runs the command),
// and leaves a state file it can read back.
func FuzzCommandLine(f *testing.F) {
	seed := &env{state: filepath.Join(f.TempDir(), "seed.json"), now: "1000"}
	for _, args := range [][]string{
		{"--emulator-add-device", "--device", cacheDev, "--size", "2147483648"},
		{"--emulator-add-device", "--device", qlc1, "--size", "8589934592"},
		{"-S", "-d", cacheDev, "-i", "1", "-c", "wb"},
		{"-A", "-i", "1", "-d", qlc1, "-j", "1"},
		{"--emulator-io", "--cache-id", "1", "--core-id", "1", "--io", "size=4096,dir=write", "--count", "3"},
	} {
		var b bytes.Buffer
		if rc := run(append([]string{"casadm"}, args...), strings.NewReader(""), &b, &b, seed.getenv); rc != 0 {
			f.Fatalf("%v: %s", args, b.String())
		}
	}
	state, err := os.ReadFile(seed.state)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"-P -i 1 -d -f usage,req -o csv", "-P -i 1 -j 1 -d 0", "-X -n seq-cutoff -i 1 -t 4096 -p never", "-G -n cleaning-alru -i 1",
		"-Q -c wt -i 1 -f yes", "-R -i 1 -j 1", "-T -i 1 -n", "-C -L -i 1", "-C -C -i 1 -f -", "-L", "-V", "-S -H", "-X -H",
		"-F -i 1 -j", "--remove-inactive -i 1 -j 1 -f", "--zero-metadata -d " + cacheDev, "-S -d " + cacheDev + " -l",
		"--emulator-fail-cache 1", "--emulator-reboot", "-P -i 1 -d 33", "-X -n prefetch -i 1 -p readahead,none",
	} {
		for _, rel := range []string{"", "v26.03.2"} {
			f.Add(s, "IO class id,IO class name,Eviction priority,Allocation\n1,metadata&done,,1\n", rel)
		}
	}
	f.Add("-L", "", "v26")
	f.Fuzz(func(t *testing.T, line, stdin, release string) {
		args := strings.Fields(line)
		for i, a := range args {
			// Stay off the host: no file but stdin, no huge IO.
			if (strings.HasPrefix(a, "/") && !strings.HasPrefix(a, "/dev/disk/by-id/")) || a == "--count" || a == "--stride" {
				t.Skip()
			}
			if (a == "-f" || a == "--file") && i+1 < len(args) && args[i+1] != "-" && args[0] == "-C" {
				t.Skip()
			}
		}
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(path, state, 0o644); err != nil {
			t.Fatal(err)
		}
		getenv := func(k string) string {
			switch k {
			case StateEnv:
				return path
			case NowEnv:
				return "1000"
			}
			return ""
		}
		withRelease := func(k string) string {
			if k == ReleaseEnv {
				return release
			}
			return getenv(k)
		}
		var out, errb bytes.Buffer
		rc := run(append([]string{"casadm"}, args...), strings.NewReader(stdin), &out, &errb, withRelease)
		if rc != 0 && rc != 1 {
			t.Fatalf("rc %d", rc)
		}
		var b bytes.Buffer
		if rc := run([]string{"casadm", "-L", "-o", "csv", "-b"}, strings.NewReader(""), &b, &b, getenv); rc != 0 {
			t.Fatalf("state unreadable after %q: %s", line, b.String())
		}
	})
}
