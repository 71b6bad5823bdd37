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
	// The plan after the fast device was replaced: three OSDs' DBs move; q4 is a new disk.
	planned := []RookNode{{Name: "n1", Config: map[string]string{"deviceClass": "qlc"}, Devices: []RookDevice{
		dev("q1", newFast+"1"), dev("q2", newFast+"2"), dev("q3", newFast+"3"), dev("q4", newFast+"4"),
	}}}
	existing := []any{map[string]any{"name": "n1", "config": map[string]any{"deviceClass": "qlc"}, "devices": []any{
		map[string]any{"name": "q1", "config": map[string]any{"metadataDevice": oldFast + "1"}},
		map[string]any{"name": "q2", "config": map[string]any{"metadataDevice": oldFast + "2", "databaseSizeMB": "61440"}},
		map[string]any{"name": "q3", "config": map[string]any{"metadataDevice": newFast + "3"}}, // already released
	}}}
	healthy := CephHealth{Health: HealthOK, LastChanged: now.Add(-time.Hour)}
	tests := []struct {
		name     string
		health   CephHealth
		last     *Release
		released string // "" none
		held     []string
	}{
		{"healthy, nothing in flight: the first moved OSD goes", healthy, nil, "q1", []string{"q2"}},
		{"unhealthy: none goes", CephHealth{Health: "HEALTH_WARN"}, nil, "", []string{"q1", "q2"}},
		{"no health reported yet: none goes", CephHealth{}, nil, "", []string{"q1", "q2"}},
		{"released a minute ago: wait", healthy, &Release{"n1", "q3", now.Add(-time.Minute)}, "", []string{"q1", "q2"}},
		{"released 5 min ago, health unchanged since: wait", healthy, &Release{"n1", "q3", now.Add(-5 * time.Minute)}, "", []string{"q1", "q2"}},
		{"released 5 min ago, health went and came back: next", CephHealth{Health: HealthOK, LastChanged: now.Add(-time.Minute)}, &Release{"n1", "q3", now.Add(-5 * time.Minute)}, "q1", []string{"q2"}},
		{"released 20 min ago, health never changed: next", healthy, &Release{"n1", "q3", now.Add(-20 * time.Minute)}, "q1", []string{"q2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := GateReplacements(planned, existing, tc.health, tc.last, now)
			rel := ""
			if got.Released != nil {
				rel = got.Released.Device
				if got.Released.Node != "n1" || !got.Released.At.Equal(now) {
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
				if !strings.HasPrefix(got.Held[i], "n1 "+h+": DB moves from "+oldFast) {
					t.Errorf("held[%d] = %q, want %s", i, got.Held[i], h)
				}
			}
			// Every device is in the entries: released/new/unchanged as planned, held as they were.
			meta := map[string]string{}
			for _, d := range got.Entries[0].Devices {
				meta[d.Name] = d.Config.MetadataDevice
			}
			if meta["q3"] != newFast+"3" || meta["q4"] != newFast+"4" {
				t.Errorf("unchanged or new devices altered: %v", meta)
			}
			for _, h := range tc.held {
				if !strings.HasPrefix(meta[h], oldFast) {
					t.Errorf("held %s got %s", h, meta[h])
				}
			}
			if tc.released != "" && meta[tc.released] != newFast+tc.released[1:] {
				t.Errorf("released %s got %s", tc.released, meta[tc.released])
			}
		})
	}
	// A held device keeps its own entry verbatim (its databaseSizeMB), not the node's settings.
	got := GateReplacements(planned, existing, CephHealth{Health: "HEALTH_WARN"}, nil, now)
	for _, d := range got.Entries[0].Devices {
		if d.Name == "q2" && (d.Config.DatabaseSizeMB != "61440" || d.Config.Get("deviceClass") != "") {
			t.Errorf("held q2 entry %v", d.Config)
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
		got := GateReplacements(planned, existing, CephHealth{Health: "HEALTH_WARN"}, nil, now)
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
