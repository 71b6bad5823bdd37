package rook

import (
	"strings"
	"testing"
	"time"
)

func TestGateReplacements(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	oldFast, newFast := "/dev/disk/by-id/nvme-OLD-part", "/dev/disk/by-id/nvme-NEW-part"
	dev := func(name, meta string) RookDevice {
		return RookDevice{Name: name, Config: RookDeviceConfig{MetadataDevice: meta}}
	}
	// The recorded node (testdata/ceph16) after its fast device was replaced: three OSDs' DBs
	// move; QLC_3 is a new disk. q0 is QLC_0, whose osd.0 was purged.
	q := func(i string) string { return recordedQLC + i }
	planned := []RookNode{{Name: recordedNode, Config: map[string]string{"deviceClass": "qlc"}, Devices: []RookDevice{
		dev(q("0"), newFast+"1"), dev(q("1"), newFast+"2"), dev(q("2"), newFast+"3"), dev(q("3"), newFast+"4"),
	}}}
	existing := []any{map[string]any{"name": recordedNode, "config": map[string]any{"deviceClass": "qlc"}, "devices": []any{
		map[string]any{"name": q("0"), "config": map[string]any{"metadataDevice": oldFast + "1"}},
		map[string]any{"name": q("1"), "config": map[string]any{"metadataDevice": oldFast + "2", "databaseSizeMB": "61440"}},
		map[string]any{"name": q("2"), "config": map[string]any{"metadataDevice": newFast + "3"}}, // already released
	}}}
	kernel := map[string]map[string]string{recordedNode: recordedKernelNames(t)}
	answers := func(state string) map[string]CephAnswers {
		return map[string]CephAnswers{recordedNode: recordedAnswers(t, "ceph16", state, now.Add(-time.Minute))}
	}
	settledLongAgo := now.Add(-time.Hour)
	tests := []struct {
		name        string
		answers     map[string]CephAnswers
		lastChanged time.Time
		last        *Release
		released    string // "" none
		held        []string
	}{
		{"Ceph lets osd.0's drive go, nothing in flight: it goes", answers("purged"), settledLongAgo, nil, q("0"), []string{q("1")}},
		{"PGs inactive: none goes", answers("inactive"), settledLongAgo, nil, "", []string{q("0"), q("1")}},
		{"no answers yet: none goes", nil, settledLongAgo, nil, "", []string{q("0"), q("1")}},
		{"released a minute ago: wait", answers("purged"), settledLongAgo, &Release{recordedNode, q("2"), now.Add(-time.Minute)}, "", []string{q("0"), q("1")}},
		{"released 5 min ago, health unchanged since: wait", answers("purged"), settledLongAgo, &Release{recordedNode, q("2"), now.Add(-5 * time.Minute)}, "", []string{q("0"), q("1")}},
		{"released 5 min ago, health changed since: next", answers("purged"), now.Add(-time.Minute), &Release{recordedNode, q("2"), now.Add(-5 * time.Minute)}, q("0"), []string{q("1")}},
		{"released 20 min ago, health never changed: next", answers("purged"), settledLongAgo, &Release{recordedNode, q("2"), now.Add(-20 * time.Minute)}, q("0"), []string{q("1")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := GateReplacements(GateInput{Entries: planned, Existing: existing, Answers: tc.answers, Kernel: kernel,
				LastChanged: tc.lastChanged, Last: tc.last, Now: now})
			rel := ""
			if got.Released != nil {
				rel = got.Released.Device
				if got.Released.Node != recordedNode || !got.Released.At.Equal(now) {
					t.Errorf("release %+v", got.Released)
				}
			}
			if rel != tc.released {
				t.Errorf("released %q, want %q", rel, tc.released)
			}
			if len(got.Held) != len(tc.held) {
				t.Fatalf("held %q, want %v", got.Held, tc.held)
			}
			for i, h := range tc.held {
				if !strings.HasPrefix(got.Held[i], recordedNode+" "+h+": DB moves from "+oldFast) {
					t.Errorf("held[%d] = %q, want %s", i, got.Held[i], h)
				}
			}
			// Every device is in the entries: released/new/unchanged as planned, held as they were.
			meta := map[string]string{}
			for _, d := range got.Entries[0].Devices {
				meta[d.Name] = d.Config.MetadataDevice
			}
			if meta[q("2")] != newFast+"3" {
				t.Errorf("unchanged device altered: %v", meta)
			}
			// The new disk waits for answers that say no OSD of the node is destroyed (decision 0061).
			if _, in := meta[q("3")]; in != (tc.answers != nil) || (in && meta[q("3")] != newFast+"4") || len(got.HeldNew) != boolInt(!in) {
				t.Errorf("new disk %s: entry %q (written %v), held %q; want it written only with answers", q("3"), meta[q("3")], in, got.HeldNew)
			}
			for _, h := range tc.held {
				if !strings.HasPrefix(meta[h], oldFast) {
					t.Errorf("held %s got %s", h, meta[h])
				}
			}
			if tc.released != "" && meta[tc.released] != newFast+"1" {
				t.Errorf("released %s got %s", tc.released, meta[tc.released])
			}
		})
	}
	// A held device keeps its own entry verbatim (its databaseSizeMB), not the node's settings.
	got := GateReplacements(GateInput{Entries: planned, Existing: existing, Now: now})
	for _, d := range got.Entries[0].Devices {
		if d.Name == q("1") && (d.Config.DatabaseSizeMB != "61440" || d.Config.Get("deviceClass") != "") {
			t.Errorf("held %s entry %v", d.Name, d.Config)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Answers read before the previous release, or before the health change that settled it, say
// nothing about that release's OSD: on the live cluster of test/ceph's fast-device drill, the
// mgr's PG map still said every PG active+clean seconds after the released OSD came up.
func TestGateWaitsForAnswersAfterTheRelease(t *testing.T) {
	now := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	planned, existing := replacing(recordedQLC + "0")
	kernel := map[string]map[string]string{recordedNode: recordedKernelNames(t)}
	last := &Release{Node: recordedNode, Device: recordedQLC + "1", At: now.Add(-4 * time.Minute)}
	for _, tc := range []struct {
		name              string
		answered, changed time.Duration // before now
		want              string        // "" released
	}{
		{"answers after the health change: it goes", time.Minute, 2 * time.Minute, ""},
		{"answers at the health change: it goes", 2 * time.Minute, 2 * time.Minute, ""},
		{"answers between the release and the health change", 3 * time.Minute, 2 * time.Minute,
			"Ceph's answers for prismtest-node are from 2026-12-07T03:57:00Z, before Ceph's health changed after prismtest-node " + recordedQLC + "1 was released at 2026-12-07T03:58:00Z"},
		{"answers before the release", 4*time.Minute + time.Second, 2 * time.Minute, "before Ceph's health changed after"},
	} {
		a := recordedAnswers(t, "ceph16", "purged", now.Add(-tc.answered))
		got := GateReplacements(GateInput{Entries: planned, Existing: existing, Kernel: kernel,
			Answers: map[string]CephAnswers{recordedNode: a}, LastChanged: now.Add(-tc.changed), Last: last, Now: now})
		switch {
		case tc.want == "" && got.Released == nil:
			t.Errorf("%s: held %q, want released", tc.name, got.Held)
		case tc.want != "" && (got.Released != nil || len(got.Held) != 1 || !strings.Contains(got.Held[0], tc.want)):
			t.Errorf("%s: released %+v, held %q; want held with %q", tc.name, got.Released, got.Held, tc.want)
		}
	}
	// Paced by MaxSettle (no health change since): answers after the release judge it.
	last.At = now.Add(-MaxSettle - time.Minute)
	a := recordedAnswers(t, "ceph16", "purged", now.Add(-time.Minute))
	got := GateReplacements(GateInput{Entries: planned, Existing: existing, Kernel: kernel,
		Answers: map[string]CephAnswers{recordedNode: a}, Last: last, Now: now})
	if got.Released == nil {
		t.Errorf("MaxSettle passed, answers a minute old: held %q, want released", got.Held)
	}
}

// After a release the next OSD waits until every PG is active+clean (the released OSD's
// backfill, decision 0058): with the old OSDs purged, safe-to-destroy names no down OSD of the
// node, and only the PG states say that data still moves. Recorded on Ceph 16: osd.0 purged
// (every PG active+clean), and the PGs of the recovering state (active but degraded, remapped).
func TestGateWaitsForTheBackfill(t *testing.T) {
	now := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	planned, existing := replacing(recordedQLC + "0")
	kernel := map[string]map[string]string{recordedNode: recordedKernelNames(t)}
	last := &Release{Node: recordedNode, Device: recordedQLC + "1", At: now.Add(-MaxSettle - time.Minute)}
	moving := recordedAnswers(t, "ceph16", "purged", now.Add(-time.Minute))
	moving.PGStat = readRecorded(t, "recovering", "pg-stat")
	for _, tc := range []struct {
		name string
		a    CephAnswers
		last *Release
		want string // "" released
	}{
		{"PGs moving after a release: held", moving, last,
			"ceph pg stat: 13 PGs not active+clean (active+recovery_wait+undersized+degraded+remapped, active+undersized+remapped): after prismtest-node " + recordedQLC + "1 was released, the next OSD waits until every PG is"},
		{"every PG active+clean after a release: it goes", recordedAnswers(t, "ceph16", "purged", now.Add(-time.Minute)), last, ""},
		{"PGs moving, nothing released before: it goes", moving, nil, ""},
	} {
		got := GateReplacements(GateInput{Entries: planned, Existing: existing, Kernel: kernel,
			Answers: map[string]CephAnswers{recordedNode: tc.a}, Last: tc.last, Now: now})
		switch {
		case tc.want == "" && got.Released == nil:
			t.Errorf("%s: held %q, want released", tc.name, got.Held)
		case tc.want != "" && (got.Released != nil || len(got.Held) != 1 || !strings.HasSuffix(got.Held[0], tc.want)):
			t.Errorf("%s: released %+v, held %q; want held with %q", tc.name, got.Released, got.Held, tc.want)
		}
	}
}

// A held device whose DB size came from its node's config keeps that size when the node's new
// config has none (its other devices moved to logical volumes, which get no size); when the new
// config has one, the device inherits it as before.
func TestGateReplacementsHeldDeviceKeepsItsNodesSize(t *testing.T) {
	now := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	existing := []any{map[string]any{"name": "n1", "config": map[string]any{"databaseSizeMB": "61440"}, "devices": []any{
		map[string]any{"name": "q1", "config": map[string]any{"metadataDevice": "/dev/disk/by-id/nvme-OLD-part1"}},
	}}}
	for _, tc := range []struct {
		name       string
		nodeConfig map[string]string
		want       string
	}{
		{"the new node config has no size", map[string]string{"deviceClass": "qlc"}, "61440"},
		{"the new node config has one", map[string]string{"databaseSizeMB": "30720"}, ""},
	} {
		planned := []RookNode{{Name: "n1", Config: tc.nodeConfig, Devices: []RookDevice{
			{Name: "q1", Config: RookDeviceConfig{MetadataDevice: "/dev/prism-db-0123456789ab-00/prism-db-00"}},
		}}}
		got := GateReplacements(GateInput{Entries: planned, Existing: existing, Now: now})
		d := got.Entries[0].Devices[0]
		if len(got.Held) != 1 || d.Config.MetadataDevice != "/dev/disk/by-id/nvme-OLD-part1" || d.Config.DatabaseSizeMB != tc.want {
			t.Errorf("%s: held %v, device %+v, want databaseSizeMB %q", tc.name, got.Held, d.Config, tc.want)
		}
	}
}

func TestReleaseRoundTrip(t *testing.T) {
	r := Release{Node: "node-a", Device: "/dev/disk/by-id/nvme-QLC_1", At: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)}
	back, err := ParseRelease(r.String())
	if err != nil || back != r {
		t.Fatalf("%q -> %+v, %v", r.String(), back, err)
	}
	for _, bad := range []string{"", "node dev", "node dev yesterday", "a b c d"} {
		if _, err := ParseRelease(bad); err == nil {
			t.Errorf("ParseRelease(%q) accepted", bad)
		}
	}
}

func FuzzParseRelease(f *testing.F) {
	f.Add("node-a /dev/disk/by-id/x 2026-11-22T09:30:00Z")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRelease(s)
		if err != nil {
			return
		}
		again, err := ParseRelease(r.String())
		if err != nil || !again.At.Equal(r.At) || again.Node != r.Node || again.Device != r.Device {
			t.Fatalf("%q -> %+v -> %+v (%v)", s, r, again, err)
		}
	})
}
