package foreign

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// TestKernelNameTakenByAnotherDevice is issue 29's case 1: a planned device A is detached and
// its kernel name is bound to another device B before the agent writes, so the inventory
// record it acts on (path /dev/loopN) now leads to B. Whether or not the policy grants A a
// wipe, and whether B holds ext4 or nothing, B must not change: the agent compares what the
// kernel reports of the device it opened (a loop's file, diskseq) with the record.
func TestKernelNameTakenByAnotherDevice(t *testing.T) {
	e := setup(t)
	const size = 8 * gib
	for _, tc := range []struct {
		name    string
		granted bool
		ext4    bool
	}{
		{"granted, ext4 on the new device", true, true},
		{"not granted, the new device empty", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.attach(t, "fast-a", size)
			var grant []*loop
			if tc.granted {
				grant = []*loop{a}
			}
			p := planFor(t, planOpts{slots: 2, grant: grant}, a)
			devs := e.devices(t, a) // the inventory the agent acts on, read while A was there
			if devs[0].Identity == nil || devs[0].Identity.BackingFile != a.file || devs[0].Identity.DiskSeq == 0 {
				t.Fatalf("inventory identity of %s: %+v, want its file %s and a diskseq", a.dev, devs[0].Identity, a.file)
			}

			// A leaves; B takes its kernel name.
			losetup := e.tool(t, "losetup", "")
			e.must(t, losetup, "--detach", a.dev)
			b := &loop{dev: a.dev, name: a.name, file: filepath.Join(e.dir, "b-"+randomHex(t, 2)+".img"), size: size, stablePath: a.stablePath}
			f, err := os.Create(b.file)
			if err == nil {
				err = f.Truncate(size)
				f.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.ext4 {
				e.must(t, e.tool(t, "mkfs.ext4", ""), "-q", "-F", b.file)
			}
			t.Cleanup(func() { detachAll(t, losetup, e.tool(t, "partx", ""), b.file) })
			e.must(t, losetup, a.dev, b.file)

			before := e.digest(t, b)
			res, rec := e.passWith(t, p, devs)
			if d := before.diff(e.digest(t, b)); d != "" {
				t.Fatalf("DATA LOSS: the agent changed %s (now %s): %s; it ran %q", b.dev, b.file, d, rec.writes())
			}
			for _, s := range statuses(res, a) {
				if s.State != prismv1.PartitionRefused || !strings.Contains(s.Message, "not the device the inventory read") || !strings.Contains(s.Message, b.file) {
					t.Errorf("partition %d: %s %q, want Refused naming both identities", s.Number, s.State, s.Message)
				}
			}
			t.Logf("%s kept; %s", b.file, statuses(res, a)[0].Message)
		})
	}
}
