// Tests of the reboot drill's second boot (hack/e2e/guest-cluster.sh E2E_BOOT=2) that run
// without a guest: bash against stubs of LVM and partx, on a fake /dev/disk/by-id and sysfs.
package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backingStubs log each pvs, lvchange, udevadm and partx call to $CALLS; pvs names the VG
// Prism's agent made on each slot partition; partx --delete removes the disk's partitions from
// the fake sysfs (as BLKPG does from the kernel's), unless $KEEP_PARTS is set.
var backingStubs = map[string]string{
	"pvs": `#!/bin/bash
echo "pvs $*" >>"$CALLS"
case ${@: -1} in
  /dev/nvme1n1p1) echo "  prism-db-0f1e2d3c-00" ;;
  /dev/nvme1n1p2) echo "  prism-db-0f1e2d3c-01" ;;
  *) echo "  Failed to find physical volume \"${@: -1}\"." >&2; exit 5 ;;
esac
`,
	"lvchange": `#!/bin/bash
echo "lvchange $*" >>"$CALLS"
`,
	"udevadm": `#!/bin/bash
echo "udevadm $*" >>"$CALLS"
`,
	"partx": `#!/bin/bash
echo "partx $*" >>"$CALLS"
name=${@: -1}; name=${name#/dev/}
[[ -n ${KEEP_PARTS:-} ]] || rm -rf "$SYS/$name/$name"p*
`,
}

// TestRebootHidesTheBackingDisksFromLVM: at the second boot the prism stage's emulated disks
// under the fabric drives hold the GPT and LVM labels the agent wrote through the fabric; the
// kernel read their partitions and udev's LVM rule activated Prism's VGs on them. Before the
// fabric connects, hide_backing_disks deactivates those VGs, forgets LVM's autoactivation record
// and the kernel's partitions of those disks (and of no other), so that the fabric's partitions
// are the PVs' only path. A line of sparse file and a disk without partitions are left alone; a
// serial without a disk, or partitions that stay, fail it.
func TestRebootHidesTheBackingDisksFromLVM(t *testing.T) {
	needBash(t)
	src := read(t, "guest-cluster.sh")
	fn := function(t, src, "hide_backing_disks")
	for _, c := range []struct {
		name, lines, keep string
		wantCalls         []string
		wantErr           string
	}{
		{"the prism stage's two disks", "e2e-fast PRISM-E2E-FAST INTEL SSDPF21Q400GB\ne2e-qlc PRISM-E2E-QLC INTEL SSDPF2NV307TZ\n", "",
			[]string{"pvs --noheadings -o vg_name /dev/nvme1n1p1", "pvs --noheadings -o vg_name /dev/nvme1n1p2",
				"lvchange --activate n prism-db-0f1e2d3c-00 prism-db-0f1e2d3c-01", "udevadm settle --timeout=60", "partx --delete /dev/nvme1n1"}, ""},
		{"sparse files and comments", "# the chain's drives\nsparse:400088457216 PRISM-E2E-FAST INTEL SSDPF21Q400GB\n", "", []string{"udevadm settle --timeout=60"}, ""},
		{"a disk without partitions", "e2e-qlc PRISM-E2E-QLC INTEL SSDPF2NV307TZ\n", "", []string{"udevadm settle --timeout=60"}, ""},
		{"no disk with the serial", "e2e-gone PRISM-E2E-FAST INTEL SSDPF21Q400GB\n", "", nil, "no emulated disk with serial e2e-gone"},
		{"partitions that stay", "e2e-fast PRISM-E2E-FAST INTEL SSDPF21Q400GB\n", "1", nil, "nvme1n1 still has partitions"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			byID, sys, run, bin := filepath.Join(dir, "dev/disk/by-id"), filepath.Join(dir, "sys/block"), filepath.Join(dir, "run/lvm"), filepath.Join(dir, "bin")
			for _, d := range []string{byID, bin, filepath.Join(sys, "nvme1n1/nvme1n1p1"), filepath.Join(sys, "nvme1n1/nvme1n1p2"),
				filepath.Join(sys, "nvme2n1"), filepath.Join(sys, "nvme3n1/nvme3n1p1"), filepath.Join(run, "pvs_online"), filepath.Join(run, "vgs_online")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// The kernel names are the second boot's: the work disk last (nvme3n1, a partition of
			// its own it must keep), the QLC backing disk nvme2n1, the fast one nvme1n1.
			for serial, name := range map[string]string{"e2e-fast": "nvme1n1", "e2e-qlc": "nvme2n1", "e2e-work": "nvme3n1"} {
				if err := os.WriteFile(filepath.Join(dir, "dev", name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../../"+name, filepath.Join(byID, "nvme-QEMU_NVMe_Ctrl_"+serial)); err != nil {
					t.Fatal(err)
				}
			}
			for name, body := range backingStubs {
				if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			lines := filepath.Join(dir, "nvmet.txt")
			if err := os.WriteFile(lines, []byte(c.lines), 0o644); err != nil {
				t.Fatal(err)
			}
			calls := filepath.Join(dir, "calls")
			script := strings.NewReplacer("/dev/disk/by-id", byID, "/sys/block", sys, "/run/lvm", run).Replace(fn) + `hide_backing_disks "$1"`
			out, err := bashOut(t, []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "CALLS=" + calls, "SYS=" + sys, "KEEP_PARTS=" + c.keep}, script+" 2>&1", lines)
			got := readCalls(t, calls)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(out, c.wantErr) {
					t.Fatalf("hide_backing_disks: %v, output %q; want a failure naming %q", err, out, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("hide_backing_disks: %v, output %q", err, out)
			}
			if strings.Join(got, "\n") != strings.Join(c.wantCalls, "\n") {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.wantCalls, "\n"))
			}
			for _, d := range []string{"pvs_online", "vgs_online"} {
				if _, err := os.Stat(filepath.Join(run, d)); err == nil {
					t.Errorf("/run/lvm/%s kept: pvscan at the fabric's partitions would take their PVs for duplicates of the backing disk's and activate nothing", d)
				}
			}
			if _, err := os.Stat(filepath.Join(sys, "nvme3n1/nvme3n1p1")); err != nil {
				t.Errorf("the work disk's partition was touched: %v", err)
			}
		})
	}
	// Called on the second boot before containerd, the kubelet and the agent start.
	hide, start := strings.Index(src, `hide_backing_disks /etc/prism-e2e-nvmet.txt`), strings.Index(src, "bg containerd containerd")
	if hide < 0 || start < 0 || hide > start || !strings.Contains(src[strings.LastIndex(src[:hide], "if [[ $E2E_BOOT != 1 ]]"):hide], "cp -a /var/lib/e2e/node-etc/. /etc/") {
		t.Error("guest-cluster.sh does not call hide_backing_disks on the second boot before containerd starts")
	}
}

func readCalls(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
