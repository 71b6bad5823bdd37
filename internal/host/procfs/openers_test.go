//go:build linux

package procfs

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// someBlockDevice is a block device node of this machine (any will do: its number is only
// compared), with its number; the test skips when /dev has none.
func someBlockDevice(t *testing.T) (string, uint64) {
	t.Helper()
	entries, _ := os.ReadDir("/sys/class/block")
	for _, e := range entries {
		path := filepath.Join("/dev", e.Name())
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK {
			return path, st.Rdev
		}
	}
	t.Skip("no block device node under /dev")
	return "", 0
}

// fixture builds a procfs-like tree: each fd entry is a symbolic link, which stat follows as
// it follows procfs's links to open files.
func fixture(t *testing.T, self string, procs map[string]map[string]string, comms map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, "self")); err != nil {
		t.Fatal(err)
	}
	for pid, fds := range procs {
		if err := os.MkdirAll(filepath.Join(dir, pid, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		for fd, target := range fds {
			if err := os.Symlink(target, filepath.Join(dir, pid, "fd", fd)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for pid, comm := range comms {
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pid, "comm"), []byte(comm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpenersFixture(t *testing.T) {
	dev, rdev := someBlockDevice(t)
	regular := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := fixture(t, "100", map[string]map[string]string{
		"100": {"5": dev},                                      // the caller itself: never counted
		"200": {"0": regular, "3": dev, "4": dev},              // twice: named once
		"300": {"1": regular, "2": "socket:[1234]"},            // nothing of interest
		"400": {"7": filepath.Join(t.TempDir(), "closed-now")}, // a descriptor closed during the scan
		"500": {"9": dev},                                      // its comm is gone: exited after its fds were read
		"900": {"3": dev},                                      // ignored by the caller
	}, map[string]string{"200": "fusefat", "300": "sshd"})
	if err := os.Mkdir(filepath.Join(dir, "600"), 0o755); err != nil { // exited: no fd directory
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sys"), 0o755); err != nil { // not a process
		t.Fatal(err)
	}
	got, err := Proc{Dir: dir, Ignore: []int{900}}.Openers(map[uint64]string{rdev: "loop3", rdev + 1: "loop3p1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Opener{{PID: 200, Comm: "fusefat", Device: "loop3"}, {PID: 500, Device: "loop3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if s := got[0].String(); s != "pid 200 (fusefat)" {
		t.Errorf("String() = %q", s)
	}
}

func TestOpenersFailures(t *testing.T) {
	dev, rdev := someBlockDevice(t)
	devs := map[uint64]string{rdev: "loop3"}
	for _, tc := range []struct {
		name, want string
		setup      func(t *testing.T, dir string)
	}{
		{"self is PID 1 (a pod's own PID namespace)", "PID 1", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "self"))
			if err := os.Symlink("1", filepath.Join(dir, "self")); err != nil {
				t.Fatal(err)
			}
		}},
		{"no self", "finding this process", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "self")) }},
		{"an fd directory that cannot be read", "what pid 700", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "700"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "700", "fd"), nil, 0o644); err != nil { // ENOTDIR
				t.Fatal(err)
			}
		}},
		{"a descriptor that cannot be followed", "pid 800 () has open as descriptor 8", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "800", "fd"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(dir, "800", "fd", "8"), filepath.Join(dir, "800", "fd", "8")); err != nil { // ELOOP
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixture(t, "100", map[string]map[string]string{"200": {"3": dev}}, map[string]string{"200": "sleep"})
			tc.setup(t, dir)
			got, err := Proc{Dir: dir}.Openers(devs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %+v, error %v; want an error saying %q", got, err, tc.want)
			}
		})
	}
}

// TestOpenersPermissionDenied: a descriptor directory the scan may not read fails it. Only
// without root, which reads any directory.
func TestOpenersPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode 000 directory; TestGone covers EACCES")
	}
	dev, rdev := someBlockDevice(t)
	dir := fixture(t, "100", map[string]map[string]string{"200": {"3": dev}}, nil)
	if err := os.Chmod(filepath.Join(dir, "200", "fd"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "200", "fd"), 0o755) })
	if got, err := (Proc{Dir: dir}).Openers(map[uint64]string{rdev: "loop3"}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("got %+v, error %v; want a permission error", got, err)
	}
}

func TestGone(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&fs.PathError{Op: "open", Path: "/proc/9/fd", Err: syscall.ENOENT}, true},
		{&fs.PathError{Op: "statx", Path: "/proc/9/fd/3", Err: syscall.ESRCH}, true},
		{&fs.PathError{Op: "open", Path: "/proc/9/fd", Err: syscall.EACCES}, false},
		{&fs.PathError{Op: "open", Path: "/proc/9/fd", Err: syscall.EPERM}, false},
		{&fs.PathError{Op: "statx", Path: "/proc/9/fd/3", Err: syscall.EIO}, false},
		{nil, false},
	} {
		if got := gone(tc.err); got != tc.want {
			t.Errorf("gone(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// TestOpenersRealProc: a child of this process with a block device open (as `exec 3<dev`
// would) is found in /proc, named by its comm; this process, which opened it too, is not.
func TestOpenersRealProc(t *testing.T) {
	dev, rdev := someBlockDevice(t)
	f, err := os.Open(dev)
	if err != nil {
		t.Skipf("cannot open %s: %v", dev, err)
	}
	defer f.Close()
	cmd := exec.Command("sleep", "60")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	want := Opener{PID: cmd.Process.Pid, Comm: "sleep", Device: "dev"}
	// The child's comm is "sleep" once it has exec'd.
	// The test's ancestors are not looked at: a sandbox's supervisor may hide its files from root.
	p, err := Proc{Dir: "/proc"}.IgnoringAncestors()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Ignore) == 0 || p.Ignore[0] != os.Getppid() {
		t.Fatalf("ancestors %v do not start with the parent %d", p.Ignore, os.Getppid())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := p.Openers(map[uint64]string{rdev: "dev"})
		if err != nil && time.Now().After(deadline) {
			t.Fatal(err)
		}
		if err != nil { // a process that hid its files while it started (a sandbox's spawner)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		var mine []Opener
		for _, o := range got {
			if o.PID == os.Getpid() {
				t.Fatalf("the scan counted its own process: %+v", got)
			}
			if o.PID == want.PID {
				mine = append(mine, o)
			}
		}
		if len(mine) == 1 && mine[0] == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %+v, want %+v among them", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSettledOpeners: a child that closes the device within the grace does not count; one
// that keeps it open does, once the grace is over.
func TestSettledOpeners(t *testing.T) {
	dev, rdev := someBlockDevice(t)
	p, err := Proc{Dir: "/proc"}.IgnoringAncestors()
	if err != nil {
		t.Fatal(err)
	}
	devs := map[uint64]string{rdev: "dev"}
	// hold starts a child with the device open; it is reaped as soon as it exits, so that
	// its /proc entry goes then.
	hold := func(seconds string) *exec.Cmd {
		f, err := os.Open(dev)
		if err != nil {
			t.Skipf("cannot open %s: %v", dev, err)
		}
		defer f.Close()
		cmd := exec.Command("sleep", seconds)
		cmd.ExtraFiles = []*os.File{f}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-done })
		return cmd
	}
	mine := func(got []Opener, pid int) bool {
		for _, o := range got {
			if o.PID == pid {
				return true
			}
		}
		return false
	}

	brief := hold("0.3")
	start := time.Now()
	got, err := p.SettledOpeners(t.Context(), devs, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if mine(got, brief.Process.Pid) || time.Since(start) > 4*time.Second {
		t.Errorf("a child that closed the device after 0.3 s: %+v after %v", got, time.Since(start))
	}

	stays := hold("600")
	start = time.Now()
	got, err = p.SettledOpeners(t.Context(), devs, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !mine(got, stays.Process.Pid) || time.Since(start) < 500*time.Millisecond {
		t.Errorf("a child that keeps the device open: %+v after %v, want it after the 500 ms grace", got, time.Since(start))
	}
}

// TestSettledOpenersRetriesAFailedLook: a process whose files cannot be read fails the scan
// only if it still cannot be read once the grace is over.
func TestSettledOpenersRetriesAFailedLook(t *testing.T) {
	dev, rdev := someBlockDevice(t)
	dir := fixture(t, "100", map[string]map[string]string{"200": {"3": dev}}, map[string]string{"200": "sleep"})
	hidden := filepath.Join(dir, "700")
	writeFile := func() {
		if err := os.MkdirAll(hidden, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(hidden, "fd"), nil, 0o644); err != nil { // ENOTDIR: cannot be read
			t.Fatal(err)
		}
	}
	writeFile()
	devs := map[uint64]string{rdev: "dev"}
	if _, err := (Proc{Dir: dir}).SettledOpeners(t.Context(), devs, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "pid 700") {
		t.Errorf("a process hidden for the whole grace: error %v, want one naming pid 700", err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		os.RemoveAll(hidden) // it exited
	}()
	got, err := Proc{Dir: dir}.SettledOpeners(t.Context(), devs, 3*time.Second)
	if err != nil || len(got) != 1 || got[0].PID != 200 {
		t.Errorf("a process hidden for 200 ms: %+v, %v; want pid 200 alone", got, err)
	}
}

func TestParentPID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  bool
	}{
		{"1234 (sleep) S 1200 1234 1200 0 -1 4194304", 1200, false},
		{"7 (a) b) (c) R 6 7 7", 6, false}, // a command name with spaces and parentheses
		{"1 (systemd) S 0 1 1 0", 0, false},
		{"1234 sleep S 1200", 0, true},
		{"1234 (sleep) S", 0, true},
		{"1234 (sleep) S x", 0, true},
		{"1234 (sleep) S -3", 0, true},
		{"", 0, true},
	} {
		got, err := ParentPID([]byte(tc.in))
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParentPID(%q) = %d, %v; want %d, error %t", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzParentPID(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 1200 1234 1200 0"))
	f.Add([]byte("7 (a) b) (c) R 6 7 7"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ppid, err := ParentPID(b)
		if err == nil && ppid < 0 {
			t.Errorf("ParentPID(%q) = %d", b, ppid)
		}
	})
}

func TestParseDev(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  bool
	}{
		{"7:3", unix.Mkdev(7, 3), false},
		{"259:1048575", unix.Mkdev(259, 1048575), false},
		{"0:45", unix.Mkdev(0, 45), false},
		{"7", 0, true},
		{"7:", 0, true},
		{":3", 0, true},
		{"-1:3", 0, true},
		{"7:3:1", 0, true},
		{"4294967296:0", 0, true},
		{" 7:3", 0, true},
	} {
		got, err := ParseDev(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseDev(%q) = %d, %v; want %d, error %t", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzParseDev(f *testing.F) {
	for _, s := range []string{"7:3", "259:0", "0:45", "x", ":", "1:2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDev(s)
		if err != nil {
			return
		}
		back := strconv.FormatUint(uint64(unix.Major(d)), 10) + ":" + strconv.FormatUint(uint64(unix.Minor(d)), 10)
		if again, err := ParseDev(back); err != nil || again != d {
			t.Errorf("ParseDev(%q) = %s, which parses back as %d, %v", s, back, again, err)
		}
	})
}

// BenchmarkOpeners scans this machine's /proc for a device no one has open: the cost of one
// observation's scan.
func BenchmarkOpeners(b *testing.B) {
	p, err := Proc{Dir: "/proc"}.IgnoringAncestors()
	if err != nil {
		b.Fatal(err)
	}
	failed := 0
	for b.Loop() {
		if _, err := p.Openers(map[uint64]string{unix.Mkdev(4095, 4095): "none"}); err != nil {
			failed++ // a process that hid its files while it started: the look still cost as much
		}
	}
	b.ReportMetric(float64(failed), "failed-looks")
}
