//go:build linux

package ceph

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// Per-command time limits.
const (
	quick   = 30 * time.Second
	aptTime = 8 * time.Minute
	slow    = 3 * time.Minute
)

// env is one run of the test: its context (which ends before the test's deadline, so the
// cleanups always get to run), its directory and everything it started.
type env struct {
	t   *testing.T
	ctx context.Context
	dir string
}

// run executes argv through the agent's executor (hostexec: argv slice, LC_ALL=C, timeout).
func (e *env) run(timeout time.Duration, argv ...string) (string, error) {
	out, err := hostexec.Local{Timeout: timeout}.Run(e.ctx, argv, nil)
	return string(out), err
}

// must runs argv and fails the test when it fails.
func (e *env) must(timeout time.Duration, argv ...string) string {
	e.t.Helper()
	start := time.Now()
	out, err := e.run(timeout, argv...)
	if err != nil {
		e.t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	if d := time.Since(start); d > 5*time.Second {
		e.t.Logf("%s (%.1f s)", strings.Join(argv, " "), d.Seconds())
	}
	return out
}

// requiredTools are the binaries the test runs, and the Debian package of each.
var requiredTools = map[string]string{
	"ceph-mon":            "ceph-mon",
	"ceph-mgr":            "ceph-mgr",
	"ceph-osd":            "ceph-osd",
	"ceph-volume":         "ceph-osd", // Debian 12 has no ceph-volume package; ceph-osd ships it
	"ceph-bluestore-tool": "ceph-osd",
	"ceph":                "ceph-common",
	"ceph-authtool":       "ceph-common",
	"monmaptool":          "ceph-common",
	"rados":               "ceph-common",
	"rbd":                 "ceph-common",
	"sgdisk":              "gdisk",
	"sfdisk":              "fdisk",
	"partx":               "util-linux",
	"udevadm":             "udev",
	"losetup":             "mount",
	"blockdev":            "util-linux",
	"lsblk":               "util-linux",
}

// ensurePackages installs Debian's Ceph packages with apt-get unless every tool is there.
// Installing them only adds files: Debian's maintainer scripts start nothing without systemd,
// and the test never uses /etc/ceph or /var/lib/ceph (see nsHelperArg).
func (e *env) ensurePackages() {
	t := e.t
	var missing []string
	for tool := range requiredTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Fatalf("missing %v and no apt-get to install them (this test expects Debian 12)", missing)
	}
	pkgs := []string{"ceph-mon", "ceph-mgr", "ceph-osd", "ceph-common", "gdisk", "fdisk", "udev", "util-linux", "mount"}
	// A distribution that packages ceph-volume separately gets it; Debian 12 does not.
	if _, err := e.run(quick, "apt-cache", "show", "ceph-volume"); err == nil {
		pkgs = append(pkgs, "ceph-volume")
	}
	t.Logf("installing %v (missing: %v)", pkgs, missing)
	t.Setenv("DEBIAN_FRONTEND", "noninteractive")
	install := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, pkgs...)
	if out, err := e.run(aptTime, install...); err != nil {
		t.Logf("apt-get install failed (%v), running apt-get update first:\n%s", err, tail(out, 20))
		e.must(aptTime, "apt-get", "update")
		e.must(aptTime, install...)
	}
	for tool, pkg := range requiredTools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s still missing after installing %s", tool, pkg)
		}
	}
}

// loopDev is one attached loop device.
type loopDev struct {
	role string // "fast", "qlc0", ...
	file string
	dev  string // /dev/loopN
	name string // loopN
	// stablePath is the fake /dev/disk/by-id name the plan uses for it (no udev here).
	stablePath string
	// owner of the device node before ceph-volume chowned it to ceph:ceph.
	uid, gid int
	size     int64
}

// attachLoop creates a sparse backing file and attaches it, with a partition scan for the
// fast device. Its cleanup detaches the loop and restores the node's owner.
func (e *env) attachLoop(role string, size int64, partscan bool) *loopDev {
	t := e.t
	l := &loopDev{role: role, file: filepath.Join(e.dir, role+".img"), size: size}
	f, err := os.Create(l.file)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	argv := []string{"losetup", "--find", "--show"}
	if partscan {
		argv = append(argv, "--partscan")
	}
	l.dev = strings.TrimSpace(e.must(quick, append(argv, l.file)...))
	l.name = filepath.Base(l.dev)
	var st syscall.Stat_t
	if err := syscall.Stat(l.dev, &st); err == nil {
		l.uid, l.gid = int(st.Uid), int(st.Gid)
	}
	t.Cleanup(func() {
		// Partition nodes disappear with the loop; the whole-device node stays in devtmpfs.
		_ = os.Chown(l.dev, l.uid, l.gid)
		ctx, cancel := context.WithTimeout(context.Background(), quick)
		defer cancel()
		if _, err := (hostexec.Local{}).Run(ctx, []string{"losetup", "--detach", l.dev}, nil); err != nil {
			t.Errorf("cleanup: detaching %s: %v", l.dev, err)
		}
	})
	// Loops come up rotational: BlueStore would pick its HDD settings (and Ceph's device
	// class "hdd"). A real Optane or QLC drive is not rotational.
	if err := os.WriteFile(sysBlock(l.name, "queue/rotational"), []byte("0"), 0); err != nil {
		t.Fatalf("%s: clearing queue/rotational: %v", l.name, err)
	}
	if got := strings.TrimSpace(readFile(t, sysBlock(l.name, "queue/rotational"))); got != "0" {
		t.Fatalf("%s: queue/rotational is %s after writing 0", l.name, got)
	}
	return l
}

func sysBlock(name, attr string) string { return filepath.Join("/sys/block", name, attr) }

// partitionDev is the kernel's node for partition number of a loop device.
func (l *loopDev) partitionDev(number int32) string { return fmt.Sprintf("%sp%d", l.dev, number) }

// sectorsWritten is field 7 of /sys/block/<dev>/stat: 512-byte sectors written, whatever the
// logical block size (Documentation/block/stat.rst).
func sectorsWritten(t *testing.T, statPath string) int64 {
	t.Helper()
	fields := strings.Fields(readFile(t, statPath))
	if len(fields) < 7 {
		t.Fatalf("%s: %d fields", statPath, len(fields))
	}
	n, err := strconv.ParseInt(fields[6], 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", statPath, err)
	}
	return n
}

func (l *loopDev) bytesWritten(t *testing.T) int64 {
	return sectorsWritten(t, sysBlock(l.name, "stat")) * 512
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitFor polls cond until it holds or timeout passes.
func (e *env) waitFor(timeout time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) || e.ctx.Err() != nil {
			e.t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, last)
		}
		time.Sleep(time.Second)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// daemon is a Ceph daemon the test started in the foreground (-f) as a child process.
type daemon struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// stopped is set once stop ran.
	stopped bool
}

// startDaemon starts argv in the background, its output in <dir>/log/<name>.out; the
// cleanup stops it by pid (SIGTERM, then SIGKILL after 20 s).
func (e *env) startDaemon(name string, argv ...string) *daemon {
	return e.startDaemonEnv(name, nil, argv...)
}

// startDaemonEnv is startDaemon with extra environment variables (NAME=value).
func (e *env) startDaemonEnv(name string, env []string, argv ...string) *daemon {
	t := e.t
	out, err := os.Create(filepath.Join(e.dir, "log", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{name: name, cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	d.cmd.Stdout, d.cmd.Stderr = out, out
	d.cmd.Env = append(append(os.Environ(), "LC_ALL=C"), env...)
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Logf("started %s, pid %d: %s", name, d.cmd.Process.Pid, strings.Join(argv, " "))
	go func() {
		d.err = d.cmd.Wait()
		out.Close()
		close(d.done)
	}()
	t.Cleanup(func() { d.stop(t) })
	return d
}

func (d *daemon) running() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

func (d *daemon) stop(t *testing.T) {
	if d.stopped {
		return
	}
	d.stopped = true
	if !d.running() {
		t.Logf("%s (pid %d) had already exited: %v", d.name, d.cmd.Process.Pid, d.err)
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return
	case <-time.After(20 * time.Second):
	}
	t.Logf("%s (pid %d) ignored SIGTERM for 20 s; killing it", d.name, d.cmd.Process.Pid)
	_ = d.cmd.Process.Kill()
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		t.Errorf("cleanup: %s (pid %d) does not die", d.name, d.cmd.Process.Pid)
	}
}
