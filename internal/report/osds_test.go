package report

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// recordedOSDs is the status the agent publishes for the OSD recorded on Ceph 16.2.15 (a
// 640 MiB slot that spilled; internal/node/osdstats TestSummaryGolden).
func recordedOSDs(t *testing.T) []prismv1.OSDStatus {
	t.Helper()
	data, err := os.ReadFile("../node/osdstats/testdata/storagenode-osds-ceph-16.2.15.json")
	if err != nil {
		t.Fatal(err)
	}
	var osds []prismv1.OSDStatus
	if err := json.Unmarshal(data, &osds); err != nil {
		t.Fatal(err)
	}
	return osds
}

func TestOSDsRecorded(t *testing.T) {
	const fast = "/dev/disk/by-id/nvme-PRISMTEST_OPTANE_FAST"
	osds := recordedOSDs(t)
	growing := osds[0]
	growing.ID, growing.Spilled, growing.SlowUsedBytes = 1, false, 0
	soon := metav1.NewTime(time.Date(2026, 12, 9, 21, 0, 0, 0, time.UTC))
	growing.SpillForecastTime = &soon
	nodes := []prismv1.StorageNode{{
		ObjectMeta: metav1.ObjectMeta{Name: "prismtest-node"},
		Spec: prismv1.StorageNodeSpec{PolicyName: "qlc-hybrid", Plan: &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{
			StablePath: fast, SlotSizeBytes: 640 << 20, Slots: []prismv1.DBSlot{{}, {}},
		}}}},
		Status: prismv1.StorageNodeStatus{
			Devices: []prismv1.Device{{Name: "loop1", StablePath: fast, SizeBytes: 2 << 30}},
			OSDs:    []prismv1.OSDStatus{osds[0], growing},
		},
	}}
	var out bytes.Buffer
	if err := OSDs(&out, nodes, time.Date(2026, 11, 25, 21, 46, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	for _, want := range []string{
		"qlc-hybrid  1      2     1        1                     2026-12-09 21:00  none",
		"prismtest-node  osd.0  629.4 MiB  639.0 MiB  62.9 MiB  not even WAL+L0  spilled",
		"1.1 GiB for L0..L0",
		"2026-12-09 21:00 (in 14 days)",
		"wal         448.2 MiB  102.4 GiB    0.2              0.71",
		"objects     953.7 MiB  316.6 GiB    0.63             1",
		"spilled     62.9 MiB   3.4 GiB      0.0068           0.17",
		"L1          64.5 KiB   unknown      -                0",
		"L0..L0: 1 × 1.1 GiB, L0..L1: 1 × 1.2 GiB, L0..L2: 1 × 1.8 GiB, L0..L3: 0 × 8.4 GiB",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("kubectl prism osds lacks %q", want)
		}
	}
	var empty bytes.Buffer
	if err := OSDs(&empty, []prismv1.StorageNode{{ObjectMeta: metav1.ObjectMeta{Name: "n"}}}, time.Now()); err != nil || !strings.Contains(empty.String(), "No StorageNode reports an OSD") {
		t.Errorf("no OSD: %q %v", empty.String(), err)
	}
}
