//go:build linux

package crash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/lvm"
)

// lvmBench is one device's LVM view: an lvm.conf whose filter shows LVM this device's
// partitions and the devices a test names only (LVM_SYSTEM_DIR), so that no other device, and no earlier device of the test
// with the same names, is scanned, and each command's writes come at the same place run after
// run; and the state dir of its passes (the record Prism writes before pvcreate).
type lvmBench struct {
	*bench
	dev      string
	conf     string // LVM_SYSTEM_DIR
	stateDir string
}

func (b *bench) lvm(dev string, others ...string) *lvmBench {
	l := &lvmBench{bench: b, dev: dev, conf: filepath.Join(b.dir, "lvm-"+filepath.Base(dev)), stateDir: filepath.Join(b.dir, "state-"+filepath.Base(dev))}
	for _, d := range []string{l.conf, l.stateDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.t.Fatal(err)
		}
	}
	accept := []string{fmt.Sprintf(`"a|^%sp[0-9]+$|"`, dev)}
	for _, o := range others {
		accept = append(accept, fmt.Sprintf(`"a|^%s$|"`, o))
	}
	filter := fmt.Sprintf(`[ %s, "r|.*|" ]`, strings.Join(accept, ", "))
	conf := fmt.Sprintf("devices {\n\tfilter = %s\n\tglobal_filter = %s\n\thints = \"none\"\n}\n", filter, filter)
	if err := os.WriteFile(filepath.Join(l.conf, "lvm.conf"), []byte(conf), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return l
}

// wrap puts a command of LVM's on PATH that runs the real one under strace: tracing its
// io_submit calls into log.<pid>, one file a run (kill 0), or killing every run on entry to its
// kill-th io_submit (LVM writes and reads a device with io_submit). It returns the PATH
// directory.
func (l *lvmBench) wrap(cmd string, kill int, log string) string {
	real, err := exec.LookPath(cmd)
	if err != nil {
		l.t.Fatal(err)
	}
	dir := filepath.Join(l.dir, fmt.Sprintf("bin-%s-%d-%d", filepath.Base(l.dev), kill, len(log)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		l.t.Fatal(err)
	}
	inject := "-o " + log + ".$$"
	if kill > 0 {
		inject = fmt.Sprintf("-o /dev/null -e inject=io_submit:signal=KILL:when=%d", kill)
	}
	script := fmt.Sprintf("#!/bin/sh\nexec strace -qq %s -e trace=io_submit %s \"$@\"\n", inject, real)
	if err := os.WriteFile(filepath.Join(dir, cmd), []byte(script), 0o755); err != nil {
		l.t.Fatal(err)
	}
	return dir
}

// pass runs prism-apply-plan's volume phase (--db-volumes) with LVM's commands found first in
// path ("" for none), run in the test's own namespaces (--lvm-here: the test runs as root on the
// host, and a sandbox may refuse nsenter into PID 1's IPC namespace). killed reports whether an LVM command of the pass died of SIGKILL.
func (l *lvmBench) pass(invFile, planFile, path string) (killed bool, out string) {
	return l.passKilled(invFile, planFile, path, false)
}

// passKilled is pass, with killAtOwnWrite killing prism-apply-plan on entry to its first write
// to a partition of the device (Prism's own write: a torn head zeroed).
func (l *lvmBench) passKilled(invFile, planFile, path string, killAtOwnWrite bool) (killed bool, out string) {
	argv := []string{l.bin, "--mode", "Apply", "--inventory", invFile, "--plan", planFile, "--db-volumes", "--lvm-here", "--state-dir", l.stateDir}
	if killAtOwnWrite {
		argv = append([]string{"strace", "-f", "-qq", "-o", "/dev/null", "-P", l.dev + "p1", "-P", l.dev + "p2", "-e", "trace=write,pwrite64,pwritev,pwritev2",
			"-e", "inject=write,pwrite64,pwritev,pwritev2:signal=KILL:when=1"}, argv...)
	}
	ctx, cancel := context.WithTimeout(l.ctx, quick)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LVM_SYSTEM_DIR="+l.conf, "LVM_SUPPRESS_FD_WARNINGS=1")
	if path != "" {
		cmd.Env = append(cmd.Env, "PATH="+path+":"+os.Getenv("PATH"))
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run() // lvcreate fails on a kernel without device-mapper: compared, not required
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			killed = true
		}
	}
	return killed || strings.Contains(buf.String(), "killed by signal killed"), buf.String()
}

// run runs an LVM command in the device's view (its lvm.conf, its backup directory).
func (l *lvmBench) run(argv ...string) []byte {
	ctx, cancel := context.WithTimeout(l.ctx, quick)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LVM_SYSTEM_DIR="+l.conf, "LVM_SUPPRESS_FD_WARNINGS=1")
	out, err := cmd.Output()
	if err != nil {
		l.t.Fatalf("%q: %v", argv, err)
	}
	return out
}

// state is what LVM reports of the device's partitions: each PV (partition, UUID, VG or
// [unknown]) and each VG (name, tags, PV and LV counts).
func (l *lvmBench) state() string {
	pvs, err := lvm.ParsePVs(l.run(lvm.PVsArgv()...))
	if err != nil {
		l.t.Fatal(err)
	}
	vgs, err := lvm.ParseVGs(l.run(lvm.VGsArgv()...))
	if err != nil {
		l.t.Fatal(err)
	}
	var s []string
	for _, p := range pvs {
		vg := p.VGName
		if p.VGUnknown {
			vg = "[unknown]"
		}
		name := p.Name
		if strings.HasPrefix(name, l.dev+"p") {
			name = strings.TrimPrefix(name, l.dev)
		}
		s = append(s, fmt.Sprintf("PV %s %s in %q", name, p.UUID, vg))
	}
	for _, v := range vgs {
		s = append(s, fmt.Sprintf("VG %s tags %v, %d PV, %d LV", v.Name, v.Tags, v.PVCount, v.LVCount))
	}
	slices.Sort(s)
	return strings.Join(s, "\n")
}

// writes lists, from the io_submit traces of every run, which calls wrote (1-based, as
// strace's when= counts), in any run.
func writes(t *testing.T, log string) []int {
	files, _ := filepath.Glob(log + ".*")
	if len(files) == 0 {
		t.Fatalf("no trace %s.*", log)
	}
	var out []int
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "io_submit(") {
				continue
			}
			n++
			if strings.Contains(line, "IOCB_CMD_PWRITE") && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestLVMKillAtEveryWrite (issue 29): the volume phase's pvcreate and vgcreate killed on entry
// to each of their writes, in turn, on a device Prism partitioned; the next pass ends in the
// PVs and VGs an uninterrupted pass makes (Prism's UUIDs, names, tags), with no --force and no
// foreign byte changed. Before Prism recognised its own torn LVM, the pvcreate killed before
// its label left a slot refused as not proven empty, and the vgcreate killed after it marked
// the label used left a PV in the VG [unknown] whose report failed the whole node. This host's
// kernel has no device-mapper, so lvcreate fails in every pass alike (test/guest kills it).
func TestLVMKillAtEveryWrite(t *testing.T) {
	b := setup(t)
	for _, tool := range []string{"pvcreate", "vgcreate", "pvs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	partitioned := func() (*lvmBench, string, string) {
		dev := b.device("")
		inv, pl := b.inputsWith(dev, false, prismv1.CacheNone)
		if ok, _, out := b.apply(dev, inv, pl, 0); !ok {
			t.Fatalf("partitioning failed:\n%s", out)
		}
		return b.lvm(dev), inv, pl
	}

	ref, inv, pl := partitioned()
	logs := map[string]string{"pvcreate": filepath.Join(b.dir, "pvcreate.trace"), "vgcreate": filepath.Join(b.dir, "vgcreate.trace")}
	ref.wrap("pvcreate", 0, logs["pvcreate"])
	path := ref.wrap("vgcreate", 0, logs["vgcreate"])
	killed, out := ref.pass(inv, pl, path)
	if killed {
		t.Fatalf("the traced pass was killed:\n%s", out)
	}
	want := ref.state()
	if !strings.Contains(want, "VG prism-db-") || strings.Contains(want, "[unknown]") {
		t.Fatalf("an uninterrupted pass made:\n%s\npass output:\n%s", want, out)
	}
	t.Logf("an uninterrupted pass makes:\n%s", want)

	// The states the kills must reach: a slot with LVM's bytes and no PV (pvcreate killed
	// before its label), and a PV in the VG [unknown] (vgcreate killed after the label).
	bytesNoPV, unknown := 0, 0
	defer func() {
		if !t.Failed() && (bytesNoPV == 0 || unknown == 0) {
			t.Errorf("%d kills left LVM's bytes without a PV and %d a PV in the VG [unknown]; want both", bytesNoPV, unknown)
		}
	}()
	for _, cmd := range []string{"pvcreate", "vgcreate"} {
		// Every run of cmd in a pass (one a slot) is killed at the same io_submit.
		ws := writes(t, logs[cmd])
		if len(ws) < 4 {
			t.Fatalf("%s wrote %d times in the trace, want at least 4 (%s)", cmd, len(ws), logs[cmd])
		}
		for _, w := range ws {
			t.Run(fmt.Sprintf("%s killed at io_submit %d", cmd, w), func(t *testing.T) {
				b.t = t
				l, inv, pl := partitioned()
				if killed, out := l.pass(inv, pl, l.wrap(cmd, w, "")); !killed {
					t.Fatalf("%s was not killed at io_submit %d:\n%s", cmd, w, out)
				}
				torn := l.state()
				if !strings.Contains(torn, "PV p1") && slices.ContainsFunc(b.head(l.dev+"p1"), func(c byte) bool { return c != 0 }) {
					bytesNoPV++
				}
				if strings.Contains(torn, "[unknown]") {
					unknown++
					// Prism zeroes the torn heads: killed before its write, the next pass resumes.
					if killed, out := l.passKilled(inv, pl, "", true); !killed {
						t.Fatalf("the pass was not killed at Prism's own write:\n%s", out)
					}
					if got := l.state(); got != torn {
						t.Fatalf("killed before its write, the pass changed LVM's view from\n%s\nto\n%s", torn, got)
					}
				}
				if _, out := l.pass(inv, pl, ""); l.state() != want {
					t.Fatalf("after the kill LVM read:\n%s\nthe next pass left:\n%s\nwant:\n%s\npass output:\n%s", torn, l.state(), want, out)
				}
				if _, intact := b.state(l.dev); !intact {
					t.Fatal("bytes outside the table and the partitions changed")
				}
			})
		}
	}
}

// loop is a loop device of size bytes over a file of the test's, detached at its end
// unless detach says it is gone already.
func (b *bench) loop(size int64) (dev string, detach func()) {
	file := filepath.Join(b.dir, fmt.Sprintf("loop-%d.img", time.Now().UnixNano()))
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		b.t.Fatal(err)
	}
	if err := os.Truncate(file, size); err != nil {
		b.t.Fatal(err)
	}
	dev = strings.TrimSpace(b.must("losetup", "--find", "--show", file))
	gone := false
	detach = func() {
		if !gone {
			gone = true
			_ = exec.Command("losetup", "-d", dev).Run()
		}
	}
	b.t.Cleanup(detach)
	return dev, detach
}

// TestLVMForeignPVOfAnUnknownVG (issue 29): a foreign PV without metadata of its own, whose
// VG's only metadata disk is gone, reads "[unknown]" in LVM's report. The volume phase on
// another device still makes its slots' PVs and VGs, and the foreign PV is left as it was.
// Before lvm.ParsePVs read "[unknown]", every slot of the node failed with "pvs report:
// pv[0].vg_name "[unknown]" and vg_uuid "": one is empty, the other not".
func TestLVMForeignPVOfAnUnknownVG(t *testing.T) {
	b := setup(t)
	for _, tool := range []string{"pvcreate", "vgcreate", "pvs", "pvremove"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	foreign, _ := b.loop(64 << 20)
	meta, detachMeta := b.loop(64 << 20)
	dev := b.device("")
	l := b.lvm(dev, foreign, meta)
	l.run("pvcreate", "--metadatacopies", "0", foreign)
	l.run("pvcreate", meta)
	l.run("vgcreate", "crash-foreign", meta, foreign)
	detachMeta()
	t.Cleanup(func() { _ = exec.Command("pvremove", "-ff", "-y", "--devices", foreign, foreign).Run() })
	before := b.head(foreign)

	inv, pl := b.inputsWith(dev, false, prismv1.CacheNone)
	if ok, _, out := b.apply(dev, inv, pl, 0); !ok {
		t.Fatalf("partitioning failed:\n%s", out)
	}
	if got := l.state(); !strings.Contains(got, `PV `+foreign+` `) || !strings.Contains(got, `"[unknown]"`) {
		t.Fatalf("LVM does not read the foreign PV in the VG [unknown]:\n%s", got)
	}
	_, out := l.pass(inv, pl, "")
	got := l.state()
	for _, slot := range []string{"p1", "p2"} {
		if !regexp.MustCompile(`PV ` + slot + ` \S+ in "prism-db-[0-9a-f]+-0[01]"`).MatchString(got) {
			t.Errorf("slot partition %s has no PV in Prism's VG:\n%s\npass output:\n%s", slot, got, out)
		}
	}
	if strings.Count(got, "VG prism-db-") != 2 {
		t.Errorf("want Prism's two VGs:\n%s", got)
	}
	if !bytes.Equal(b.head(foreign), before) {
		t.Error("the foreign PV's first MiB changed")
	}
}

// head is the device's first MiB.
func (b *bench) head(dev string) []byte {
	f, err := os.Open(dev)
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	if _, err := f.ReadAt(buf, 0); err != nil {
		b.t.Fatal(err)
	}
	return buf
}
