package apivalidation

import (
	"fmt"
	"io/fs"
	"math"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/config/crd"
	"github.com/prism-storage/prism/internal/ioclass"
)

// schemaAt walks a generated CRD's schema: "spec.db.size", "[]" for list items, "{}" for map values.
func schemaAt(t *testing.T, file, path string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	data, err := fs.ReadFile(crd.Bases, "bases/"+file)
	if err != nil {
		t.Fatal(err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, c); err != nil {
		t.Fatal(err)
	}
	s := *c.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, p := range strings.Split(path, ".") {
		switch p {
		case "[]":
			s = *s.Items.Schema
		case "{}":
			s = *s.AdditionalProperties.Schema
		default:
			next, ok := s.Properties[p]
			if !ok {
				t.Fatalf("%s: no %s in %s", file, p, path)
			}
			s = next
		}
	}
	return s
}

func rules(s apiextensionsv1.JSONSchemaProps) string {
	var b strings.Builder
	for _, r := range s.XValidations {
		b.WriteString(r.Rule + "\n")
	}
	return b.String()
}

// TestCRDLimitsAreTheGoConstants: markers cannot name Go constants, so this holds the
// generated CRDs to the constants the planner uses (api/v1alpha1/limits.go).
func TestCRDLimitsAreTheGoConstants(t *testing.T) {
	const hsp, sn = "prism.storage.io_hybridstoragepolicies.yaml", "prism.storage.io_storagenodes.yaml"
	// The DB slot range: spec.db.size (a quantity or a plain integer) and slotSizeBytes.
	dbSize := rules(schemaAt(t, hsp, "spec.db.size"))
	for _, want := range []string{
		fmt.Sprintf("quantity('%s')) >= 0", prismv1.MinDBSlotSize), fmt.Sprintf("quantity('%s')) <= 0", prismv1.MaxDBSlotSize),
		fmt.Sprintf("self >= %d", prismv1.MinDBSlotBytes), fmt.Sprintf("self <= %d", prismv1.MaxDBSlotBytes),
	} {
		if !strings.Contains(dbSize, want) {
			t.Errorf("spec.db.size rules do not hold %q:\n%s", want, dbSize)
		}
	}
	slot := schemaAt(t, sn, "spec.plan.fastDevices.[].slotSizeBytes")
	if *slot.Minimum != float64(prismv1.MinDBSlotBytes) || *slot.Maximum != float64(prismv1.MaxDBSlotBytes) || *slot.MultipleOf != float64(prismv1.MiB) {
		t.Errorf("slotSizeBytes: minimum %v maximum %v multipleOf %v", *slot.Minimum, *slot.Maximum, *slot.MultipleOf)
	}
	for _, f := range []string{"startBytes", "sizeBytes"} {
		p := schemaAt(t, sn, "spec.plan.fastDevices.[].cache."+f)
		if *p.Minimum != float64(prismv1.MiB) || *p.Maximum != float64(prismv1.MaxDeviceSizeBytes) || *p.MultipleOf != float64(prismv1.MiB) {
			t.Errorf("partition %s: minimum %v maximum %v multipleOf %v", f, *p.Minimum, *p.Maximum, *p.MultipleOf)
		}
	}
	if s := prismv1.MinDBSlotBytes; s != 2<<30 || prismv1.MinDBSlotSize != "2Gi" || prismv1.MaxDBSlotBytes != 64<<40 || prismv1.MaxDBSlotSize != "64Ti" || prismv1.MaxDeviceSizeBytes != 1<<60 || prismv1.MaxDeviceSize != "1Ei" {
		t.Error("a quantity constant and its byte count disagree")
	}
	// Size ranges are bounded by MaxDeviceSize, so the planner never overflows.
	for _, sel := range []string{"fastDevices", "capacityDevices"} {
		if r := rules(schemaAt(t, hsp, "spec."+sel+".size")); !strings.Contains(r, fmt.Sprintf("quantity('%s')) <= 0", prismv1.MaxDeviceSize)) {
			t.Errorf("spec.%s.size rules do not bound the size by %s:\n%s", sel, prismv1.MaxDeviceSize, r)
		}
	}
	// IO class numbers: what the compiler and casadm take (internal/ioclass's limits).
	cond := rules(schemaAt(t, "prism.storage.io_classificationpolicies.yaml", "spec.classes.[].allOf.[].anyOf.[]"))
	for _, want := range []string{
		fmt.Sprintf("int(self.value) <= %d", ioclass.MaxCoreID), fmt.Sprintf("int(self.value) <= %d", ioclass.MaxClassID),
		fmt.Sprintf("self.value <= '%d'", uint64(math.MaxUint64)),
	} {
		if !strings.Contains(cond, want) {
			t.Errorf("IO condition rules do not hold %q", want)
		}
	}
	if id := schemaAt(t, "prism.storage.io_classificationpolicies.yaml", "spec.classes.[].id"); *id.Maximum != ioclass.MaxClassID {
		t.Errorf("class id maximum %v, want ioclass.MaxClassID", *id.Maximum)
	}
	// Every device path a spec names has the one pattern.
	for _, at := range []struct{ file, path string }{
		{hsp, "spec.fastDevices.paths.[]"}, {hsp, "spec.capacityDevices.paths.[]"}, {hsp, "spec.allowWipe.[].path"},
		{sn, "spec.plan.fastDevices.[].stablePath"}, {sn, "spec.plan.fastDevices.[].slots.[].dataDevice"}, {sn, "spec.plan.allowWipe.[]"},
	} {
		if p := schemaAt(t, at.file, at.path).Pattern; p != prismv1.StablePathPattern {
			t.Errorf("%s %s: pattern %q, want prismv1.StablePathPattern %q", at.file, at.path, p, prismv1.StablePathPattern)
		}
	}
}
