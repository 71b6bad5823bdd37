package rook

import (
	"encoding/json"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// A device config encodes exactly as the map of its keys did, keeps keys it does not know
// and empty values, and reads back as it was.
func TestRookDeviceConfigIsItsMap(t *testing.T) {
	for _, m := range []map[string]string{
		{"metadataDevice": "/dev/disk/by-id/nvme-A-part1"},
		{"metadataDevice": "/dev/disk/by-id/nvme-A-part1", "databaseSizeMB": "61440"},
		{"metadataDevice": "/dev/disk/by-id/nvme-A-part1", "deviceClass": "qlc", "osdsPerDevice": "1", "zz": "<&>"},
		{"metadataDevice": ""},
		{},
	} {
		c := DeviceConfigOf(m)
		want, _ := json.Marshal(m)
		got, err := json.Marshal(c)
		if err != nil || string(got) != string(want) {
			t.Errorf("%v: encodes as %s (%v), want %s", m, got, err, want)
		}
		for k, v := range m {
			if c.Get(k) != v {
				t.Errorf("%v: Get(%q) = %q", m, k, c.Get(k))
			}
		}
		if c.IsZero() != (len(m) == 0) {
			t.Errorf("%v: IsZero %t", m, c.IsZero())
		}
		var back RookDeviceConfig
		if err := json.Unmarshal(got, &back); err != nil || len(back.Map()) != len(m) {
			t.Errorf("%v: read back as %v (%v)", m, back.Map(), err)
		}
		// A device entry leaves an empty config out, as omitempty did for an empty map.
		entry, _ := json.Marshal(RookDevice{Name: "d", Config: c})
		if len(m) == 0 && string(entry) != `{"name":"d"}` {
			t.Errorf("empty config: entry %s", entry)
		}
	}
}

// Slot entries name each partition as PartitionPath does, also beyond the table of suffixes,
// and come out sorted by data device.
func TestSlotEntriesNamePartitionsAsPartitionPath(t *testing.T) {
	p := prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{
		{StablePath: "/dev/disk/by-id/nvme-F1", SlotSizeBytes: 60 * GiB, Slots: []prismv1.DBSlot{
			{Index: 0, Partition: prismv1.PlannedPartition{Number: 1}, DataDevice: "/dev/disk/by-id/q3"},
			{Index: 1, Partition: prismv1.PlannedPartition{Number: 2}},
			{Index: 2, Partition: prismv1.PlannedPartition{Number: 300}, DataDevice: "/dev/disk/by-id/q1"},
		}},
		{StablePath: "/dev/disk/by-id/nvme-F2-long-name", SlotSizeBytes: 30 * GiB, Slots: []prismv1.DBSlot{
			{Index: 0, Partition: prismv1.PlannedPartition{Number: 128}, DataDevice: "/dev/disk/by-id/q2"},
		}},
	}}
	got := slotEntries(p)
	want := []RookDevice{
		{Name: "/dev/disk/by-id/q1", Config: RookDeviceConfig{MetadataDevice: prismv1.PartitionPath("/dev/disk/by-id/nvme-F1", 300), DatabaseSizeMB: "61440"}},
		{Name: "/dev/disk/by-id/q2", Config: RookDeviceConfig{MetadataDevice: prismv1.PartitionPath("/dev/disk/by-id/nvme-F2-long-name", 128), DatabaseSizeMB: "30720"}},
		{Name: "/dev/disk/by-id/q3", Config: RookDeviceConfig{MetadataDevice: prismv1.PartitionPath("/dev/disk/by-id/nvme-F1", 1), DatabaseSizeMB: "61440"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Config.MetadataDevice != want[i].Config.MetadataDevice || got[i].Config.DatabaseSizeMB != want[i].Config.DatabaseSizeMB {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	n, ok := rookNode("n", p, "", got)
	if !ok || n.Config["databaseSizeMB"] != "" || n.Devices[0].Config.DatabaseSizeMB != "61440" {
		t.Errorf("slots of two sizes: node config %v, first device %+v", n.Config, n.Devices[0])
	}
}
