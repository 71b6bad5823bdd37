package provision

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/lvm"
)

// dbContents lists each partition's DBContent and DBFound ("-" for none).
func dbContents(ps []prismv1.PartitionStatus) string {
	var s []string
	for _, p := range ps {
		s = append(s, string(p.DBContent)+"("+p.DBFound+")")
	}
	return strings.ReplaceAll(strings.Join(s, ","), "()", "")
}

// What a DB slot holds is read from its volume once the volume is Ready: an OSD's BlueStore
// label there is InUse, a volume without a signature is Empty (RocksDB's leftovers after a zap
// are not asked to be zeros), and a volume that cannot be read leaves the slot without a
// content, which the operator takes as in use. Before any volume, the partitions' ranges are
// read: a blank device's slots are Empty.
func TestDBContentIsReadFromTheVolume(t *testing.T) {
	h, _ := volumeHost(t)
	// Dry run on a blank device: no partition, no volume; each range is read.
	res := h.reconcileVolumes(slotPlan(t), prismv1.ModeDryRun)
	if got := dbContents(res.Partitions); got != "Empty,Empty,Empty" {
		t.Fatalf("blank device: %s", got)
	}
	res = h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
	if got := volumeStates(res.Partitions); got != "Ready,Ready,Ready" {
		t.Fatalf("volumes: %s", got)
	}
	// The fake LVM makes no device nodes: no volume can be read yet.
	if got := dbContents(res.Partitions); got != ",," {
		t.Fatalf("volumes without a device node: %q, want no content", got)
	}
	// An active LV as the kernel lists it: /sys/class/block/dm-N/dm/name, /dev/dm-N. No
	// /dev/<vg>/<lv> link: the agent does not need udev's.
	fd := planFor(t, prismv1.CacheNone)
	write := func(i int, data []byte) {
		t.Helper()
		vg, lv, err := prismv1.DBVolumeNames(fd.StablePath, fd.Slots[i].Index)
		if err != nil {
			t.Fatal(err)
		}
		dm := fmt.Sprintf("dm-%d", i+3)
		sys := filepath.Join(h.root, "sys", "class", "block", dm, "dm")
		if err := os.MkdirAll(sys, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sys, "name"), []byte(lvm.DMName(vg, lv)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(h.root, "dev", dm)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(64 << 20); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
	}
	write(0, []byte("bluestore block device\n2f7a2c3e-0000-4000-8000-000000000000\n"))
	write(1, nil)
	res = h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
	if got := dbContents(res.Partitions); got != "InUse(ceph_bluestore),Empty," {
		t.Fatalf("an OSD's DB on slot 0, slot 1 empty, slot 2 unread: %s", got)
	}
}
