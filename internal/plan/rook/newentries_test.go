package rook

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// A new drive of a node that has OSD entries is written only once Ceph's answers say no OSD is
// destroyed under the node's CRUSH host: Rook v1.21 and later would prepare it as that id
// (decision 0061). The answers are the probe's, recorded on Ceph 16 (testdata/probe/ceph16)
// and Ceph 20.2.4 (testdata/ceph20, Ceph's own shape).
func TestGateHoldsNewDrivesOnADestroyedID(t *testing.T) {
	now := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC)
	fresh := now.Add(-time.Minute)
	q0, q3 := recordedQLC+"0", recordedQLC+"3"
	slot := func(i string) RookDeviceConfig {
		return RookDeviceConfig{MetadataDevice: "/dev/prism-db-a/prism-db-0" + i}
	}
	// q0 has its OSD; q3 is the new drive (a hot add, or the data-disk runbook's step 4).
	planned := []RookNode{{Name: recordedNode, Devices: []RookDevice{{Name: q0, Config: slot("0")}, {Name: q3, Config: slot("3")}}}}
	existing := []any{map[string]any{"name": recordedNode, "devices": []any{
		map[string]any{"name": q0, "config": map[string]any{"metadataDevice": slot("0").MetadataDevice}}}}}
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	with := func(change func(*CephAnswers)) map[string]CephAnswers {
		a := recordedAnswers(t, "ceph16", "purged", fresh)
		change(&a)
		return map[string]CephAnswers{recordedNode: a}
	}
	tests := []struct {
		name    string
		answers map[string]CephAnswers
		// held is "" when q3 is written, else what its hold says.
		held string
	}{
		{"none destroyed (Ceph 16, after the purge): written", with(func(*CephAnswers) {}), ""},
		{"none destroyed (Ceph 20.2.4, Ceph's shape): written", with(func(a *CephAnswers) { a.Destroyed = read("ceph20/purged/osd-tree-from-destroyed.json") }), ""},
		{"another question failed, the destroyed one answered: written", with(func(a *CephAnswers) {
			a.SafeToDestroy, a.Err = nil, "safe-to-destroy: exit 1: "+string(read("probe/ceph16/safe-to-destroy-no-bucket.txt"))
		}), ""},
		{"osd.0 destroyed (Ceph 16): held", with(func(a *CephAnswers) { a.Destroyed = read("probe/ceph16/destroyed-destroyed.json") }),
			"Ceph has osd.0 destroyed under prismtest-node's CRUSH host, and Rook v1.21 or later prepares a new drive of the node as a destroyed id, " +
				"with the DB ceph-volume lvm list finds for that id and not the drive's slot: once it is safe to destroy, purge it " +
				"(ceph osd purge 0 --yes-i-really-mean-it; docs/runbooks/replace-data-disk.md step 2)"},
		{"osd.2 destroyed (Ceph 20.2.4): held", with(func(a *CephAnswers) { a.Destroyed = read("ceph20/destroyed-stale/osd-tree-from-destroyed.json") }),
			"Ceph has osd.2 destroyed under prismtest-node's CRUSH host, ...(ceph osd purge 2 --yes-i-really-mean-it; docs/runbooks/replace-data-disk.md step 2)"},
		{"no answers yet: held", nil, "no answers from Ceph for prismtest-node yet"},
		{"answers older than 5 min: held", map[string]CephAnswers{recordedNode: recordedAnswers(t, "ceph16", "purged", now.Add(-6*time.Minute))},
			"Ceph's answers for prismtest-node are from 2026-12-07T13:54:00Z, older than 5m0s"},
		{"the destroyed question failed (Ceph 16, a missing bucket while osd.0 is destroyed): held", with(func(a *CephAnswers) {
			a.Destroyed, a.Err = nil, "destroyed: exit 1: "+string(read("probe/ceph16/destroyed-no-bucket-destroyed.txt"))
		}), "Ceph could not say whether an OSD is destroyed under prismtest-node's CRUSH host: destroyed: exit 1: ceph osd tree-from no-such-host destroyed: exit 2: " +
			"Error ENOENT: bucket 'no-such-host' does not exist; ceph osd tree destroyed: ValueError: the cluster has OSDs destroyed: [0]"},
		{"a missing bucket, none destroyed in the cluster (Ceph 16): written", with(func(a *CephAnswers) { a.Destroyed = read("probe/ceph16/destroyed-no-bucket.json") }), ""},
		{"a probe made before the destroyed question: held", with(func(a *CephAnswers) { a.Destroyed, a.Err = nil, "destroyed: did not finish" }),
			"Ceph could not say whether an OSD is destroyed under prismtest-node's CRUSH host: destroyed: did not finish"},
		{"an answer cut by the kubelet: held", with(func(a *CephAnswers) { a.Destroyed = a.Destroyed[:5] }), "ceph osd tree-from destroyed: unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := GateReplacements(GateInput{Entries: planned, Existing: existing, Answers: tc.answers, Now: now})
			written := map[string]string{}
			for _, d := range got.Entries[0].Devices {
				written[d.Name] = d.Config.MetadataDevice
			}
			if written[q0] != slot("0").MetadataDevice {
				t.Errorf("the existing OSD's entry changed: %v", written)
			}
			_, isWritten := written[q3]
			if tc.held == "" {
				if !isWritten || written[q3] != slot("3").MetadataDevice || len(got.HeldNew) > 0 || len(got.Awaiting) > 0 {
					t.Errorf("new drive: written %v, held %q, awaiting %v; want it written", isWritten, got.HeldNew, got.Awaiting)
				}
				return
			}
			if isWritten {
				t.Fatalf("new drive written with %s; want it held: %s", written[q3], tc.held)
			}
			want := recordedNode + " " + q3 + ": a new drive; waiting: " + tc.held
			head, prefix := strings.CutSuffix(want, "...")
			if before, after, cut := strings.Cut(want, "..."); cut && !prefix {
				head = before
				if len(got.HeldNew) != 1 || !strings.HasSuffix(got.HeldNew[0], after) {
					t.Errorf("held %q, want it to end with %q", got.HeldNew, after)
				}
			}
			if len(got.HeldNew) != 1 || !strings.HasPrefix(got.HeldNew[0], head) || (!strings.Contains(want, "...") && got.HeldNew[0] != want) {
				t.Errorf("held %q\nwant %q", got.HeldNew, want)
			}
			if a := got.Awaiting[recordedNode]; len(a) != 1 || a[0].Path != q3 {
				t.Errorf("awaiting %v, want the probe to ask about %s", got.Awaiting, q3)
			}
			// Only a hold naming destroyed ids is the admin's to end (the Event's).
			if d := got.Destroyed[recordedNode]; (d != "") != strings.HasPrefix(tc.held, "Ceph has osd.") || (d != "" && !strings.HasSuffix(got.HeldNew[0], d)) {
				t.Errorf("destroyed hold %q of held %q", d, got.HeldNew)
			}
			if len(got.Held) > 0 || got.Released != nil {
				t.Errorf("re-created OSDs: held %q, released %v; want none", got.Held, got.Released)
			}
		})
	}
}

// A node with no entry in the CephCluster yet (a new node, or a new cluster) has no OSD under a
// CRUSH host of its own: its drives are written without waiting for Ceph, as before.
func TestGateWritesANewNodeWithoutAnswers(t *testing.T) {
	planned := []RookNode{{Name: recordedNode, Devices: []RookDevice{{Name: recordedQLC + "0", Config: RookDeviceConfig{MetadataDevice: "/dev/prism-db-a/prism-db-00"}}}}}
	existing := []any{map[string]any{"name": "other-node", "devices": []any{map[string]any{"name": "/dev/sdb"}}}}
	got := GateReplacements(GateInput{Entries: planned, Existing: existing, Now: time.Now()})
	if len(got.Entries) != 1 || len(got.Entries[0].Devices) != 1 || len(got.HeldNew) > 0 || len(got.Awaiting) > 0 {
		t.Errorf("entries %+v, held %q, awaiting %v; want the new node's drive written", got.Entries, got.HeldNew, got.Awaiting)
	}
}

// When every planned drive of a node with an entry is new and held, the node keeps the entry
// the CephCluster has: an entry without devices would not mean "no OSD" to Rook.
func TestGateKeepsTheEntryOfANodeWhoseDrivesAllWait(t *testing.T) {
	planned := []RookNode{{Name: recordedNode, Config: map[string]string{"deviceClass": "qlc"},
		Devices: []RookDevice{{Name: recordedQLC + "3", Config: RookDeviceConfig{MetadataDevice: "/dev/prism-db-a/prism-db-03"}}}}}
	existing := []any{map[string]any{"name": recordedNode, "config": map[string]any{"deviceClass": "hdd"}, "devices": []any{
		map[string]any{"name": "/dev/sdz", "config": map[string]any{"metadataDevice": "/dev/sdy1", "osdsPerDevice": "1"}}}}}
	got := GateReplacements(GateInput{Entries: planned, Existing: existing, Now: time.Now()})
	want := RookNode{Name: recordedNode, Config: map[string]string{"deviceClass": "hdd"},
		Devices: []RookDevice{{Name: "/dev/sdz", Config: DeviceConfigOf(map[string]string{"metadataDevice": "/dev/sdy1", "osdsPerDevice": "1"})}}}
	if len(got.Entries) != 1 || fmt.Sprint(got.Entries[0]) != fmt.Sprint(want) || len(got.HeldNew) != 1 {
		t.Errorf("entries %+v, held %q; want the existing entry %+v and the new drive held", got.Entries, got.HeldNew, want)
	}
}
