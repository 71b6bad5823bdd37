package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func node(name string, devs ...prismv1.Device) prismv1.StorageNode {
	return prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: prismv1.StorageNodeStatus{Devices: devs}}
}

func dev(name string, pct int32, wearOut *time.Time) prismv1.Device {
	e := &prismv1.DeviceEndurance{PercentUsed: &pct, DWPDLifetime: "0.350", WriteAmplification: "1.80"}
	if wearOut != nil {
		t := metav1.NewTime(*wearOut)
		e.WearOutTime = &t
	}
	return prismv1.Device{Name: name, Model: "M", Tier: prismv1.TierCapacity, Endurance: e,
		RatedEndurance: &prismv1.RatedEndurance{DWPD: "0.58"}}
}

func TestEnduranceSortsBySoonestWearOut(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	soon, later := now.Add(30*24*time.Hour), now.Add(900*24*time.Hour)
	nodes := []prismv1.StorageNode{
		node("a", dev("nvme1n1", 40, &later), dev("nvme2n1", 10, nil)),
		node("b", dev("nvme1n1", 5, &soon)),
		node("c", dev("nvme1n1", 85, nil)),
		node("d"),
	}
	var out bytes.Buffer
	if err := Endurance(&out, nodes, now, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	order := []string{}
	for _, l := range lines[1:] {
		order = append(order, strings.Fields(l)[0])
	}
	// b wears out first, then a; c has no projection but 85 % wear; d has no data.
	if strings.Join(order, ",") != "b,a,c,d" {
		t.Fatalf("order %v:\n%s", order, out.String())
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("colour written to a non-terminal")
	}
	if !strings.Contains(lines[1], "0.350 / 0.58") || !strings.Contains(lines[1], "2026-12-22") {
		t.Errorf("row b = %q", lines[1])
	}
	out.Reset()
	if err := Endurance(&out, nodes, now, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\x1b[31mb ") || !strings.Contains(out.String(), "\x1b[33mc ") {
		t.Errorf("expected red for b (30 days) and yellow for c (85 %%):\n%q", out.String())
	}
}
