package inventory

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

const repo = "../../.."

// TestFixtureNodes inventories every simulated node exactly as the agent inventories a host
// and checks each drive against what its fixture says it is.
func TestFixtureNodes(t *testing.T) {
	nodes, err := fixturehost.LoadAll(filepath.Join(repo, fixturehost.NodesDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) < 3 {
		t.Fatalf("want at least three fixture nodes, have %d", len(nodes))
	}
	for _, n := range nodes {
		t.Run(n.Name, func(t *testing.T) {
			root := t.TempDir()
			if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
				t.Fatal(err)
			}
			rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: root}, Identifier: nvme.RecordedIdentifier{Dir: filepath.Join(root, "identify")}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]prismv1.Device{}
			for _, d := range rep.Devices {
				got[d.Name] = d
			}
			if len(got) != len(n.Devices) {
				t.Fatalf("inventoried %d devices, fixture has %d", len(got), len(n.Devices))
			}
			for _, want := range n.Devices {
				d := got[want.Name]
				if d.Model != want.Model || d.Serial != want.Serial || d.SizeBytes != want.SizeBytes || d.Firmware != want.Firmware {
					t.Errorf("%s: model/serial/size/firmware = %q/%q/%d/%q, fixture %q/%q/%d/%q",
						want.Name, d.Model, d.Serial, d.SizeBytes, d.Firmware, want.Model, want.Serial, want.SizeBytes, want.Firmware)
				}
				if d.StablePath == "" || filepath.Base(d.StablePath) == d.Name {
					t.Errorf("%s: stable path %q", want.Name, d.StablePath)
				}
				if want.Expect.Tier == "" {
					t.Errorf("%s: fixture has no expected tier", want.Name)
				}
				if string(d.Tier) != want.Expect.Tier {
					t.Errorf("%s (%s): tier %s (%s), want %s", want.Name, want.Model, d.Tier, d.TierReason, want.Expect.Tier)
				}
				var failed []string
				for _, r := range d.Eligibility.Reasons {
					failed = append(failed, r.Filter)
				}
				if !slices.Equal(failed, want.Expect.Ineligible) || d.Eligibility.Eligible != (len(failed) == 0) {
					t.Errorf("%s: failed filters %v (eligible %t), want %v", want.Name, failed, d.Eligibility.Eligible, want.Expect.Ineligible)
				}
			}
			for _, w := range rep.Warnings {
				t.Logf("warning: %s", w)
			}
		})
	}
}
