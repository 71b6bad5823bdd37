package report

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Each row of `kubectl prism selection`, as README's install section says: per node the fast
// and QLC devices, each QLC device's DB slot, and why the others are not used.
func TestSelectionRows(t *testing.T) {
	const slot = "/dev/disk/by-id/nvme-INTEL_SSDPF21Q800GB_PRISM-E2E-FAST-part1"
	policies := []prismv1.HybridStoragePolicy{{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e"},
		Spec:       prismv1.HybridStoragePolicySpec{Mode: prismv1.ModeDryRun},
		Status: prismv1.HybridStoragePolicyStatus{SelectedNodes: 2, ReadyNodes: 1,
			Conditions: []metav1.Condition{{Type: prismv1.ConditionReady, Status: metav1.ConditionFalse, Reason: "DryRun", Message: "nothing written"}},
			Nodes: []prismv1.NodeSelection{
				{Node: "guest",
					Fast:     []prismv1.SelectedDevice{{Name: "nvme1n1", Model: "INTEL SSDPF21Q800GB", SizeBytes: 800166076416}},
					Capacity: []prismv1.SelectedDevice{{Name: "nvme2n1", Model: "INTEL SSDPF2NV307TZ", SizeBytes: 30725971992576, DBSlot: slot}},
					Rejected: []prismv1.RejectedDevice{{Name: "vda", Reason: "NoPartitions: has partitions: vda1"}}},
				{Node: "other", Message: "no fast device matched: capacity devices would get no DB slot or cache"},
			}},
	}}
	var out bytes.Buffer
	if err := Selection(&out, policies); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	for _, tc := range []struct {
		prefix string   // the row's first fields
		want   []string // in this order after them
	}{
		{"Policy e2e (DryRun): 2 nodes selected, 1 with both tiers.", []string{"Ready=False (DryRun): nothing written"}},
		{"NODE", []string{"ROLE", "DEVICE", "MODEL", "SIZE", "DB SLOT", "REASON"}},
		{"guest fast nvme1n1", []string{"INTEL SSDPF21Q800GB", "800.17 GB"}},
		{"guest capacity nvme2n1", []string{"INTEL SSDPF2NV307TZ", "30.73 TB", slot}},
		{"guest not used vda", []string{"NoPartitions: has partitions: vda1"}},
		{"other -", []string{"no fast device matched"}},
	} {
		row := ""
		for _, l := range lines {
			if f := strings.Join(strings.Fields(l), " "); strings.HasPrefix(f, tc.prefix) {
				row = f
			}
		}
		if row == "" {
			t.Errorf("no row %q in:\n%s", tc.prefix, out.String())
			continue
		}
		rest := row[len(tc.prefix):]
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("row %q lacks %q (or has it out of order)", row, w)
				break
			}
			rest = rest[i+len(w):]
		}
	}
}
