package dbvolume

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"

	"github.com/prism-storage/prism/internal/host/lvm"
)

// FuzzDecide: on any reports the parsers accept and any device number, Decide never panics,
// names a step's argv exactly when it decides a step, always names Prism's path, and says
// Ready only for Prism's tagged, active LV alone in Prism's tagged VG on exactly this
// partition; pvcreate on a partition not proven empty, and a head cleared, only on Prism's own
// LVM cut short (its intent record, and a head holding LVM's bytes alone of Prism's PV).
func FuzzDecide(f *testing.F) {
	dir := filepath.Join("..", "..", "host", "lvm", "testdata")
	for _, state := range []string{"empty", "pv-only", "pv-vg", "ready", "foreign", "unknown"} {
		var in [3][]byte
		for i, r := range []string{"pvs", "vgs", "lvs"} {
			b, err := os.ReadFile(filepath.Join(dir, state+"-"+r+".json"))
			if err != nil {
				f.Fatal(err)
			}
			in[i] = b
		}
		f.Add(in[0], in[1], in[2], 259, 0, "", false, false, "", "")
		f.Add(in[0], in[1], in[2], 259, 1, "xfs", false, false, "", "")
		f.Add(in[0], in[1], in[2], 259, 0, "non-zero bytes", true, true, "", "")
		f.Add(in[0], in[1], in[2], 259, 7, "LVM2_member", true, true, prismPV, "prism-db-49bd38895b20-00")
	}
	f.Fuzz(func(t *testing.T, pvs, vgs, lvs []byte, major, minor int, unproven string, intent, mda bool, label, text string) {
		var rep lvm.Report
		var err error
		if rep.PVs, err = lvm.ParsePVs(pvs); err != nil {
			return
		}
		if rep.VGs, err = lvm.ParseVGs(vgs); err != nil {
			return
		}
		if rep.LVs, err = lvm.ParseLVs(lvs); err != nil {
			return
		}
		vg, lv, _ := prismv1.DBVolumeNames("/dev/disk/by-id/nvme-PRISMTEST_FAST", 0)
		s := Slot{Partition: "/dev/loop0p1", Major: major, Minor: minor, PartUUID: "8f3c1e52-6a0b-4c1d-9e2f-0123456789ab", VG: vg, LV: lv, Unproven: unproven, Intent: intent}
		if mda || label != "" || text != "" {
			s.Head = &lvm.Head{PVUUID: label, MDA: mda, VGName: text}
		}
		d := Decide(s, rep)
		if d.Path != lvm.LVPath(vg, lv) || len(d.Message) > MaxMessageLength {
			t.Fatalf("path %q, message of %d bytes", d.Path, len(d.Message))
		}
		step := d.Action == CreatePV || d.Action == CreateVG || d.Action == CreateLV || d.Action == Activate
		if step != (len(d.Argv) > 0) || !step && d.Action != Ready && d.Action != Refused && d.Action != ClearHead {
			t.Fatalf("action %q with argv %q", d.Action, d.Argv)
		}
		if d.CephVolume && d.Action != Refused {
			t.Fatalf("CephVolume on %s", d.Action)
		}
		if d.Action == CreatePV && unproven != "" && (!intent || s.Head == nil || label != "" || text != "") {
			t.Fatalf("pvcreate on a partition not proven empty, without Prism's torn pvcreate on it: %+v", d)
		}
		if d.Action == ClearHead {
			i := slices.IndexFunc(rep.PVs, func(p lvm.PV) bool { return p.Major == major && p.Minor == minor })
			if !intent || label != prismPV || text != "" && text != vg || i < 0 || !rep.PVs[i].VGUnknown || rep.PVs[i].UUID != prismPV {
				t.Fatalf("a head cleared that is not Prism's vgcreate cut short: %+v on %+v", s, rep)
			}
		}
		if d.Action != Ready {
			return
		}
		tags := []string{lvm.TagDBSlot, lvm.TagPartUUID(s.PartUUID)}
		var mine []lvm.LV
		for _, l := range rep.LVs {
			if l.VGName == vg {
				mine = append(mine, l)
			}
		}
		onPart := slices.IndexFunc(rep.PVs, func(p lvm.PV) bool { return p.Major == major && p.Minor == minor && p.VGName == vg })
		if len(mine) != 1 || mine[0].Name != lv || !mine[0].Active() || onPart < 0 ||
			!slices.Contains(mine[0].Tags, tags[0]) || !slices.Contains(mine[0].Tags, tags[1]) {
			t.Fatalf("Ready on %+v", rep)
		}
	})
}
