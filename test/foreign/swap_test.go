package foreign

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/provision"
	"github.com/prism-storage/prism/test/support/loopdevs"
)

// swapper runs the real host executor and, once, at the first command named at (after it
// ran, or with before just before it runs) calls swap: the device behind a kernel name changes
// between the agent's look and its command, as a hot-unplug and a hot-plug that reuses the
// name would make it.
type swapper struct {
	recorder
	at     string
	before bool
	swap   func(ctx context.Context)
	once   sync.Once
}

func (s *swapper) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	hit := len(argv) > 0 && argv[0] == s.at
	if hit && s.before {
		s.once.Do(func() { s.swap(ctx) })
	}
	out, err := s.recorder.Run(ctx, argv, stdin)
	if hit && !s.before {
		s.once.Do(func() { s.swap(ctx) })
	}
	return out, err
}

// TestKernelNameSwappedBeforeAnLVMCommand is decision 0062's case: the volume phase observes
// the fast device A (identity checked), lists LVM, and then runs pvcreate on the DB slot's
// partition by its kernel name. If A's loop number is bound to another disk B in between,
// with the same table, /dev/loopNp1 is B's partition and pvcreate writes its label into B's
// data. B must not change: the agent holds the disk whose identity it checked across the
// command, and a name that means another disk by then refuses the slot.
func TestKernelNameSwappedBeforeAnLVMCommand(t *testing.T) {
	e := setup(t)
	e.tool(t, "pvcreate", "lvm2")
	for _, tc := range []struct {
		name   string
		at     string
		before bool
	}{
		// The name moves after the look: the identity checked just before pvcreate refuses.
		{"after the look", "lvs", false},
		// The name would move while pvcreate starts: the pin keeps it (the loop device cannot
		// be bound again while open), and pvcreate writes the disk that was checked.
		{"as pvcreate starts", "pvcreate", true},
	} {
		t.Run(tc.name, func(t *testing.T) { swapBeforeLVM(t, e, tc.at, tc.before) })
	}
}

func swapBeforeLVM(t *testing.T, e *env, at string, before bool) {
	losetup, partx := e.tool(t, "losetup", ""), e.tool(t, "partx", "")
	const size = 8 * gib
	a := e.attach(t, "fast-a", size)
	p := planFor(t, planOpts{slots: 2}, a)
	devs := e.devices(t, a) // the inventory the agent acts on, read while A is there
	slot := provision.Wanted(p.FastDevices[0])[0]
	lvmView(t, e.dir, a.dev)

	bFile := filepath.Join(e.dir, "b-"+randomHex(t, 2)+".img")
	var swapped string
	sw := &swapper{at: at, before: before, swap: func(ctx context.Context) {
		// B: A's table (a copy of A's file as Prism left it) and someone's data, no signature
		// libblkid knows, where pvcreate writes: the head of partition 1.
		e.must(t, "cp", "--sparse=always", a.file, bFile)
		f, err := os.OpenFile(bFile, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteAt(e.known, slot.StartBytes)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			t.Error(err)
			return
		}
		t.Cleanup(func() { detachAll(t, losetup, partx, bFile) })
		if _, err := run(ctx, "", losetup, "--detach", a.dev); err != nil {
			swapped = "A could not be detached: " + err.Error()
			return
		}
		if _, err := run(ctx, "", losetup, a.dev, bFile); err != nil {
			swapped = "B could not take A's name: " + err.Error()
			return
		}
		e.must(t, partx, "--update", a.dev)
		swapped = fmt.Sprintf("%s is now %s", a.dev, bFile)
	}}
	res := provision.Runner{Exec: sw, HostRoot: "/", Proc: loopdevs.HostProc(t), Volumes: true}.Reconcile(e.ctx, p, devs, prismv1.ModeApply)
	if swapped == "" {
		t.Fatalf("the volume phase never listed LVM: it ran %q; partitions %+v", sw.writes(), statuses(res, a))
	}
	t.Logf("swap: %s", swapped)
	got := make([]byte, len(e.known))
	if f, err := os.Open(bFile); err != nil {
		t.Fatal(err)
	} else {
		_, err = f.ReadAt(got, slot.StartBytes)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, e.known) {
		t.Fatalf("DATA LOSS: the agent wrote into %s's partition 1 (%s at byte %d) after its name moved to it; it ran %q",
			a.dev, bFile, slot.StartBytes, sw.writes())
	}
	if before {
		// The swap could not happen; pvcreate wrote A, the disk that was checked.
		if !strings.Contains(swapped, "could not") {
			t.Fatalf("swap %q: want the pinned name kept", swapped)
		}
		label := make([]byte, 8)
		if f, err := os.Open(a.file); err != nil {
			t.Fatal(err)
		} else {
			_, err = f.ReadAt(label, slot.StartBytes+512)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if string(label) != "LABELONE" {
			t.Fatalf("A's partition 1 holds %q at sector 1, want pvcreate's LABELONE", label)
		}
		return
	}
	st := statuses(res, a)[0]
	if st.Volume == nil || st.Volume.State == prismv1.DBVolumeReady || !strings.Contains(st.Volume.Message, "not the device the inventory read") {
		t.Fatalf("slot 1's volume: %+v, want it refused naming both identities", st.Volume)
	}
	t.Logf("%s kept; volume %s: %s", bFile, st.Volume.State, st.Volume.Message)
}

// lvmView shows LVM the partitions of dev alone (LVM_SYSTEM_DIR, for this test's process and
// the commands it runs: hostexec.Local passes its environment on), so no other device of the machine is scanned or touched.
func lvmView(t *testing.T, dir, dev string) {
	t.Helper()
	conf := filepath.Join(dir, "lvm-"+filepath.Base(dev))
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	filter := fmt.Sprintf(`[ "a|^%sp[0-9]+$|", "r|.*|" ]`, dev)
	text := fmt.Sprintf("devices {\n\tfilter = %s\n\tglobal_filter = %s\n\thints = \"none\"\n}\n", filter, filter)
	if err := os.WriteFile(filepath.Join(conf, "lvm.conf"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LVM_SYSTEM_DIR", conf)
	t.Setenv("LVM_SUPPRESS_FD_WARNINGS", "1")
}
