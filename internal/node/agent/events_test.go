package agent

import (
	"reflect"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func evParts(dev string, states ...prismv1.PartitionState) []prismv1.PartitionStatus {
	var out []prismv1.PartitionStatus
	for i, s := range states {
		p := prismv1.PartitionStatus{Device: dev, Number: int32(i + 1), Label: "prism-db-0" + string(rune('0'+i)), State: s}
		if s == prismv1.PartitionRefused {
			p.Message = "holds f2fs"
		}
		out = append(out, p)
	}
	return out
}

func evVolume(ps []prismv1.PartitionStatus, state prismv1.DBVolumeState, msg string) []prismv1.PartitionStatus {
	ps[0].Volume = &prismv1.DBVolumeStatus{Path: "/dev/v/l", State: state, Message: msg}
	return ps
}

func TestTransitions(t *testing.T) {
	const a, b = "/dev/disk/by-id/a", "/dev/disk/by-id/b"
	R, P, F, X := prismv1.PartitionReady, prismv1.PartitionPending, prismv1.PartitionFailed, prismv1.PartitionRefused
	cache := func(state prismv1.CacheState) []prismv1.CacheStatus {
		return []prismv1.CacheStatus{{FastDevice: a, CacheID: 1, State: state, Message: "Not running"}}
	}
	for _, tc := range []struct {
		name          string
		before, after prismv1.StorageNodeStatus
		created       bool
		want          []string // reason: note
	}{
		{"first partitions", prismv1.StorageNodeStatus{Partitions: evParts(a, P, P)}, prismv1.StorageNodeStatus{Partitions: evParts(a, R, R)}, true,
			[]string{"PartitionsCreated: /dev/disk/by-id/a: partitions 1 (prism-db-00), 2 (prism-db-01) created and ready"}},
		{"ready without a write (the kernel read them): no event", prismv1.StorageNodeStatus{Partitions: evParts(a, P)}, prismv1.StorageNodeStatus{Partitions: evParts(a, R)}, false, nil},
		{"one added", prismv1.StorageNodeStatus{Partitions: evParts(a, R, P)}, prismv1.StorageNodeStatus{Partitions: evParts(a, R, R)}, true,
			[]string{"PartitionsCreated: /dev/disk/by-id/a: partitions 2 (prism-db-01) created and ready"}},
		{"refused", prismv1.StorageNodeStatus{}, prismv1.StorageNodeStatus{Partitions: append(evParts(a, X, X), evParts(b, R)...)}, false,
			[]string{"DeviceRefused: /dev/disk/by-id/a: holds f2fs"}},
		{"still refused the same: no event", prismv1.StorageNodeStatus{Partitions: evParts(a, X)}, prismv1.StorageNodeStatus{Partitions: evParts(a, X)}, false, nil},
		{"a partition refused beside ready ones", prismv1.StorageNodeStatus{Partitions: evParts(a, R, R)}, prismv1.StorageNodeStatus{Partitions: evParts(a, R, X)}, false,
			[]string{"DeviceRefused: /dev/disk/by-id/a: holds f2fs"}},
		{"failed is not refused", prismv1.StorageNodeStatus{}, prismv1.StorageNodeStatus{Partitions: evParts(a, F, X)}, false, nil},
		{"cache started", prismv1.StorageNodeStatus{Caches: cache(prismv1.CachePending)}, prismv1.StorageNodeStatus{Caches: cache(prismv1.CacheRunning)}, false,
			[]string{"CacheStarted: cache 1 on /dev/disk/by-id/a is running"}},
		{"cache failed", prismv1.StorageNodeStatus{Caches: cache(prismv1.CacheRunning)}, prismv1.StorageNodeStatus{Caches: cache(prismv1.CacheFailed)}, false,
			[]string{"CacheFailed: cache 1 on /dev/disk/by-id/a failed: Not running"}},
		{"volume made", prismv1.StorageNodeStatus{Partitions: evParts(a, R)}, prismv1.StorageNodeStatus{Partitions: evVolume(evParts(a, R), prismv1.DBVolumeReady, "logical volume /dev/v/l, 5 bytes")}, true,
			[]string{"DBVolumeCreated: /dev/disk/by-id/a partition 1: logical volume /dev/v/l, 5 bytes"}},
		{"volume found ready, none made: no event", prismv1.StorageNodeStatus{}, prismv1.StorageNodeStatus{Partitions: evVolume(evParts(a, R), prismv1.DBVolumeReady, "lv")}, false, nil},
		{"volume refused", prismv1.StorageNodeStatus{Partitions: evVolume(evParts(a, R), prismv1.DBVolumePending, "x")}, prismv1.StorageNodeStatus{Partitions: evVolume(evParts(a, R), prismv1.DBVolumeRefused, "VG data")}, false,
			[]string{"DBVolumeRefused: /dev/disk/by-id/a partition 1: VG data"}},
		{"volume still refused the same: no event", prismv1.StorageNodeStatus{Partitions: evVolume(evParts(a, R), prismv1.DBVolumeRefused, "VG data")}, prismv1.StorageNodeStatus{Partitions: evVolume(evParts(a, R), prismv1.DBVolumeRefused, "VG data")}, false, nil},
		{"cache still running: no event", prismv1.StorageNodeStatus{Caches: cache(prismv1.CacheRunning)}, prismv1.StorageNodeStatus{Caches: cache(prismv1.CacheRunning)}, false, nil},
	} {
		var got []string
		for _, ev := range transitions(tc.before, tc.after, tc.created) {
			got = append(got, ev.Reason+": "+ev.Note)
			if (ev.Type == "Warning") != (ev.Reason == EventDeviceRefused || ev.Reason == EventCacheFailed || ev.Reason == EventDBVolumeRefused) {
				t.Errorf("%s: %s is %s", tc.name, ev.Reason, ev.Type)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
