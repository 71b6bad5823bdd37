//go:build linux

package crash

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/lvm"
)

// lvmBench is one device's LVM view: an lvm.conf whose filter shows LVM this device's
// partitions only (LVM_SYSTEM_DIR), so that no other device, and no earlier device of the test
// with the same names, is scanned, and each command's writes come at the same place run after
// run; and the state dir of its passes (the record Prism writes before pvcreate).
type lvmBench struct {
	*bench
	dev      string
	conf     string // LVM_SYSTEM_DIR
	stateDir string
}

func (b *bench) lvm(dev string) *lvmBench {
	l := &lvmBench{bench: b, dev: dev, conf: filepath.Join(b.dir, "lvm-"+filepath.Base(dev)), stateDir: filepath.Join(b.dir, "state-"+filepath.Base(dev))}
	for _, d := range []string{l.conf, l.stateDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.t.Fatal(err)
		}
	}
	filter := fmt.Sprintf(`[ "a|^%sp[0-9]+$|", "r|.*|" ]`, dev)
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
	argv := []string{l.bin, "--mode", "Apply", "--inventory", invFile, "--plan", planFile, "--db-volumes", "--lvm-here", "--state-dir", l.stateDir}
	ctx, cancel := context.WithTimeout(l.ctx, quick)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LVM_SYSTEM_DIR="+l.conf, "LVM_SUPPRESS_FD_WARNINGS=1")
	if path != "" {
		cmd.Env = append(cmd.Env, "PATH="+path+":"+os.Getenv("PATH"))
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	_ = cmd.Run() // lvcreate fails on a kernel without device-mapper: compared, not required
	return strings.Contains(buf.String(), "killed by signal killed"), buf.String()
}

// state is what LVM reports of the device's partitions: each PV (partition, UUID, VG or
// [unknown]) and each VG (name, tags, PV and LV counts).
func (l *lvmBench) state() string {
	run := func(argv []string) []byte {
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
	pvs, err := lvm.ParsePVs(run(lvm.PVsArgv()))
	if err != nil {
		l.t.Fatal(err)
	}
	vgs, err := lvm.ParseVGs(run(lvm.VGsArgv()))
	if err != nil {
		l.t.Fatal(err)
	}
	var s []string
	for _, p := range pvs {
		vg := p.VGName
		if p.VGUnknown {
			vg = "[unknown]"
		}
		s = append(s, fmt.Sprintf("PV %s %s in %q", strings.TrimPrefix(p.Name, l.dev), p.UUID, vg))
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
