package drill

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/runbook"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunbookRunsAsWritten: every command of docs/runbooks/replace-data-disk.md this drill runs
// has a place to run, a repeat the drill knows, and every placeholder filled from a victim with
// its new OSD; and the drill runs Rook's steps (kubectl) that test/ceph skips.
func TestRunbookRunsAsWritten(t *testing.T) {
	rb, err := runbook.Parse(string(readFile(t, filepath.Join("../../../docs/runbooks", Runbook))))
	if err != nil {
		t.Fatal(err)
	}
	v := Victim{OSD: 2, Node: "prism-guest", Slot: "/dev/prism-db-ce47c0db9445-02/prism-db-02", RookNamespace: "rook-ceph", NewOSD: 3}
	if err := rb.CheckValues(v.Values()); err != nil {
		t.Fatal(err)
	}
	where := map[Where]int{}
	for _, s := range rb.Steps {
		for _, b := range s.Blocks {
			if b.SkippedBy(Name) != "" {
				continue
			}
			for _, c := range b.Commands {
				argv, err := c.Argv(v.Values())
				if err != nil {
					t.Errorf("step %d: %v", s.Number, err)
					continue
				}
				w, err := Route(argv)
				if err != nil {
					t.Errorf("step %d, line %d: %v", s.Number, c.Line, err)
				}
				if _, err := RepeatOf(c.Comment); err != nil {
					t.Errorf("step %d, line %d: %v", s.Number, c.Line, err)
				}
				where[w]++
			}
		}
	}
	// ceph: out, safe-to-destroy, purge (step 2, decision 0061), metadata; kubectl: scale,
	// delete, get storagenode, prism selection; ceph-volume: zap.
	if want := map[Where]int{InOperatorPod: 4, Kubectl: 4, OnNode: 1}; !reflect.DeepEqual(where, want) {
		t.Errorf("commands by where they run %v, want %v", where, want)
	}
}

func TestRoute(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		want    Where
		wantErr string
	}{
		{[]string{"ceph", "osd", "out", "2"}, InOperatorPod, ""},
		{[]string{"kubectl", "prism", "selection"}, Kubectl, ""},
		{[]string{"ceph-volume", "lvm", "zap", "/dev/vg/lv"}, OnNode, ""},
		{[]string{"sgdisk", "--zap-all", "/dev/nvme3n1"}, 0, `the e2e drill cannot run "sgdisk"`},
		{nil, 0, "an empty command"},
	} {
		got, err := Route(c.argv)
		if got != c.want || (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("Route(%q) = %v, %v; want %v, %q", c.argv, got, err, c.want, c.wantErr)
		}
	}
}

func TestValues(t *testing.T) {
	v := Victim{OSD: 0, Node: "n", Slot: "/dev/vg/lv", RookNamespace: "rook-ceph", NewOSD: -1}
	want := map[string]string{"OSD_ID": "0", "NODE": "n", "SLOT_DEVICE": "/dev/vg/lv", "ROOK_NAMESPACE": "rook-ceph"}
	if got := v.Values(); !reflect.DeepEqual(got, want) {
		t.Errorf("Values = %v, want %v (no $NEW_OSD_ID before it is known)", got, want)
	}
	v.NewOSD = 0
	if got := v.Values()["NEW_OSD_ID"]; got != "0" {
		t.Errorf("NEW_OSD_ID = %q, want 0 (Ceph may give the destroyed id back)", got)
	}
}

// TestSlotDevice on the partitions of the chain's recorded StorageNode (volumes Ready), and on
// the two other volume states.
func TestSlotDevice(t *testing.T) {
	var sn prismv1.StorageNode
	if err := json.Unmarshal(readFile(t, "../../../internal/plan/decide/testdata/chain-2026-11-26/hot-added/storagenode.json"), &sn); err != nil {
		t.Fatal(err)
	}
	if got, err := SlotDevice(sn.Status.Partitions[2]); err != nil || got != "/dev/prism-db-ce47c0db9445-02/prism-db-02" {
		t.Errorf("SlotDevice(Ready volume) = %q, %v", got, err)
	}
	p := sn.Status.Partitions[0]
	p.Volume = &prismv1.DBVolumeStatus{State: prismv1.DBVolumePartitionInUse}
	if got, err := SlotDevice(p); err != nil || got != "/dev/disk/by-id/nvme-INTEL_SSDPF21Q800GB_PRISM-E2E-FAST-part1" {
		t.Errorf("SlotDevice(PartitionInUse) = %q, %v; want the partition", got, err)
	}
	p.Volume = nil
	if got, err := SlotDevice(p); err == nil {
		t.Errorf("SlotDevice(no volume) = %q, want an error", got)
	}
}

func TestRepeatOf(t *testing.T) {
	for _, c := range []struct {
		comment string
		want    Repeat
		err     bool
	}{
		{"", Once, false},
		{"repeat until it exits 0", UntilExit0, false},
		{"until the slot's dbContent is Empty", UntilSlotEmpty, false},
		{"the new OSD's metadata", Once, false},
		{"repeat until HEALTH_OK", Once, true},
		{"until the OSD is up", Once, true},
	} {
		got, err := RepeatOf(c.comment)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("RepeatOf(%q) = %v, %v; want %v, error %v", c.comment, got, err, c.want, c.err)
		}
	}
}

// TestSlotContent reads the StorageNode as `kubectl get -o yaml` prints it: the chain's recorded
// one, whose agent predates dbContent, and the same with the slot read InUse and then Empty.
func TestSlotContent(t *testing.T) {
	var sn prismv1.StorageNode
	if err := json.Unmarshal(readFile(t, "../../../internal/plan/decide/testdata/chain-2026-11-26/hot-added/storagenode.json"), &sn); err != nil {
		t.Fatal(err)
	}
	// The suite's typed client leaves kind out of what it saved; kubectl prints it.
	sn.APIVersion, sn.Kind = prismv1.GroupVersion.String(), "StorageNode"
	fast := "/dev/disk/by-id/nvme-INTEL_SSDPF21Q800GB_PRISM-E2E-FAST"
	asYAML := func() []byte {
		b, err := yaml.Marshal(&sn)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got, _, err := SlotContent(asYAML(), fast, 2); err != nil || got != "" {
		t.Errorf("recorded: %q, %v; want no dbContent (an agent before decision 0037)", got, err)
	}
	sn.Status.Partitions[1].DBContent, sn.Status.Partitions[1].DBFound = prismv1.DBSlotInUse, "ceph_bluestore"
	if got, found, err := SlotContent(asYAML(), fast, 2); err != nil || got != prismv1.DBSlotInUse || found != "ceph_bluestore" {
		t.Errorf("InUse: %q, %q, %v", got, found, err)
	}
	sn.Status.Partitions[1].DBContent, sn.Status.Partitions[1].DBFound = prismv1.DBSlotEmpty, ""
	if got, _, err := SlotContent(asYAML(), fast, 2); err != nil || got != prismv1.DBSlotEmpty {
		t.Errorf("Empty: %q, %v", got, err)
	}
	if _, _, err := SlotContent(asYAML(), fast, 9); err == nil || !strings.Contains(err.Error(), "no status.partitions entry for partition 9") {
		t.Errorf("absent partition: %v", err)
	}
	if _, _, err := SlotContent([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: x}\n"), fast, 2); err == nil || !strings.Contains(err.Error(), `a "Node", not a StorageNode`) {
		t.Errorf("a Node: %v", err)
	}
}

// TestPGsClean on Ceph's own answers (internal/plan/rook/testdata/ceph16, recorded).
func TestPGsClean(t *testing.T) {
	for _, c := range []struct {
		state   string
		clean   bool
		summary string
	}{
		{"healthy", true, "17 pgs: 17 active+clean"},
		{"recovering", false, "17 pgs: 1 active+undersized+remapped, 12 active+recovery_wait+undersized+degraded+remapped, 4 active+clean"},
		{"destroyed", true, "17 pgs: 17 active+clean"},
	} {
		clean, summary, err := PGsClean(readFile(t, filepath.Join("../../../internal/plan/rook/testdata/ceph16", c.state, "pg-stat.json")))
		if err != nil || clean != c.clean || !sameWords(summary, c.summary) {
			t.Errorf("%s: %v, %q, %v; want %v, %q", c.state, clean, summary, err, c.clean, c.summary)
		}
	}
	for _, bad := range []string{`{}`, `{"pg_summary":{"num_pg_by_state":[]}}`, `not json`} {
		if _, _, err := PGsClean([]byte(bad)); err == nil {
			t.Errorf("PGsClean(%s): no error", bad)
		}
	}
	if clean, _, err := PGsClean([]byte(`{"pg_summary":{"num_pg_by_state":[],"num_pgs":0}}`)); err != nil || clean {
		t.Errorf("no PG at all: clean %v, %v; want not clean", clean, err)
	}
}

// sameWords: the same comma-separated parts after the count, in any order.
func sameWords(a, b string) bool {
	ha, ta, _ := strings.Cut(a, ": ")
	hb, tb, _ := strings.Cut(b, ": ")
	pa, pb := strings.Split(ta, ", "), strings.Split(tb, ", ")
	if ha != hb || len(pa) != len(pb) {
		return false
	}
	for _, p := range pa {
		if !strings.Contains(", "+tb+", ", ", "+p+", ") {
			return false
		}
	}
	return true
}

// TestReadOSDMetadata on the chain's recorded metadata of the hot-added drive's OSD (Ceph
// 20.2.4): one object, as `ceph osd metadata 1` prints it.
func TestReadOSDMetadata(t *testing.T) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(readFile(t, "../../../internal/plan/decide/testdata/chain-2026-11-26/hot-added/osd-metadata.json"), &all); err != nil {
		t.Fatal(err)
	}
	got, err := ReadOSDMetadata(all["1"])
	want := OSDDevices{ID: 1, Data: []string{"nvme3n1"}, DB: []string{"nvme1n1"}, Dedicated: true, DBBytes: 4290772992}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadOSDMetadata = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{`[]`, `{"bluefs_db_devices":"x"}`, `{"id":1,"bluefs_db_size":"many"}`} {
		if _, err := ReadOSDMetadata([]byte(bad)); err == nil {
			t.Errorf("ReadOSDMetadata(%s): no error", bad)
		}
	}
}

// TestVolumes on lvs's report of a Prism slot beside a foreign LV (internal/host/lvm testdata).
func TestVolumes(t *testing.T) {
	out := readFile(t, "../../../internal/host/lvm/testdata/foreign-lvs.json")
	got, err := Volumes(out, []string{"/dev/prism-db-49bd38895b20-00/prism-db-00"})
	want := map[string]string{"/dev/prism-db-49bd38895b20-00/prism-db-00": "Vf18CS-bozV-FmzO-yywv-s0sr-o3IS-wsX365 prism.storage.io/db-slot,prism.storage.io/partuuid=8f3c1e52-6a0b-4c1d-9e2f-0123456789ab"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Volumes = %v, %v; want %v", got, err, want)
	}
	if _, err := Volumes(out, []string{"/dev/prism-db-49bd38895b20-01/prism-db-01"}); err == nil {
		t.Error("a volume lvs does not list: no error")
	}
}

func TestChanged(t *testing.T) {
	before := map[string]string{"table": "t1", "/dev/a/lv": "u1 ceph.osd_id=0", "/dev/b/lv": "u2 ceph.osd_id=1"}
	after := map[string]string{"table": "t1", "/dev/a/lv": "u1 ", "/dev/c/lv": "u3"}
	want := []string{
		`/dev/a/lv: "u1 ", before the drill "u1 ceph.osd_id=0"`,
		`/dev/b/lv: gone (was "u2 ceph.osd_id=1")`,
		`/dev/c/lv: new ("u3")`,
	}
	if got := Changed(before, after); !reflect.DeepEqual(got, want) {
		t.Errorf("Changed = %q, want %q", got, want)
	}
	if got := Changed(before, before); got != nil {
		t.Errorf("Changed(same) = %q", got)
	}
}

// FuzzReaders: whatever kubectl, Ceph, LVM or the kernel's block stat print, the readers answer or refuse without a
// panic; a clean pg stat has at least one PG and names active+clean; an OSD's metadata read
// names only non-empty devices.
func FuzzReaders(f *testing.F) {
	f.Add([]byte(`{"pg_summary":{"num_pg_by_state":[{"name":"active+clean","num":17}],"num_pgs":17}}`))
	f.Add([]byte(`{"id":1,"bluestore_bdev_devices":"nvme3n1","bluefs_db_devices":"nvme1n1,","bluefs_dedicated_db":"1","bluefs_db_size":"4290772992"}`))
	f.Add([]byte("apiVersion: prism.storage.io/v1alpha1\nkind: StorageNode\nstatus: {partitions: [{device: /dev/f, number: 2, dbContent: Empty}]}\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		if clean, summary, err := PGsClean(out); err == nil && clean && !strings.Contains(summary, "active+clean") {
			t.Fatalf("clean without active+clean: %q", summary)
		}
		if md, err := ReadOSDMetadata(out); err == nil {
			for _, d := range append(md.Data, md.DB...) {
				if d == "" {
					t.Fatalf("an empty device name read from %q", out)
				}
			}
		}
		if n, err := SectorsWritten(out); err == nil && n < 0 {
			t.Fatalf("negative sectors %d from %q", n, out)
		}
		_, _, _ = SlotContent(out, "/dev/f", 2)
		_, _ = Volumes(out, []string{"/dev/vg/lv"})
	})
}

// TestSectorsWritten on stat lines this machine's kernel (6.18) printed for a loop device and a
// disk, 17 fields each, and on lines it refuses.
func TestSectorsWritten(t *testing.T) {
	for _, c := range []struct {
		stat string
		want int64
		err  bool
	}{
		{" 8485168     3385 202571663  4620544  4305173  6242240 183188026  2031329        0  2268532  7731150     1195        0 3559142664      522  2066400  1078753\n", 183188026, false},
		{" 4125941   206426 289066671  6075790 18839801  2041495 765053432  9205795        0  1751244 15930504  3464908      234 642608152   377402  4247084   271515\n", 765053432, false},
		{"1 2 3 4 5 6 7 8 9 10 11", 7, false},
		{"1 2 3 4 5 6 7", 0, true},
		{"1 2 3 4 5 6 x 8 9 10 11", 0, true},
		{"1 2 3 4 5 6 -7 8 9 10 11", 0, true},
	} {
		got, err := SectorsWritten([]byte(c.stat))
		if got != c.want || (err != nil) != c.err {
			t.Errorf("SectorsWritten(%q) = %d, %v; want %d, error %v", c.stat, got, err, c.want, c.err)
		}
	}
}

func TestVolumeNames(t *testing.T) {
	vg, lv, err := VolumeNames("/dev/prism-db-ce47c0db9445-03/prism-db-03")
	if err != nil || vg != "prism-db-ce47c0db9445-03" || lv != "prism-db-03" {
		t.Errorf("VolumeNames = %q, %q, %v", vg, lv, err)
	}
	for _, bad := range []string{"prism-db-03", "/dev/mapper", "/dev/vg/lv/x", "/dev//lv", "/sys/vg/lv"} {
		if _, _, err := VolumeNames(bad); err == nil {
			t.Errorf("VolumeNames(%q): no error", bad)
		}
	}
}
