package inventory

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/smart"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// TestDrivesNeverSeen inventories hosts built from the raw evidence of drives the drive
// database does not know (test/fixtures/unknown-drives; its README.md cites every value) and
// checks what a storage engineer would conclude: the tier stays Other unless the database
// knows the model, the inferred tier and its confidence follow the evidence, the vendor is
// the real maker, a lying field never makes a drive Fast or Capacity, and nothing is made
// eligible that should not be.
func TestDrivesNeverSeen(t *testing.T) {
	nodes, err := fixturehost.LoadAll(filepath.Join(repo, fixturehost.UnknownDrivesDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) == 0 {
		t.Fatal("no unknown-drive nodes")
	}
	for _, n := range nodes {
		t.Run(n.Name, func(t *testing.T) {
			root := t.TempDir()
			if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
				t.Fatal(err)
			}
			logs := filepath.Join(root, "logs")
			rep, err := Take(context.Background(), Options{
				Host:       sysfs.Host{Root: root},
				Identifier: nvme.RecordedIdentifier{Dir: filepath.Join(root, "identify")},
				Logs:       nvme.RecordedLogReader{Dir: logs},
				ATA:        smart.RecordedReader{Dir: logs},
			})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]prismv1.Device{}
			for _, d := range rep.Devices {
				got[d.Name] = d
			}
			for _, want := range n.Devices {
				d, ok := got[want.Name]
				if !ok {
					t.Errorf("%s: not inventoried", want.Name)
					continue
				}
				checkNeverSeen(t, want, d, rep.Warnings)
			}
		})
	}
}

func checkNeverSeen(t *testing.T, want fixturehost.Device, d prismv1.Device, warnings []string) {
	t.Helper()
	e := want.Expect
	name := want.Name
	if string(d.Tier) != e.Tier {
		t.Errorf("%s: tier %s (%s), want %s", name, d.Tier, d.TierReason, e.Tier)
	}
	var failed []string
	for _, r := range d.Eligibility.Reasons {
		failed = append(failed, r.Filter)
	}
	if !slices.Equal(failed, e.Ineligible) || d.Eligibility.Eligible != (len(failed) == 0) {
		t.Errorf("%s: failed filters %v (eligible %t), want %v", name, failed, d.Eligibility.Eligible, e.Ineligible)
	}
	model := e.Model
	if model == "" {
		model = want.Model
	}
	if model == "" && want.IDCtrl != nil {
		model = want.IDCtrl.MN
	}
	if d.Model != model {
		t.Errorf("%s: model %q, want %q", name, d.Model, model)
	}
	ev := d.Evidence
	if ev == nil {
		ev = &prismv1.DeviceEvidence{}
	}
	if e.ModelSource != "" && ev.ModelSource != e.ModelSource {
		t.Errorf("%s: model source %q, want %q", name, ev.ModelSource, e.ModelSource)
	}
	switch {
	case e.Vendor == "none" && d.Vendor != "":
		t.Errorf("%s: vendor %q (from %s), want none", name, d.Vendor, ev.VendorSource)
	case e.Vendor != "" && e.Vendor != "none" && d.Vendor != e.Vendor:
		t.Errorf("%s: vendor %q (from %s), want %q", name, d.Vendor, ev.VendorSource, e.Vendor)
	}
	if e.VendorSource != "" && ev.VendorSource != e.VendorSource {
		t.Errorf("%s: vendor source %q, want %q", name, ev.VendorSource, e.VendorSource)
	}
	inferred, conf := "none", ""
	var reasons []string
	if it := d.InferredTier; it != nil {
		inferred, conf, reasons = string(it.Tier), string(it.Confidence), it.Reasons
	}
	if e.InferredTier != "" && inferred != e.InferredTier || e.Confidence != "" && conf != e.Confidence {
		t.Errorf("%s: inferred %s (%s confidence, %q), want %s (%s)", name, inferred, conf, reasons, e.InferredTier, e.Confidence)
	}
	if e.InternalWriteUnitBytes != 0 && d.InternalWriteUnitBytes != e.InternalWriteUnitBytes {
		t.Errorf("%s: internal write unit %d (%s), want %d", name, d.InternalWriteUnitBytes, d.InternalWriteUnitSource, e.InternalWriteUnitBytes)
	}
	if e.EnduranceEstimateTBW != "" && ev.EnduranceEstimateTBW != e.EnduranceEstimateTBW {
		t.Errorf("%s: endurance estimate %q TBW, want %q", name, ev.EnduranceEstimateTBW, e.EnduranceEstimateTBW)
	}
	text := d.TierReason + "; " + strings.Join(reasons, "; ")
	for _, s := range e.ReasonContains {
		if !strings.Contains(text, s) {
			t.Errorf("%s: reason %q lacks %q", name, text, s)
		}
	}
	for _, s := range e.WarningContains {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, name+":") && strings.Contains(w, s) }) {
			t.Errorf("%s: no warning with %q in %q", name, s, warnings)
		}
	}
	// A device the database does not know is never Fast or Capacity, whatever its evidence.
	if e.Tier == string(prismv1.TierOther) && d.Tier != prismv1.TierOther {
		t.Errorf("%s: promoted to %s", name, d.Tier)
	}
}
