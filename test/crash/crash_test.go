//go:build linux

package crash

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/inventorydoc"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/internal/plan"
)

const (
	mib     = int64(1) << 20
	gib     = int64(1) << 30
	devSize = 5*gib + 2*mib // two 2 GiB slots and a 1 GiB cache, as test/foreign
	quick   = time.Minute
)

type bench struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	bin    string // prism-apply-plan
	stable string // the stable path every loop of the test plays
	// foreign is what the test puts where no planned partition and no GPT structure goes
	// (between the primary entries and the first partition, and before the backup entries):
	// no pass may change it.
	foreign map[int64][]byte
}

func setup(t *testing.T) *bench {
	if os.Geteuid() != 0 {
		t.Skipf("needs root for loop devices (euid %d)", os.Geteuid())
	}
	for _, tool := range []string{"strace", "losetup", "partx", "wipefs", "blkid", "sfdisk", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (hack/install-deps.sh test installs it): %v", tool, err)
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop driver: %v", err)
	}
	b := &bench{t: t, ctx: t.Context(), dir: t.TempDir(), foreign: map[int64][]byte{}}
	b.bin = filepath.Join(b.dir, "prism-apply-plan")
	build := exec.CommandContext(b.ctx, "go", "build", "-o", b.bin, "github.com/prism-storage/prism/test/guest/applyplan")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building prism-apply-plan: %v\n%s", err, out)
	}
	tag := make([]byte, 4)
	_, _ = rand.Read(tag)
	b.stable = fmt.Sprintf("/dev/disk/by-id/prism-crash-%x", tag)
	for _, off := range []int64{64 << 10, devSize - 512<<10} {
		data := make([]byte, 4096)
		_, _ = rand.Read(data)
		b.foreign[off] = data
	}
	return b
}

// device is a fresh loop device with the foreign bytes, and on it ext4 (data "ext4"), or
// random bytes no probe names where the table and the first partition go (data "random").
func (b *bench) device(data string) string {
	t := b.t
	file := filepath.Join(b.dir, fmt.Sprintf("dev-%d.img", time.Now().UnixNano()))
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(devSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dev := strings.TrimSpace(b.must("losetup", "--find", "--show", file))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), quick)
		defer cancel()
		_ = exec.CommandContext(ctx, "partx", "--delete", dev).Run()
		_ = exec.CommandContext(ctx, "losetup", "-d", dev).Run()
		os.Remove(file)
	})
	switch data {
	case "ext4":
		b.must("mkfs.ext4", "-q", "-F", dev)
	case "random":
		for _, off := range []int64{0, mib} {
			junk := make([]byte, 16<<10)
			_, _ = rand.Read(junk)
			b.put(dev, off, junk)
		}
	}
	for off, data := range b.foreign {
		b.put(dev, off, data)
	}
	return dev
}

func (b *bench) put(dev string, off int64, data []byte) {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		b.t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.t.Fatal(err)
	}
}

// inputs writes the inventory document of dev (as the agent's inventory sees it, under the
// test's stable path) and the plan for it, with a write-through cache.
func (b *bench) inputs(dev string, grant bool) (invFile, planFile string) {
	return b.inputsWith(dev, grant, prismv1.CacheWriteThrough)
}

// inputsWith is inputs with the cache mode cache (CacheNone: DB slots only, which the volume
// phase makes LVM volumes on).
func (b *bench) inputsWith(dev string, grant bool, cache prismv1.CacheMode) (invFile, planFile string) {
	t := b.t
	rep, err := inventory.Take(b.ctx, inventory.Options{Host: sysfs.Host{Root: "/"}, IncludeLoop: true})
	if err != nil {
		t.Fatal(err)
	}
	var d *prismv1.Device
	for i := range rep.Devices {
		if rep.Devices[i].Path == dev {
			d = &rep.Devices[i]
		}
	}
	if d == nil {
		t.Fatalf("%s is not in the inventory", dev)
	}
	d.StablePath = b.stable
	sel := prismv1.NodeSelection{Node: "crash", Fast: []prismv1.SelectedDevice{{Name: d.Name, StablePath: b.stable, SizeBytes: devSize}}}
	devs := []prismv1.Device{{Name: d.Name, StablePath: b.stable, SizeBytes: devSize}}
	for i := range 2 {
		p := fmt.Sprintf("/dev/disk/by-id/prism-crash-qlc-%d", i)
		sel.Capacity = append(sel.Capacity, prismv1.SelectedDevice{Name: fmt.Sprintf("qlc%d", i), StablePath: p, SizeBytes: 100 * gib})
		devs = append(devs, prismv1.Device{Name: fmt.Sprintf("qlc%d", i), StablePath: p, SizeBytes: 100 * gib})
	}
	spec := &prismv1.HybridStoragePolicySpec{Mode: prismv1.ModeApply,
		DB: prismv1.DBSizing{Size: resource.NewQuantity(2*gib, resource.BinarySI)}, Cache: prismv1.CacheSpec{Mode: cache}}
	if grant {
		spec.AllowWipe = []prismv1.WipeGrant{{Node: "crash", Path: b.stable}}
	}
	l := plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	if len(l.Problems) > 0 || len(l.Plan.FastDevices) != 1 {
		t.Fatalf("planner: %v %+v", l.Problems, l.Plan)
	}
	invFile, planFile = filepath.Join(b.dir, "inventory.json"), filepath.Join(b.dir, "plan.json")
	write := func(path string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(invFile, inventorydoc.Document{APIVersion: "prism.storage.io/v1alpha1", Kind: "Inventory", Node: "crash", HostRoot: "/", Devices: []prismv1.Device{*d}})
	write(planFile, plan.ClusterPlan{Nodes: []plan.NodeResult{{Node: "crash", Plan: &l.Plan}}})
	return invFile, planFile
}

// apply runs prism-apply-plan in Apply mode, under strace killing it at write k when k > 0.
// killed reports whether a process of the run died of SIGKILL (the partitioner itself, or a
// tool it ran, which the partitioner then reports as failed).
func (b *bench) apply(dev, invFile, planFile string, k int) (ok, killed bool, out string) {
	argv := []string{b.bin, "--mode", "Apply", "--inventory", invFile, "--plan", planFile}
	if k > 0 {
		// -P: only the calls on the device count. strace counts each thread's calls apart;
		// the partitioner makes all its writes of a pass from one thread, and wipefs has one.
		argv = append([]string{"strace", "-f", "-qq", "-o", "/dev/null", "-P", dev, "-e", "trace=write,pwrite64,pwritev,pwritev2",
			"-e", fmt.Sprintf("inject=write,pwrite64,pwritev,pwritev2:signal=KILL:when=%d", k)}, argv...)
	}
	ctx, cancel := context.WithTimeout(b.ctx, quick)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			killed = true
		}
	}
	// A tool killed under the partitioner shows in its report as a failed step.
	killed = killed || strings.Contains(buf.String(), "was killed by signal killed")
	return err == nil, killed, buf.String()
}

// state is the device's GPT area and the foreign bytes.
func (b *bench) state(dev string) (gptArea []byte, foreignIntact bool) {
	f, err := os.Open(dev)
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	head, tail := make([]byte, 34*512), make([]byte, 33*512)
	if _, err := f.ReadAt(head, 0); err != nil {
		b.t.Fatal(err)
	}
	if _, err := f.ReadAt(tail, devSize-int64(len(tail))); err != nil {
		b.t.Fatal(err)
	}
	foreignIntact = true
	for off, want := range b.foreign {
		got := make([]byte, len(want))
		if _, err := f.ReadAt(got, off); err != nil {
			b.t.Fatal(err)
		}
		foreignIntact = foreignIntact && bytes.Equal(got, want)
	}
	return append(head, tail...), foreignIntact
}

func (b *bench) must(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(b.ctx, quick)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		b.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// TestKillAtEveryWrite: an empty device (Prism writes its table), and devices in the
// policy's allowWipe holding ext4 (wipefs wipes it, then Prism zeroes and writes) or bytes no
// probe names (Prism zeroes and writes): for every k, the pass
// killed at the k-th write is followed by one that ends in exactly the table an uninterrupted
// pass writes, and the bytes outside the table and the partitions never change.
func TestKillAtEveryWrite(t *testing.T) {
	b := setup(t)
	for _, tc := range []struct {
		name  string
		data  string
		grant bool
	}{
		{"empty device", "", false},
		// wipefs's writes come first: its k-th write is killed for every k it has, and the
		// partitioner's from k past that.
		{"granted device with ext4", "ext4", true},
		// No signature, so no wipefs: every write of the partitioner's (zeroing, then the
		// table) is killed in turn.
		{"granted device with random bytes", "random", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b.t = t
			ref := b.device(tc.data)
			inv, pl := b.inputs(ref, tc.grant)
			if ok, _, out := b.apply(ref, inv, pl, 0); !ok {
				t.Fatalf("uninterrupted pass failed:\n%s", out)
			}
			want, intact := b.state(ref)
			if !intact {
				t.Fatal("an uninterrupted pass changed the foreign bytes")
			}
			kills := 0
			for k := 1; ; k++ {
				if k > 200 {
					t.Fatal("no run finished within 200 writes")
				}
				dev := b.device(tc.data)
				inv, pl := b.inputs(dev, tc.grant)
				ok, killed, out := b.apply(dev, inv, pl, k)
				if ok && !killed {
					t.Logf("%d kills, at writes 1 to %d; write %d is past the last", kills, k-1, k)
					break
				}
				if !killed {
					t.Fatalf("k=%d: the pass failed without being killed:\n%s", k, out)
				}
				kills++
				if ok, _, out := b.apply(dev, inv, pl, 0); !ok {
					t.Fatalf("k=%d: the pass after the kill failed:\n%s", k, out)
				}
				got, intact := b.state(dev)
				if !bytes.Equal(got, want) {
					t.Fatalf("k=%d: the GPT area differs from the uninterrupted pass's", k)
				}
				if !intact {
					t.Fatalf("k=%d: bytes outside the table and the partitions changed", k)
				}
				// The kernel's view and an independent reader agree with the table.
				if sf := b.must("sfdisk", "--json", dev); strings.Count(sf, `"node"`) != 3 {
					t.Fatalf("k=%d: sfdisk reads:\n%s", k, sf)
				}
				for n := 1; n <= 3; n++ {
					if _, err := os.Stat(fmt.Sprintf("/sys/class/block/%s/%sp%d", filepath.Base(dev), filepath.Base(dev), n)); err != nil {
						t.Fatalf("k=%d: the kernel lacks partition %d: %v", k, n, err)
					}
				}
			}
			if kills < 5 {
				t.Fatalf("only %d kills: the harness did not reach the table's five writes", kills)
			}
		})
	}
}
