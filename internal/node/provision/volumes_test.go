package provision

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/lvm"
)

// fakeLVM plays the host's LVM for the runner: the commands change an in-memory state and the
// reports print it in lvm2's JSON form (internal/host/lvm's fixtures are real lvm2 output; its
// parsers read this). Partitions are /dev/nvme0n1pN with device number 259:N, as fakeHost's
// sysfs says.
type fakeLVM struct {
	h   *fakeHost
	pvs []*fakePV
	vgs []*fakeVG
	lvs []*fakeLV
	// noAutoActivate leaves a new LV inactive, as on a host whose lvm.conf does not
	// activate on creation.
	noAutoActivate bool
}

type fakePV struct{ name, uuid, dev, vg string }

type fakeVG struct {
	name string
	tags []string
	size int64
}

type fakeLV struct {
	name, vg string
	tags     []string
	size     int64
	active   bool
}

func (l *fakeLVM) vg(name string) *fakeVG {
	for _, v := range l.vgs {
		if v.name == name {
			return v
		}
	}
	return nil
}

func (l *fakeLVM) run(argv []string) ([]byte, error) {
	fail := func(format string, args ...any) ([]byte, error) {
		return nil, &hostexec.ExitError{ExitCode: 5, Stderr: fmt.Sprintf(format, args...)}
	}
	tags, rest := []string{}, []string{}
	for i := 1; i < len(argv); i++ {
		if argv[i] == "--addtag" {
			tags = append(tags, argv[i+1])
			i++
			continue
		}
		rest = append(rest, argv[i])
	}
	switch argv[0] {
	case "pvs", "vgs", "lvs":
		return l.report(argv[0])
	case "pvcreate":
		dev := rest[len(rest)-1]
		if len(rest) != 4 || rest[0] != "--uuid" || rest[2] != "--norestorefile" {
			return fail("  pvcreate %q: not as Prism runs it", argv)
		}
		n, ok := parsePartitionName(l.h.name, strings.TrimPrefix(dev, "/dev/"))
		if !ok {
			return fail("  No device found for %s.", dev)
		}
		if slices.ContainsFunc(l.pvs, func(p *fakePV) bool { return p.name == dev }) {
			return fail("  Can't initialize physical volume %q of volume group %q without -ff", dev, "")
		}
		l.pvs = append(l.pvs, &fakePV{name: dev, uuid: rest[1], dev: "259:" + strconv.Itoa(n)})
	case "vgcreate":
		name, dev := rest[0], rest[1]
		i := slices.IndexFunc(l.pvs, func(p *fakePV) bool { return p.name == dev })
		if l.vg(name) != nil || i < 0 || l.pvs[i].vg != "" {
			return fail("  vgcreate %s %s refused", name, dev)
		}
		n, _ := parsePartitionName(l.h.name, strings.TrimPrefix(dev, "/dev/"))
		size := (l.h.table().Partitions[n-1].SizeBytes - (1 << 20)) / (4 << 20) * (4 << 20)
		l.pvs[i].vg = name
		l.vgs = append(l.vgs, &fakeVG{name: name, tags: tags, size: size})
	case "lvcreate":
		name, vg := rest[1], rest[len(rest)-1]
		v := l.vg(vg)
		if v == nil || rest[2] != "--extents" || rest[3] != "100%FREE" {
			return fail("  lvcreate %q refused", argv)
		}
		l.lvs = append(l.lvs, &fakeLV{name: name, vg: vg, tags: tags, size: v.size, active: !l.noAutoActivate})
	case "lvchange":
		vg, name, _ := strings.Cut(rest[len(rest)-1], "/")
		i := slices.IndexFunc(l.lvs, func(v *fakeLV) bool { return v.vg == vg && v.name == name })
		if i < 0 {
			return fail("  Failed to find logical volume %q", rest[len(rest)-1])
		}
		l.lvs[i].active = true
	default:
		l.h.t.Fatalf("unexpected LVM command %q", argv)
	}
	return nil, nil
}

// report prints the state as `<cmd> --reportformat json --units b --nosuffix -o <fields>`.
func (l *fakeLVM) report(cmd string) ([]byte, error) {
	var rows []map[string]string
	uuid := func(kind, name string) string { return kind + "-" + name }
	switch cmd {
	case "pvs":
		for _, p := range l.pvs {
			maj, min, _ := strings.Cut(p.dev, ":")
			r := map[string]string{"pv_name": p.name, "pv_uuid": p.uuid, "pv_major": maj, "pv_minor": min,
				"dev_size": "2147483648", "pv_size": "2146435072", "vg_name": p.vg, "vg_uuid": "", "pv_tags": "", "pv_missing": ""}
			if p.vg != "" {
				r["vg_uuid"] = uuid("vg", p.vg)
			}
			rows = append(rows, r)
		}
	case "vgs":
		for _, v := range l.vgs {
			lvs, free := 0, v.size
			for _, lv := range l.lvs {
				if lv.vg == v.name {
					lvs, free = lvs+1, free-lv.size
				}
			}
			pvs := 0
			for _, p := range l.pvs {
				if p.vg == v.name {
					pvs++
				}
			}
			rows = append(rows, map[string]string{"vg_name": v.name, "vg_uuid": uuid("vg", v.name), "pv_count": strconv.Itoa(pvs),
				"lv_count": strconv.Itoa(lvs), "vg_size": strconv.FormatInt(v.size, 10), "vg_free": strconv.FormatInt(free, 10),
				"vg_extent_size": "4194304", "vg_missing_pv_count": "0", "vg_tags": strings.Join(v.tags, ",")})
		}
	case "lvs":
		for _, lv := range l.lvs {
			attr := "-wi-------"
			if lv.active {
				attr = "-wi-a-----"
			}
			rows = append(rows, map[string]string{"lv_name": lv.name, "lv_uuid": uuid("lv", lv.name), "vg_name": lv.vg,
				"lv_path": "/dev/" + lv.vg + "/" + lv.name, "lv_size": strconv.FormatInt(lv.size, 10), "lv_attr": attr, "lv_tags": strings.Join(lv.tags, ",")})
		}
	}
	if rows == nil {
		rows = []map[string]string{}
	}
	return json.Marshal(map[string]any{"report": []map[string]any{{cmd[:2]: rows}}})
}

// volumeHost is a fakeHost whose runner makes DB volumes over a fake LVM.
func volumeHost(t *testing.T) (*fakeHost, *fakeLVM) {
	h := newFakeHost(t)
	h.lvm = &fakeLVM{h: h}
	return h, h.lvm
}

func (h *fakeHost) volumeRunner() Runner {
	r := h.runner()
	r.Volumes = true
	return r
}

// slotPlan is a node plan of the test's fast device with DB slots and no cache: the layout
// whose slots reach Rook as logical volumes.
func slotPlan(t *testing.T) *prismv1.NodePlan {
	return &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{planFor(t, prismv1.CacheNone)}}
}

func (h *fakeHost) reconcileVolumes(p *prismv1.NodePlan, mode prismv1.PolicyMode) Result {
	return h.volumeRunner().Reconcile(context.Background(), p, h.inventory(), mode)
}

// volumeStates lists each partition's volume state ("-" for none).
func volumeStates(ps []prismv1.PartitionStatus) string {
	var s []string
	for _, p := range ps {
		if p.Volume == nil {
			s = append(s, "-")
			continue
		}
		s = append(s, string(p.Volume.State))
	}
	return strings.Join(s, ",")
}

// lvmCommands are the LVM commands that change something, as run.
func (h *fakeHost) lvmCommands() []string {
	var out []string
	for _, a := range h.ran {
		switch a[0] {
		case "pvcreate", "vgcreate", "lvcreate", "lvchange":
			out = append(out, strings.Join(a, " "))
		}
	}
	return out
}

// slotCommands are the LVM commands that make slot n's volume on a host that activates.
func slotCommands(t *testing.T, n int) []string {
	fd := planFor(t, prismv1.CacheNone)
	s := fd.Slots[n-1]
	vg, lv, err := prismv1.DBVolumeNames(fd.StablePath, s.Index)
	if err != nil {
		t.Fatal(err)
	}
	part := "/dev/nvme0n1p" + strconv.Itoa(int(s.Partition.Number))
	guid := ""
	for _, p := range gptPartitions(t) {
		if p.Number == int(s.Partition.Number) {
			guid = p.UUID
		}
	}
	tags := "--addtag " + lvm.TagDBSlot + " --addtag " + lvm.TagPartUUID(guid)
	pv, err := lvm.PVUUID(guid)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"pvcreate --uuid " + pv + " --norestorefile " + part, "vgcreate " + tags + " " + vg + " " + part, "lvcreate --name " + lv + " --extents 100%FREE " + tags + " " + vg}
}

// gptPartitions is the table Prism writes for the test plan, read back from a fresh host.
func gptPartitions(t *testing.T) []struct {
	Number int
	UUID   string
} {
	h := newFakeHost(t)
	h.reconcile(slotPlan(t))
	var out []struct {
		Number int
		UUID   string
	}
	for _, p := range h.table().Partitions {
		out = append(out, struct {
			Number int
			UUID   string
		}{p.Number, p.UUID})
	}
	return out
}

func TestVolumesAreMadeThenOnlyRead(t *testing.T) {
	h, _ := volumeHost(t)
	res := h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
	if got := states(res.Partitions) + " " + volumeStates(res.Partitions); got != "Ready,Ready,Ready Ready,Ready,Ready" || !res.Changed {
		t.Fatalf("first run: %s changed %t: %+v", got, res.Changed, res.Partitions)
	}
	var want []string
	for n := 1; n <= 3; n++ {
		want = append(want, slotCommands(t, n)...)
	}
	if got := h.lvmCommands(); !slices.Equal(got, want) {
		t.Fatalf("LVM commands:\n got %q\nwant %q", got, want)
	}
	fd := planFor(t, prismv1.CacheNone)
	for i, p := range res.Partitions[:3] {
		v := p.Volume
		if v.Path != prismv1.DBVolumePath(fd.StablePath, fd.Slots[i].Index) || v.SizeBytes != 2*gib-4<<20 || !strings.Contains(v.Message, v.Path) {
			t.Errorf("slot %d: volume %+v", i, v)
		}
	}
	h.ran = nil
	res = h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
	if got := volumeStates(res.Partitions); got != "Ready,Ready,Ready" || res.Changed || len(h.mutations()) != 0 {
		t.Fatalf("second run: %s changed %t, ran %q", got, res.Changed, h.mutations())
	}
}

func TestVolumesDryRunChangesNothing(t *testing.T) {
	h, _ := volumeHost(t)
	// Nothing is made in a dry run of a blank device: no partition is Ready, so no volume is
	// reported.
	res := h.reconcileVolumes(slotPlan(t), prismv1.ModeDryRun)
	if got := volumeStates(res.Partitions); got != "-,-,-" || len(h.mutations()) != 0 {
		t.Fatalf("blank device: %s, ran %q", got, h.mutations())
	}
	// Partitions made by an agent that made no volumes: the dry run says what it would make.
	h.reconcile(slotPlan(t))
	h.ran = nil
	res = h.reconcileVolumes(slotPlan(t), prismv1.ModeDryRun)
	if got := volumeStates(res.Partitions); got != "Pending,Pending,Pending" || res.Changed || len(h.mutations()) != 0 {
		t.Fatalf("partitioned device: %s changed %t, ran %q", got, res.Changed, h.mutations())
	}
	if m := res.Partitions[0].Volume.Message; !strings.HasPrefix(m, "dry run: ") || !strings.Contains(m, "physical volume") {
		t.Fatalf("message %q", m)
	}
}

// A stop after any step (as a crash between two LVM commands) resumes: the next run makes
// what is missing, and across both runs each command ran exactly once.
func TestVolumesResumeAfterEveryStep(t *testing.T) {
	var all []string
	for n := 1; n <= 3; n++ {
		all = append(all, slotCommands(t, n)...)
	}
	for k := 3; k <= 2+len(all); k++ { // 1 and 2 are the table write and partx
		h, _ := volumeHost(t)
		r := h.volumeRunner()
		r.StepLimit = k
		res := r.Reconcile(context.Background(), slotPlan(t), h.inventory(), prismv1.ModeApply)
		if got := states(res.Partitions); got != "Ready,Ready,Ready" {
			t.Fatalf("k=%d: partitions %s", k, got)
		}
		if vs := volumeStates(res.Partitions); !strings.Contains(vs, "Pending") && k < 2+len(all) {
			t.Fatalf("k=%d: volumes %s after the stop", k, vs)
		}
		res = h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
		if got := volumeStates(res.Partitions); got != "Ready,Ready,Ready" {
			t.Fatalf("k=%d: after resuming %s: %+v", k, got, res.Partitions)
		}
		if got := h.lvmCommands(); !slices.Equal(got, all) {
			t.Fatalf("k=%d: commands over both runs:\n got %q\nwant %q", k, got, all)
		}
	}
}

func TestVolumesActivateAnInactiveLV(t *testing.T) {
	h, l := volumeHost(t)
	l.noAutoActivate = true
	res := h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
	if got := volumeStates(res.Partitions); got != "Ready,Ready,Ready" {
		t.Fatalf("%s: %+v", got, res.Partitions)
	}
	got := h.lvmCommands()
	if len(got) != 12 || !strings.HasPrefix(got[3], "lvchange --activate y prism-db-") {
		t.Fatalf("commands %q", got)
	}
}

// After a reboot on a host that does not autoactivate, the pass that activates the LVs changes
// the kernel's view (Changed: the devices are inventoried again) but writes nothing (Wrote:
// the agent records no created event); the pass that made them wrote.
func TestVolumesActivatedAgainWriteNothing(t *testing.T) {
	h, l := volumeHost(t)
	res := h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
	if !res.Changed || !res.Wrote {
		t.Fatalf("the pass that made the table and volumes: changed %t, wrote %t", res.Changed, res.Wrote)
	}
	for _, lv := range l.lvs {
		lv.active = false
	}
	h.ran = nil
	res = h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
	if got := volumeStates(res.Partitions); got != "Ready,Ready,Ready" {
		t.Fatalf("%s: %+v", got, res.Partitions)
	}
	if got := h.lvmCommands(); len(got) != 3 || !strings.HasPrefix(got[0], "lvchange --activate y ") {
		t.Fatalf("commands %q, want three activations", got)
	}
	if !res.Changed || res.Wrote {
		t.Errorf("activation only: changed %t, wrote %t; want changed and not written", res.Changed, res.Wrote)
	}
}

func TestVolumesRefuseWhatIsNotProvenOrNotPrisms(t *testing.T) {
	fd := planFor(t, prismv1.CacheNone)
	for _, tc := range []struct {
		name string
		// before changes the host after the partitions exist, before the volume run.
		before func(h *fakeHost, l *fakeLVM)
		want   string
		msg    string
	}{
		{"data appeared in a slot", func(h *fakeHost, l *fakeLVM) {
			h.put(fd.Slots[0].Partition.StartBytes+4096, []byte("not Prism's"))
		}, "Refused,Ready,Ready", "not proven empty: it holds non-zero bytes at offset 4096"},
		// lvcreate zeroes the LV's first 4 KiB, 1 MiB into the partition (the PV's data
		// start): outside the first MiB, inside what the proof before pvcreate reads.
		{"data where lvcreate zeroes the LV's first block", func(h *fakeHost, l *fakeLVM) {
			h.put(fd.Slots[1].Partition.StartBytes+mib+100, []byte("not Prism's"))
		}, "Ready,Refused,Ready", "not proven empty: it holds non-zero bytes at offset 1048676"},
		{"another VG on the partition", func(h *fakeHost, l *fakeLVM) {
			l.pvs = append(l.pvs, &fakePV{name: "/dev/nvme0n1p2", uuid: "pv-data", dev: "259:2", vg: "data"})
			l.vgs = append(l.vgs, &fakeVG{name: "data", size: 1 << 30})
		}, "Ready,Refused,Ready", "physical volume of the volume group data"},
		{"an OSD that ceph-volume made from the partition", func(h *fakeHost, l *fakeLVM) {
			l.pvs = append(l.pvs, &fakePV{name: "/dev/nvme0n1p3", uuid: "pv-ceph", dev: "259:3", vg: "ceph-7d1f"})
			l.vgs = append(l.vgs, &fakeVG{name: "ceph-7d1f", size: 1 << 30})
			l.lvs = append(l.lvs, &fakeLV{name: "osd-db-1", vg: "ceph-7d1f", size: 1 << 30, active: true, tags: []string{"ceph.osd_id=3", "ceph.type=db"}})
		}, "Ready,Ready,PartitionInUse", "ceph-volume's volume group ceph-7d1f"},
		{"a raw OSD's BlueStore label on the partition", func(h *fakeHost, l *fakeLVM) {
			h.put(fd.Slots[0].Partition.StartBytes, []byte("bluestore block device\n"))
		}, "PartitionInUse,Ready,Ready", "BlueStore label and no LVM"},
		{"the slot's VG name taken elsewhere", func(h *fakeHost, l *fakeLVM) {
			vg, _, _ := prismv1.DBVolumeNames(fd.StablePath, fd.Slots[1].Index)
			l.pvs = append(l.pvs, &fakePV{name: "/dev/sdz1", uuid: "pv-sdz1", dev: "8:1", vg: vg})
			l.vgs = append(l.vgs, &fakeVG{name: vg, size: 1 << 30})
		}, "Ready,Refused,Ready", "exists on /dev/sdz1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, l := volumeHost(t)
			h.reconcile(slotPlan(t)) // partitions, no volumes
			tc.before(h, l)
			h.ran = nil
			res := h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
			if got := volumeStates(res.Partitions); got != tc.want {
				t.Fatalf("%s, want %s: %+v", got, tc.want, res.Partitions)
			}
			for _, p := range res.Partitions {
				if p.Volume != nil && p.Volume.State != prismv1.DBVolumeReady {
					if !strings.Contains(p.Volume.Message, tc.msg) {
						t.Errorf("message %q lacks %q", p.Volume.Message, tc.msg)
					}
					if slices.ContainsFunc(h.lvmCommands(), func(c string) bool {
						return strings.Contains(c, "/dev/nvme0n1p"+strconv.Itoa(int(p.Number)))
					}) {
						t.Errorf("ran LVM on partition %d: %q", p.Number, h.lvmCommands())
					}
				}
			}
		})
	}
}

func TestVolumesReportAFailedCommandAndRecover(t *testing.T) {
	h, _ := volumeHost(t)
	h.fail["vgcreate"] = &hostexec.ExitError{ExitCode: 5, Stderr: "  /run/lock/lvm/V_x:aux: open failed: Read-only file system"}
	res := h.reconcileVolumes(slotPlan(t), prismv1.ModeApply)
	if got := volumeStates(res.Partitions); got != "Failed,Failed,Failed" || !strings.Contains(res.Partitions[0].Volume.Message, "CreateVG failed") {
		t.Fatalf("%s: %+v", got, res.Partitions[0].Volume)
	}
	delete(h.fail, "vgcreate")
	if got := volumeStates(h.reconcileVolumes(slotPlan(t), prismv1.ModeApply).Partitions); got != "Ready,Ready,Ready" {
		t.Fatalf("after the failure: %s", got)
	}
	// A failed report fails the volume, never reads as "nothing there".
	h.fail["pvs"] = &hostexec.ExitError{ExitCode: 5, Stderr: "  Locking failed"}
	h.ran = nil
	if got := volumeStates(h.reconcileVolumes(slotPlan(t), prismv1.ModeApply).Partitions); got != "Failed,Failed,Failed" || len(h.lvmCommands()) != 0 {
		t.Fatalf("failed report: %s, ran %q", got, h.lvmCommands())
	}
}

// A node with a cache has its OSDs made on claims, by raw prepare on the slot partitions
// themselves (decision 0010): the agent leaves them bare, though it makes volumes elsewhere.
func TestVolumesAreNotMadeOnANodeWithACache(t *testing.T) {
	h, _ := volumeHost(t)
	res := h.reconcileVolumes(nodePlan(t), prismv1.ModeApply)
	if got := states(res.Partitions) + " " + volumeStates(res.Partitions); got != "Ready,Ready,Ready,Ready -,-,-,-" {
		t.Fatalf("got %s: %+v", got, res.Partitions)
	}
	if got := h.lvmCommands(); len(got) != 0 {
		t.Fatalf("LVM ran on a node with a cache: %q", got)
	}
}
