package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/inventory"
)

var t0 = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

func report() inventory.Report {
	return inventory.Report{Devices: []prismv1.Device{
		{Name: "nvme0n1", Tier: prismv1.TierFast, Eligibility: prismv1.Eligibility{Eligible: true}},
		{Name: "nvme1n1", Tier: prismv1.TierCapacity, Eligibility: prismv1.Eligibility{Eligible: true}},
		{Name: "nvme2n1", Tier: prismv1.TierCapacity},
		{Name: "sda", Tier: prismv1.TierOther},
	}}
}

func TestNodeStatusCountsTiers(t *testing.T) {
	st := nodeStatus(prismv1.StorageNodeStatus{}, report(), nil, t0, "v1")
	if st.FastDevices != 1 || st.CapacityDevices != 2 || st.EligibleDevices != 2 || len(st.Devices) != 4 || st.AgentVersion != "v1" {
		t.Fatalf("status = %+v", st)
	}
	c := meta.FindStatusCondition(st.Conditions, prismv1.ConditionInventoried)
	if c == nil || c.Status != metav1.ConditionTrue || c.Message != "4 devices: 1 fast, 2 capacity, 2 eligible" {
		t.Fatalf("condition = %+v", c)
	}
	if !st.LastInventoryTime.Time.Equal(t0) {
		t.Fatalf("lastInventoryTime = %v", st.LastInventoryTime)
	}
}

func TestNodeStatusKeepsDevicesWhenInventoryFails(t *testing.T) {
	good := nodeStatus(prismv1.StorageNodeStatus{}, report(), nil, t0, "v1")
	bad := nodeStatus(good, inventory.Report{}, errors.New("listing block devices: permission denied"), t0.Add(time.Minute), "v1")
	if len(bad.Devices) != 4 || !bad.LastInventoryTime.Time.Equal(t0) {
		t.Fatalf("a failed inventory must keep the last good devices and time: %+v", bad)
	}
	c := meta.FindStatusCondition(bad.Conditions, prismv1.ConditionInventoried)
	if c.Status != metav1.ConditionFalse || c.Reason != ReasonInventoryFailed || !strings.Contains(c.Message, "permission denied") {
		t.Fatalf("condition = %+v", c)
	}
}

func TestNeedsWrite(t *testing.T) {
	first := nodeStatus(prismv1.StorageNodeStatus{}, report(), nil, t0, "v1")
	same := nodeStatus(first, report(), nil, t0.Add(5*time.Minute), "v1")
	late := nodeStatus(first, report(), nil, t0.Add(31*time.Minute), "v1")
	changedRep := report()
	changedRep.Devices[3].Eligibility.Eligible = true
	changed := nodeStatus(first, changedRep, nil, t0.Add(time.Minute), "v1")
	for _, tc := range []struct {
		name       string
		prev, next prismv1.StorageNodeStatus
		want       bool
	}{
		{"first write", prismv1.StorageNodeStatus{}, first, true},
		{"unchanged within heartbeat", first, same, false},
		{"unchanged past heartbeat", first, late, true},
		{"device changed", first, changed, true},
	} {
		if got := needsWrite(tc.prev, tc.next, 30*time.Minute); got != tc.want {
			t.Errorf("%s: needsWrite = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// The CRD rejects devices, caches, their cores and OSDs out of key order (decision 0015); inventories list
// nvme10n1 wherever the host does.
func TestSortListsOrdersByKey(t *testing.T) {
	s := prismv1.StorageNodeStatus{
		Devices: []prismv1.Device{{Name: "nvme2n1"}, {Name: "nvme10n1"}, {Name: "nvme1n1"}},
		Caches: []prismv1.CacheStatus{{FastDevice: "/dev/disk/by-id/nvme-B"}, {FastDevice: "/dev/disk/by-id/nvme-A",
			Cores: []prismv1.CacheCoreStatus{{Device: "/dev/disk/by-id/wwn-2"}, {Device: "/dev/disk/by-id/wwn-10"}}}},
		OSDs: []prismv1.OSDStatus{{ID: 12}, {ID: 3}},
	}
	sortLists(&s)
	var names, caches []string
	for _, d := range s.Devices {
		names = append(names, d.Name)
	}
	for _, c := range s.Caches {
		caches = append(caches, c.FastDevice)
		for _, k := range c.Cores {
			caches = append(caches, k.Device)
		}
	}
	if s.OSDs[0].ID != 3 || s.OSDs[1].ID != 12 {
		t.Errorf("osds in order %d %d", s.OSDs[0].ID, s.OSDs[1].ID)
	}
	if got := strings.Join(names, " "); got != "nvme10n1 nvme1n1 nvme2n1" {
		t.Errorf("devices in order %s", got)
	}
	if got := strings.Join(caches, " "); got != "/dev/disk/by-id/nvme-A /dev/disk/by-id/wwn-10 /dev/disk/by-id/wwn-2 /dev/disk/by-id/nvme-B" {
		t.Errorf("caches in order %s", got)
	}
}
