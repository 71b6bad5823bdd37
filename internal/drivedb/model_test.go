package drivedb

import "testing"

func TestNormalizeModel(t *testing.T) {
	for _, c := range []struct {
		name       string
		raw        string
		src        ModelSource
		translated bool
		want       Model
	}{
		{"NVMe MN is padded to 40 bytes", "INTEL SSDPE21K375GA                     ", SourceNVMeIdentify, false, Model{Text: "INTEL SSDPE21K375GA"}},
		{"NUL padding", "SOLIDIGM SBFPF2BU307T\x00\x00\x00", SourceNVMeIdentify, false, Model{Text: "SOLIDIGM SBFPF2BU307T"}},
		{"ATA IDENTIFY model", "Samsung SSD 870 QVO 4TB                 ", SourceATAIdentify, true, Model{Text: "Samsung SSD 870 QVO 4TB"}},
		{"ID_MODEL_ENC from ata_id keeps padding as \\x20", `HGST\x20HUH728080ALE604\x20\x20\x20\x20`, SourceUdevModelEnc, false, Model{Text: "HGST HUH728080ALE604"}},
		{"ID_MODEL from ata_id", "Micron_5300_MTFDDAK480TDS", SourceUdevModel, false, Model{Text: "Micron_5300_MTFDDAK480TDS"}},
		{"INQUIRY product cut on a space", "Samsung SSD 870 ", SourceSCSIInquiry, true, Model{Text: "Samsung SSD 870", MaybeCut: true}},
		{"INQUIRY product cut mid-word", "Micron_5300_MTFD", SourceSCSIInquiry, true, Model{Text: "Micron_5300_MTFD", MaybeCut: true}},
		{"ID_MODEL_ENC from scsi_id behind a SAS HBA", `Samsung\x20SSD\x20870\x20`, SourceUdevModelEnc, true, Model{Text: "Samsung SSD 870", MaybeCut: true}},
		{"native SAS INQUIRY is the whole product", "ST1200MM0009    ", SourceSCSIInquiry, false, Model{Text: "ST1200MM0009"}},
		{"longer than an INQUIRY product: not cut", "Samsung SSD 870 QVO 4TB", SourceUdevModel, true, Model{Text: "Samsung SSD 870 QVO 4TB"}},
		{"a broken escape stays", `A\xZZB`, SourceUdevModelEnc, false, Model{Text: `A\xZZB`}},
	} {
		if got := NormalizeModel(c.raw, c.src, c.translated); got != c.want {
			t.Errorf("%s: NormalizeModel(%q) = %+v, want %+v", c.name, c.raw, got, c.want)
		}
	}
}

func TestMatchKeyMakesEveryFormAlike(t *testing.T) {
	want := MatchKey("Micron 5300 MTFDDAK480TDS")
	for _, s := range []string{"Micron_5300_MTFDDAK480TDS", "MICRON  5300_MTFDDAK480TDS  ", "micron 5300 mtfddak480tds"} {
		if got := MatchKey(s); got != want {
			t.Errorf("MatchKey(%q) = %q, want %q", s, got, want)
		}
	}
}
