package dbvolume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"

	"github.com/prism-storage/prism/internal/host/lvm"
)

// lvmFixture reads one state of internal/host/lvm's real reports (lvm2 2.03.16 on a loop
// device: slot partition /dev/loop0p1 is 259:0 with GUID 8f3c1e52-..., a second partition
// 259:1), through lvm.Read.
func lvmFixture(t *testing.T, state string) lvm.Report {
	t.Helper()
	exec := lvmFixtureExec{}
	for argv, report := range map[string]string{
		strings.Join(lvm.PVsArgv(), " "): "pvs", strings.Join(lvm.VGsArgv(), " "): "vgs", strings.Join(lvm.LVsArgv(), " "): "lvs",
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "host", "lvm", "testdata", state+"-"+report+".json"))
		if err != nil {
			t.Fatal(err)
		}
		exec[argv] = b
	}
	r, err := lvm.Read(context.Background(), exec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type lvmFixtureExec map[string][]byte

func (f lvmFixtureExec) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	if out, ok := f[strings.Join(argv, " ")]; ok {
		return out, nil
	}
	return nil, errors.New("unexpected argv")
}

// prismPV is the PV UUID Prism gives the fixtures' slot partition (its GUID).
const prismPV = "8f3c1e-526a-0b4c-1d9e-2f01-2345-6789ab"

// fixtureSlot is the slot the fixtures were made for (slot 0 of
// /dev/disk/by-id/nvme-PRISMTEST_FAST on loop0p1).
func fixtureSlot(t *testing.T) Slot {
	vg, lv, err := prismv1.DBVolumeNames("/dev/disk/by-id/nvme-PRISMTEST_FAST", 0)
	if err != nil {
		t.Fatal(err)
	}
	return Slot{Partition: "/dev/loop0p1", Major: 259, Minor: 0, PartUUID: "8F3C1E52-6A0B-4C1D-9E2F-0123456789AB", VG: vg, LV: lv}
}

// Edits of a report, applied to a deep copy.
func activate(r *lvm.Report) {
	for i := range r.LVs {
		r.LVs[i].Attr = "-wi-a-----"
	}
}

func clone(r lvm.Report) lvm.Report {
	out := lvm.Report{PVs: slices.Clone(r.PVs), VGs: slices.Clone(r.VGs), LVs: slices.Clone(r.LVs)}
	for i := range out.PVs {
		out.PVs[i].Tags = slices.Clone(out.PVs[i].Tags)
	}
	for i := range out.VGs {
		out.VGs[i].Tags = slices.Clone(out.VGs[i].Tags)
	}
	for i := range out.LVs {
		out.LVs[i].Tags = slices.Clone(out.LVs[i].Tags)
	}
	return out
}

func TestDecide(t *testing.T) {
	base := fixtureSlot(t)
	vg, lv := base.VG, base.LV
	tags := []string{"--addtag", "prism.storage.io/db-slot", "--addtag", "prism.storage.io/partuuid=8f3c1e52-6a0b-4c1d-9e2f-0123456789ab"}
	otherSlot := func(s *Slot) { s.Partition, s.Minor = "/dev/loop0p2", 1 }
	pvcreate := []string{"pvcreate", "--uuid", prismPV, "--norestorefile", "/dev/loop0p1"}
	// tornPV is the slot after Prism's pvcreate was killed before its label (lvm's
	// torn-pv-head fixture); tornVG the slot on loop5p1 of the unknown-* fixtures, after
	// Prism's vgcreate was killed before its last write (torn-vg-head).
	tornPV := func(s *Slot) {
		s.Unproven, s.Intent, s.Head = "it holds non-zero bytes at offset 4096", true, &lvm.Head{MDA: true}
	}
	tornVG := func(s *Slot) {
		s.Partition, s.Minor = "/dev/loop5p1", 7
		s.Intent, s.Head = true, &lvm.Head{PVUUID: prismPV, MDA: true, VGName: vg}
	}
	then := func(fs ...func(*Slot)) func(*Slot) {
		return func(s *Slot) {
			for _, f := range fs {
				f(s)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		state   string
		edit    func(*lvm.Report)
		slot    func(*Slot)
		want    Action
		argv    []string
		message string // a part of the message
		ceph    bool
	}{
		// The path of one slot, and every state a crash leaves on it.
		{name: "empty and proven empty: pvcreate", state: "empty", want: CreatePV, argv: pvcreate},
		{name: "a PV only (crash after pvcreate): vgcreate", state: "pv-only", want: CreateVG,
			argv: append(append([]string{"vgcreate"}, tags...), vg, "/dev/loop0p1")},
		{name: "PV and VG without LV (crash after vgcreate): lvcreate", state: "pv-vg", want: CreateLV,
			argv: append(append([]string{"lvcreate", "--name", lv, "--extents", "100%FREE"}, tags...), vg)},
		{name: "the LV, not active: lvchange", state: "ready", want: Activate, argv: []string{"lvchange", "--activate", "y", vg + "/" + lv}},
		{name: "the LV, active: nothing", state: "ready", edit: activate, want: Ready, message: "logical volume /dev/" + vg + "/" + lv + ", 1069547520 bytes"},
		{name: "others' LVM elsewhere changes nothing", state: "foreign", edit: activate, want: Ready},
		{name: "ceph-volume's tags on Prism's LV change nothing", state: "ready", edit: func(r *lvm.Report) {
			activate(r)
			r.LVs[0].Tags = append(r.LVs[0].Tags, "ceph.osd_id=0", "ceph.type=db", "ceph.db_uuid=Vf18CS")
		}, want: Ready},

		// LVM cut short (issue 29): Prism's own torn pvcreate and vgcreate are redone.
		{name: "pvcreate cut before its label: pvcreate again", state: "empty", slot: tornPV, want: CreatePV, argv: pvcreate, message: "cut short before its label"},
		{name: "vgcreate cut after the label: Prism clears the head", state: "unknown", slot: tornVG, want: ClearHead, message: "vgcreate of " + vg + " was cut short"},
		{name: "vgcreate cut before its text: Prism clears the head", state: "unknown", slot: then(tornVG, func(s *Slot) { s.Head.VGName = "" }), want: ClearHead},
		{name: "a foreign PV of an unknown VG changes nothing elsewhere", state: "unknown", want: CreatePV, argv: pvcreate},
		{name: "the head without Prism's intent record", state: "empty", slot: then(tornPV, func(s *Slot) { s.Intent = false }), want: Refused, message: "not proven empty: it holds non-zero bytes"},
		{name: "the head not LVM's alone", state: "empty", slot: then(tornPV, func(s *Slot) { s.Head = nil }), want: Refused, message: "not proven empty"},
		{name: "a label LVM does not list", state: "empty", slot: then(tornPV, func(s *Slot) { s.Head.PVUUID = prismPV }), want: Refused, message: "not proven empty"},
		{name: "an unknown VG without the intent record", state: "unknown", slot: then(tornVG, func(s *Slot) { s.Intent = false }), want: Refused, message: "whose metadata it cannot find ([unknown])"},
		{name: "an unknown VG whose text names another VG", state: "unknown", slot: then(tornVG, func(s *Slot) { s.Head.VGName = "othervg" }), want: Refused, message: "[unknown]"},
		{name: "an unknown VG on a PV of another UUID", state: "unknown", slot: then(tornVG, func(s *Slot) { s.Partition, s.Minor = "/dev/loop5p2", 8 }), want: Refused, message: "physical volume dkERG0-g9LT"},
		{name: "an unknown VG, and Prism's VG name elsewhere", state: "unknown", slot: tornVG, edit: func(r *lvm.Report) {
			r.VGs = append(r.VGs, lvm.VG{Name: vg, UUID: "x", PVCount: 1})
		}, want: Refused, message: "[unknown]"},

		// A PV row LVM prints oddly (issue 29: one broken foreign PV never fails other devices).
		{name: "an odd PV row on another device changes nothing", state: "empty", edit: func(r *lvm.Report) {
			r.PVs = append(r.PVs, lvm.PV{Name: "/dev/sdz", Major: 8, Minor: 208, Problem: `pvs report: pv[1].pv_size "1.00m" is not a byte count`})
		}, want: CreatePV, argv: pvcreate},
		{name: "an odd PV row on the slot's partition", state: "empty", edit: func(r *lvm.Report) {
			r.PVs = append(r.PVs, lvm.PV{Name: "/dev/loop0p1", Major: base.Major, Minor: base.Minor, Problem: `pvs report: pv[1].pv_size "1.00m" is not a byte count`})
		}, want: Refused, message: "that Prism cannot read whole"},

		// Refusals before pvcreate.
		{name: "empty but not proven empty", state: "empty", slot: func(s *Slot) { s.Unproven = "xfs at byte 0 (libblkid)" },
			want: Refused, message: "not proven empty: xfs at byte 0 (libblkid)"},
		{name: "Prism's VG name on another device", state: "ready", slot: otherSlot,
			want: Refused, message: "a volume group named " + vg + ", Prism's name for this slot, exists on /dev/loop0p1"},
		{name: "a PV only, and Prism's VG name on another device", state: "ready", slot: otherSlot, edit: func(r *lvm.Report) {
			r.PVs = append(r.PVs, lvm.PV{Name: "/dev/loop0p2", UUID: "x", Major: 259, Minor: 1, DevSize: 1 << 30, Size: 1 << 30})
		}, want: Refused, message: "in no volume group, but a volume group named " + vg + " exists on /dev/loop0p1"},
		{name: "the slot's inputs unknown", state: "empty", slot: func(s *Slot) { s.PartUUID = "" }, want: Refused, message: "GPT GUID is unknown"},
		{name: "an invalid VG name", state: "empty", slot: func(s *Slot) { s.VG = "-x" }, want: Refused, message: "starts with '-'"},

		// Someone else's LVM on the partition.
		{name: "the partition in another VG", state: "foreign", slot: otherSlot, want: Refused,
			message: "it is a physical volume of the volume group othervg, not Prism's"},
		{name: "ceph-volume's own VG on the partition", state: "foreign", slot: otherSlot, edit: func(r *lvm.Report) {
			r.PVs[1].VGName = "ceph-7c1d"
			r.VGs[0].Name = "ceph-7c1d"
			r.LVs[0].VGName, r.LVs[0].Name, r.LVs[0].Tags = "ceph-7c1d", "osd-db-5e2a", []string{"ceph.osd_id=3", "ceph.type=db"}
		}, want: Refused, ceph: true, message: "ceph-volume's volume group ceph-7c1d (logical volumes osd-db-5e2a)"},
		{name: "a ceph- VG without Ceph's tags is just foreign", state: "foreign", slot: otherSlot, edit: func(r *lvm.Report) {
			r.PVs[1].VGName = "ceph-7c1d"
			r.VGs[0].Name = "ceph-7c1d"
			r.LVs[0].VGName = "ceph-7c1d"
		}, want: Refused, message: "volume group ceph-7c1d, not Prism's"},
		{name: "two PVs on the partition", state: "pv-only", edit: func(r *lvm.Report) { r.PVs = append(r.PVs, r.PVs[0]) },
			want: Refused, message: "duplicate PVs"},
		{name: "a missing PV", state: "pv-vg", edit: func(r *lvm.Report) { r.PVs[0].Missing = true }, want: Refused, message: "missing"},

		// A VG of Prism's name on the partition that is not as Prism makes it.
		{name: "Prism's VG name without Prism's tag", state: "pv-vg", edit: func(r *lvm.Report) { r.VGs[0].Tags = nil },
			want: Refused, message: "lacks Prism's tag prism.storage.io/db-slot (tags: none): not made by Prism"},
		{name: "Prism's VG made for another partition", state: "pv-vg", edit: func(r *lvm.Report) {
			r.VGs[0].Tags[1] = lvm.TagPartUUID("1b2c3d4e-5f60-4172-8394-a5b6c7d8e9f0")
		}, want: Refused, message: "made by Prism for another partition"},
		{name: "Prism's VG spanning another PV", state: "pv-vg", edit: func(r *lvm.Report) {
			r.VGs[0].PVCount = 2
			r.PVs = append(r.PVs, lvm.PV{Name: "/dev/sdz", UUID: "z", Major: 8, Minor: 0, VGName: r.VGs[0].Name, VGUUID: r.VGs[0].UUID})
		}, want: Refused, message: "has 2 physical volumes (0 missing), Prism's has this partition only (others: /dev/sdz)"},
		{name: "two VGs of Prism's name", state: "pv-vg", edit: func(r *lvm.Report) {
			dup := r.VGs[0]
			dup.UUID = "other"
			r.VGs = append(r.VGs, dup)
		}, want: Refused, message: "LVM lists 2 volume groups named"},
		{name: "Prism's VG not in the VG report", state: "pv-vg", edit: func(r *lvm.Report) { r.VGs = nil },
			want: Refused, message: "which the volume group report does not list"},
		{name: "a VG counting LVs the report lacks", state: "pv-vg", edit: func(r *lvm.Report) { r.VGs[0].LVCount = 1 },
			want: Refused, message: "counts 1 logical volumes but LVM lists none"},

		// An LV in Prism's VG that is not Prism's.
		{name: "another LV in Prism's VG", state: "ready", edit: func(r *lvm.Report) {
			extra := r.LVs[0]
			extra.Name = "scratch"
			r.LVs = append(r.LVs, extra)
		}, want: Refused, message: "holds prism-db-00, scratch, Prism's holds prism-db-00 only"},
		{name: "an LV of another name only", state: "ready", edit: func(r *lvm.Report) { r.LVs[0].Name = "scratch" },
			want: Refused, message: "holds scratch"},
		{name: "Prism's LV name without Prism's tags", state: "ready", edit: func(r *lvm.Report) { r.LVs[0].Tags = []string{"ceph.osd_id=0"} },
			want: Refused, message: "lacks Prism's tags"},
		{name: "Prism's LV not filling its VG", state: "ready", edit: func(r *lvm.Report) { r.VGs[0].Free = 4 << 20; r.LVs[0].Size -= 4 << 20 },
			want: Refused, message: "leaves 4194304 of its volume group free"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := clone(lvmFixture(t, tc.state))
			if tc.edit != nil {
				tc.edit(&rep)
			}
			s := base
			if tc.slot != nil {
				tc.slot(&s)
			}
			d := Decide(s, rep)
			if d.Action != tc.want || !slices.Equal(d.Argv, tc.argv) || !strings.Contains(d.Message, tc.message) || d.CephVolume != tc.ceph {
				t.Fatalf("got %s %q %q (ceph-volume %v)\nwant %s %q, a message with %q (ceph-volume %v)", d.Action, d.Argv, d.Message, d.CephVolume, tc.want, tc.argv, tc.message, tc.ceph)
			}
			if d.Path != lvm.LVPath(s.VG, s.LV) {
				t.Errorf("path %q", d.Path)
			}
			if (d.Action == Refused) != strings.HasSuffix(d.Message, "Prism leaves it alone") {
				t.Errorf("a refusal says Prism leaves it alone, nothing else does: %q", d.Message)
			}
		})
	}
}

// TestDecideWalk runs the decision over the states one uninterrupted pass goes
// through, as the runner will: each step's decision leads to the next state, and the last
// needs nothing.
func TestDecideWalk(t *testing.T) {
	s := fixtureSlot(t)
	ready := clone(lvmFixture(t, "ready"))
	activate(&ready)
	var got []Action
	for _, rep := range []lvm.Report{lvmFixture(t, "empty"), lvmFixture(t, "pv-only"), lvmFixture(t, "pv-vg"), lvmFixture(t, "ready"), ready} {
		got = append(got, Decide(s, rep).Action)
	}
	want := []Action{CreatePV, CreateVG, CreateLV, Activate, Ready}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
