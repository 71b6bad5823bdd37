//go:build linux

package dbvolume

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"

	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/lvm"
)

// TestRealLVMWalk runs Decide against real LVM on a loop device of its own, as the runner
// will: read the reports, decide, run the decision's argv, again, until nothing is left to do.
// It checks that lvm2 accepts every argv Prism builds and that real reports lead from an empty
// slot partition to Prism's LV. On a kernel without device-mapper (LVM cannot activate) the
// test runs lvcreate with --driverloaded n --activate n --zero n and stops at ActivateLV.
func TestRealLVMWalk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("needs root to attach a loop device and run LVM on it (euid %d)", os.Geteuid())
	}
	for tool, pkg := range map[string]string{"losetup": "mount", "sgdisk": "gdisk", "pvcreate": "lvm2", "vgremove": "lvm2", "pvremove": "lvm2"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian package %s)", tool, pkg)
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop driver: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	misc, _ := os.ReadFile("/proc/misc")
	dm := bytes.Contains(misc, []byte("device-mapper"))
	noDM := func(argv []string) []string {
		if dm {
			return argv
		}
		return append([]string{argv[0], "--driverloaded", "n"}, argv[1:]...)
	}
	run := func(argv ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "LC_ALL=C", "LVM_SUPPRESS_FD_WARNINGS=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}

	file := filepath.Join(t.TempDir(), "fast.img")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, 2<<30); err != nil { // sparse
		t.Fatal(err)
	}
	dev := run("losetup", "--find", "--show", "--partscan", file)
	if !strings.HasPrefix(dev, "/dev/loop") {
		t.Fatalf("losetup printed %q", dev)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	vg, lv, err := prismv1.DBVolumeNames("/dev/disk/by-id/prism-test-"+hex.EncodeToString(b)+"-fast", 0)
	if err != nil {
		t.Fatal(err)
	}
	part := dev + "p1"
	t.Cleanup(func() {
		// Only this test's VG, PV and loop device, each named.
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		env := append(os.Environ(), "LVM_SUPPRESS_FD_WARNINGS=1")
		for _, argv := range [][]string{noDM([]string{"vgremove", "--force", "--devices", part, vg}), noDM([]string{"pvremove", "--devices", part, part}), {"losetup", "-d", dev}} {
			cmd := exec.CommandContext(c, argv[0], argv[1:]...)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil && argv[0] == "losetup" {
				t.Errorf("cleanup: %s: %v\n%s", strings.Join(argv, " "), err, out)
			}
		}
	})
	const guid = "8f3c1e52-6a0b-4c1d-9e2f-0123456789ab"
	run("sgdisk", "-n1:1M:+1G", "-c1:prism-db-00", "-t1:30CD0809-C2B2-499C-8879-2D6B78529876", "-u1:"+guid, dev)
	_ = exec.CommandContext(ctx, "partx", "--update", dev).Run()
	devno, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(part), "dev"))
	if err != nil {
		t.Fatalf("the kernel has no %s: %v", part, err)
	}
	maj, mnr, _ := strings.Cut(strings.TrimSpace(string(devno)), ":")
	slot := Slot{Partition: part, PartUUID: guid, VG: vg, LV: lv}
	slot.Major, _ = strconv.Atoi(maj)
	slot.Minor, _ = strconv.Atoi(mnr)

	host := hostexec.Local{Timeout: time.Minute}
	var walk []Action
	for range 6 {
		rep, err := lvm.Read(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		d := Decide(slot, rep)
		walk = append(walk, d.Action)
		t.Logf("%s: %s %q", d.Action, d.Message, d.Argv)
		if d.Action == Ready || d.Action == Refused || d.Action == Activate && !dm {
			if d.Action == Ready || d.Action == Activate {
				checkTags(t, rep, vg, lv, guid)
			}
			break
		}
		argv := d.Argv
		if !dm && d.Action == CreateLV {
			argv = append([]string{argv[0], "--driverloaded", "n", "--activate", "n", "--zero", "n"}, argv[1:]...)
		}
		if _, err := host.Run(ctx, argv, nil); err != nil {
			t.Fatalf("%s: %v", d.Action, err)
		}
	}
	want := []Action{CreatePV, CreateVG, CreateLV, Activate}
	if dm {
		want = []Action{CreatePV, CreateVG, CreateLV, Ready}
	}
	if !slices.Equal(walk, want) {
		t.Fatalf("walk %v, want %v (device-mapper: %v)", walk, want, dm)
	}
}

func checkTags(t *testing.T, rep lvm.Report, vg, lv, guid string) {
	t.Helper()
	want := []string{lvm.TagDBSlot, lvm.TagPartUUID(guid)}
	for _, v := range rep.VGs {
		if v.Name == vg && !slices.Equal(v.Tags, want) {
			t.Errorf("VG tags %q, want %q", v.Tags, want)
		}
	}
	for _, l := range rep.LVs {
		if l.VGName == vg && (l.Name != lv || !slices.Equal(l.Tags, want)) {
			t.Errorf("LV %s tags %q, want %s with %q", l.Name, l.Tags, lv, want)
		}
	}
}
