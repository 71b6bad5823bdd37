package lvm

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// headFixture is one of capture-torn.sh's heads.
func headFixture(t testing.TB, name string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(fixture(t, name+"-head.bin.gz")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil || len(b) != HeadSize {
		t.Fatalf("%s: %d bytes, %v", name, len(b), err)
	}
	return b
}

const prismPV = "8f3c1e-526a-0b4c-1d9e-2f01-2345-6789ab"

func TestReadHead(t *testing.T) {
	set := func(name string, off int, b ...byte) []byte {
		h := headFixture(t, name)
		copy(h[off:], b)
		return h
	}
	for _, tc := range []struct {
		name string
		head []byte
		want Head
		err  string
	}{
		{"zeros", make([]byte, HeadSize), Head{}, ""},
		{"pvcreate cut before its label", headFixture(t, "torn-pv"), Head{MDA: true}, ""},
		{"pvcreate whole", headFixture(t, "pv"), Head{PVUUID: prismPV, MDA: true}, ""},
		{"vgcreate cut before its last write", headFixture(t, "torn-vg"), Head{PVUUID: prismPV, MDA: true, VGName: slotVG}, ""},
		{"vgcreate whole", headFixture(t, "vg"), Head{PVUUID: prismPV, MDA: true, VGName: slotVG}, ""},
		// lvcreate's metadata follows vgcreate's in the area: a second text.
		{"lvcreate whole", headFixture(t, "lv"), Head{}, "a byte at 5632 that LVM does not write"},
		{"text naming a logical volume", set("vg", mdaTextOffset+400, []byte("logical_volumes {")...), Head{}, "lists logical volumes"},
		{"a byte in sector 0", set("torn-pv", 100, 1), Head{}, "a byte at 100 that LVM does not write"},
		{"a byte between label and header", set("pv", 2000, 1), Head{}, "a byte at 2000"},
		{"a label byte changed", set("pv", 600, 'x'), Head{}, "label's checksum"},
		{"a header byte changed", set("torn-pv", 4096+40, 1), Head{}, "metadata area header's checksum"},
		{"a byte after the text", set("torn-vg", HeadSize-1, 1), Head{}, "a byte at 1048575"},
		{"text without a header", append(make([]byte, mdaTextOffset), append([]byte("vg {\n"), make([]byte, HeadSize-mdaTextOffset-5)...)...), Head{}, "without a metadata area header"},
		{"a binary byte in the text", set("torn-vg", mdaTextOffset+30, 0xff), Head{}, "byte 0xff at 4638"},
		{"too short", make([]byte, 4096), Head{}, "4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadHead(tc.head)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			case tc.err == "" && got != tc.want:
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPVUUID(t *testing.T) {
	for in, want := range map[string]string{
		slotGUID:                                prismPV,
		strings.ToUpper(slotGUID):               prismPV,
		"8f3c1e526a0b4c1d9e2f0123456789ab":      prismPV,
		"8f3c1e52-6a0b-4c1d-9e2f-0123456789":    "",
		"8f3c1e52-6a0b-4c1d-9e2f-0123456789ag":  "",
		"8f3c1e52-6a0b-4c1d-9e2f-0123456789ab0": "",
	} {
		got, err := PVUUID(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("PVUUID(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err == nil && checkID(got) != nil {
			t.Errorf("PVUUID(%q) = %q, which checkID refuses: %v", in, got, checkID(got))
		}
	}
}

// FuzzReadHead: data written into a zero head at off either fails cleanly or reads as a head
// whose every non-zero byte is in the label sector, the metadata area header or the text.
func FuzzReadHead(f *testing.F) {
	for _, name := range []string{"torn-pv", "pv", "torn-vg", "vg", "lv"} {
		f.Add(headFixture(f, name)[:8192], uint32(0))
	}
	f.Add([]byte("vg {\n"), uint32(mdaTextOffset))
	f.Fuzz(func(t *testing.T, data []byte, off uint32) {
		head := make([]byte, HeadSize)
		if int(off) >= HeadSize {
			return
		}
		copy(head[off:], data)
		h, err := ReadHead(head)
		if err != nil {
			if h.PVUUID != "" && checkID(h.PVUUID) != nil {
				t.Fatalf("bad UUID %q with error %v", h.PVUUID, err)
			}
			return
		}
		if h.PVUUID != "" && checkID(h.PVUUID) != nil {
			t.Fatalf("accepted a label with PV UUID %q", h.PVUUID)
		}
		if (h.PVUUID == "") != allZero(head[labelOffset:labelOffset+sectorSize]) || h.MDA == allZero(head[mdaOffset:mdaTextOffset]) {
			t.Fatalf("%+v does not match the label sector or the header", h)
		}
		if !allZero(head[:labelOffset]) || !allZero(head[labelOffset+sectorSize:mdaOffset]) {
			t.Fatal("accepted bytes outside LVM's")
		}
		if (h.VGName == "") != allZero(head[mdaTextOffset:]) || h.VGName != "" && (!h.MDA || CheckVGName(h.VGName) != nil) {
			t.Fatalf("%+v does not match the text", h)
		}
	})
}
