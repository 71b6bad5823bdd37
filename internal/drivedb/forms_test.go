package drivedb

import (
	"fmt"
	"strings"
	"testing"
)

// vendorReportPrefix is how each vendor's drives begin the model they report, for rows whose
// pattern starts with '*' (INTEL SSDPE21K375GA, SOLIDIGM SBFPF2BU307T, SAMSUNG MZQL23T8HCLS-00A07).
var vendorReportPrefix = map[string]string{"Intel": "INTEL ", "Solidigm": "SOLIDIGM ", "Samsung": "SAMSUNG ", "Kioxia": "KIOXIA "}

// reportedModel instantiates a row's pattern as the drive would report it: the vendor word for
// a leading '*', nothing for the other '*', '_' for '?' (Micron's separator).
func reportedModel(e Entry) string {
	p := e.ModelPattern
	if rest, ok := strings.CutPrefix(p, "*"); ok {
		p = vendorReportPrefix[e.Vendor] + rest
	}
	return strings.NewReplacer("*", "", "?", "_").Replace(p)
}

// forms are the strings real hosts show for one model (docs/discovery.md): NVMe Identify and
// ATA IDENTIFY pad to 40 bytes, udev's ID_MODEL turns spaces into '_', ID_MODEL_ENC escapes
// them as \x20 and keeps the padding, and the SCSI INQUIRY of a SATA drive keeps 16 characters.
func forms(model string, sata bool) map[string]Model {
	padded := fmt.Sprintf("%-40s", model)
	enc := strings.ReplaceAll(padded, " ", `\x20`)
	f := map[string]Model{
		"ID_MODEL":     NormalizeModel(strings.ReplaceAll(model, " ", "_"), SourceUdevModel, false),
		"ID_MODEL_ENC": NormalizeModel(enc, SourceUdevModelEnc, false),
	}
	if sata {
		f["ATA IDENTIFY"] = NormalizeModel(padded, SourceATAIdentify, false)
		inquiry := padded[:16]
		f["INQUIRY"] = NormalizeModel(inquiry, SourceSCSIInquiry, true)
		f["scsi_id ID_MODEL_ENC"] = NormalizeModel(strings.ReplaceAll(inquiry, " ", `\x20`), SourceUdevModelEnc, true)
	} else {
		f["NVMe Identify"] = NormalizeModel(padded+"\x00", SourceNVMeIdentify, false)
	}
	return f
}

// TestEveryRowMatchesEveryForm: each row's pattern, instantiated as the drive reports it, is
// found again in every form a host shows; the 16-character INQUIRY forms of a SATA drive are
// flagged as possibly cut (the inventory then reads ATA IDENTIFY) unless the model fits.
func TestEveryRowMatchesEveryForm(t *testing.T) {
	for _, e := range Default().Entries() {
		model := reportedModel(e)
		sata := strings.Contains(e.Notes, "SATA")
		for name, m := range forms(model, sata) {
			if m.MaybeCut {
				if len(MatchKey(model)) <= 16 {
					// The whole model fits: only the flag is conservative; nothing to check.
					continue
				}
				if !strings.HasPrefix(MatchKey(model), MatchKey(m.Text)) {
					t.Errorf("line %d: %s form %q is not a prefix of %q", e.Line, name, m.Text, model)
				}
				continue
			}
			got, ok := Default().Lookup(m.Text, e.CapacityBytes)
			if !ok || got.Line != e.Line {
				t.Errorf("line %d (%s %s): %s form %q found line %d (%t)", e.Line, e.Vendor, e.Family, name, m.Text, got.Line, ok)
			}
		}
	}
}
