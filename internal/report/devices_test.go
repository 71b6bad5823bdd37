package report

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestDevicesWideShowsEvidenceAndInference(t *testing.T) {
	nodes := []prismv1.StorageNode{{
		ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: prismv1.StorageNodeStatus{Devices: []prismv1.Device{{
			Name: "nvme0n1", Model: "ACME QLC 30T", Vendor: "Solidigm", SizeBytes: 30_720_000_000_000, Tier: prismv1.TierOther,
			TierReason: "model \"ACME QLC 30T\" is not in the drive database",
			Evidence: &prismv1.DeviceEvidence{VendorSource: "pci-ids", PCIVendorID: "025e", PCIDeviceID: "0b60", PCISubsystemVendorID: "025e",
				PreferredWriteGranularityBytes: 65536, EnduranceEstimateTBW: "32519", ModelSource: "nvme-identify"},
			InferredTier: &prismv1.InferredTier{Tier: prismv1.TierCapacity, Confidence: prismv1.ConfidenceMedium, Reasons: []string{"NPWG 64 KiB", "0.58 DWPD"}},
			Eligibility:  prismv1.Eligibility{Eligible: true},
		}}},
	}}
	var narrow, wide bytes.Buffer
	if err := Devices(&narrow, nodes, false); err != nil {
		t.Fatal(err)
	}
	if err := Devices(&wide, nodes, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(narrow.String(), "INFERRED") {
		t.Errorf("the default table grew the wide columns:\n%s", narrow.String())
	}
	for _, want := range []string{"VENDOR", "INFERRED", "EVIDENCE", "Solidigm (pci-ids)", "Capacity (Medium: NPWG 64 KiB; 0.58 DWPD)",
		"pci=025e:0b60", "npwg=64KiB", "tbw=32519", "model=nvme-identify"} {
		if !strings.Contains(wide.String(), want) {
			t.Errorf("-o wide lacks %q:\n%s", want, wide.String())
		}
	}
}
