package lvm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	slotVG   = "prism-db-49bd38895b20-00"
	slotLV   = "prism-db-00"
	slotGUID = "8f3c1e52-6a0b-4c1d-9e2f-0123456789ab"
	vgUUID   = "JYOGjJ-FHl2-JShJ-ia6h-LMxH-1der-jn1yLO"
	pvUUID   = "t6MreC-LvBs-jGwV-GcI4-7tay-PD2w-vTfNST"
	// unknownPV is the foreign PV of the unknown-* fixtures.
	unknownPV = "dkERG0-g9LT-z7ec-0krk-HMch-fYZ2-tOINHf"
)

var slotTags = []string{TagDBSlot, "prism.storage.io/partuuid=" + slotGUID}

func TestFixturesMatchTheNames(t *testing.T) {
	vg, lv, err := prismv1.DBVolumeNames("/dev/disk/by-id/nvme-PRISMTEST_FAST", 0)
	if err != nil || vg != slotVG || lv != slotLV || TagPartUUID(strings.ToUpper(slotGUID)) != slotTags[1] {
		t.Fatalf("SlotNames = %q %q %v, tag %q: the fixtures were made with %q %q %q", vg, lv, err, TagPartUUID(slotGUID), slotVG, slotLV, slotTags[1])
	}
}

func TestParseFixtures(t *testing.T) {
	orphan := PV{Name: "/dev/loop0p1", UUID: pvUUID, Major: 259, Minor: 0, DevSize: 1 << 30, Size: 1 << 30}
	inVG := orphan
	inVG.Size, inVG.VGName, inVG.VGUUID = 1069547520, slotVG, vgUUID
	vgNoLV := VG{Name: slotVG, UUID: vgUUID, PVCount: 1, LVCount: 0, Size: 1069547520, Free: 1069547520, ExtentSize: 4 << 20, Tags: slotTags}
	vgFull := vgNoLV
	vgFull.LVCount, vgFull.Free = 1, 0
	lv := LV{Name: slotLV, UUID: "Vf18CS-bozV-FmzO-yywv-s0sr-o3IS-wsX365", VGName: slotVG, Path: "/dev/" + slotVG + "/" + slotLV, Size: 1069547520, Attr: "-wi-XX----", Tags: slotTags}
	other := PV{Name: "/dev/loop0p2", UUID: "NQ2ozQ-92yh-oSyh-nSPA-OnQq-xDYt-RwNLNw", Major: 259, Minor: 1, DevSize: 1 << 30, Size: 1069547520, VGName: "othervg", VGUUID: "Ve3pos-9pte-qNLN-qh0m-jcPV-EKbT-kLovfr"}
	otherVG := VG{Name: "othervg", UUID: other.VGUUID, PVCount: 1, LVCount: 1, Size: 1069547520, Free: 964689920, ExtentSize: 4 << 20}
	otherLV := LV{Name: "data", UUID: "mmId4U-YxIO-ankI-DsKJ-FR3B-HrOG-OJUbD0", VGName: "othervg", Path: "/dev/othervg/data", Size: 100 << 20, Attr: "-wi-XX----", Tags: []string{"owner=someone"}}
	for _, tc := range []struct {
		state string
		want  Report
	}{
		{"empty", Report{}},
		{"pv-only", Report{PVs: []PV{orphan}}},
		{"pv-vg", Report{PVs: []PV{inVG}, VGs: []VG{vgNoLV}}},
		{"ready", Report{PVs: []PV{inVG}, VGs: []VG{vgFull}, LVs: []LV{lv}}},
		{"foreign", Report{PVs: []PV{inVG, other}, VGs: []VG{otherVG, vgFull}, LVs: []LV{otherLV, lv}}},
		// vgcreate killed on the slot (loop5p1), and a foreign PV whose VG lost its metadata disk.
		{"unknown", Report{PVs: []PV{
			{Name: "/dev/loop5p1", UUID: "8f3c1e-526a-0b4c-1d9e-2f01-2345-6789ab", Major: 259, Minor: 7, DevSize: 1 << 30, Size: 1 << 30, VGUnknown: true},
			{Name: "/dev/loop5p2", UUID: unknownPV, Major: 259, Minor: 8, DevSize: 1 << 30, Size: 1 << 30, VGUnknown: true},
		}}},
	} {
		t.Run(tc.state, func(t *testing.T) {
			got := readFixtures(t, tc.state)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// readFixtures reads one state's three reports through Read and a fake executor that answers
// each argv with its fixture.
func readFixtures(t *testing.T, state string) Report {
	t.Helper()
	exec := fakeExec{
		strings.Join(PVsArgv(), " "): fixture(t, state+"-pvs.json"),
		strings.Join(VGsArgv(), " "): fixture(t, state+"-vgs.json"),
		strings.Join(LVsArgv(), " "): fixture(t, state+"-lvs.json"),
	}
	r, err := Read(context.Background(), exec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type fakeExec map[string][]byte

func (f fakeExec) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	out, ok := f[strings.Join(argv, " ")]
	if !ok {
		return nil, errors.New("unexpected argv " + strings.Join(argv, " "))
	}
	return out, nil
}

func TestReadFailsWhole(t *testing.T) {
	exec := fakeExec{strings.Join(PVsArgv(), " "): fixture(t, "ready-pvs.json")} // vgs fails
	if r, err := Read(context.Background(), exec); err == nil || !strings.Contains(err.Error(), "volume groups") || !reflect.DeepEqual(r, Report{}) {
		t.Fatalf("Read = %+v, %v; want an error naming the volume groups and nothing else", r, err)
	}
}

func TestActive(t *testing.T) {
	for attr, want := range map[string]bool{"-wi-a-----": true, "-wi-------": false, "-wi-XX----": false, "owi-aos---": true, "-wi": false} {
		if got := (LV{Attr: attr}).Active(); got != want {
			t.Errorf("Active(%q) = %v, want %v", attr, got, want)
		}
	}
}

// row builds a one-row report of kind from the fields' values, with overrides.
func oneRow(kind string, fields []string, set map[string]string, drop string) []byte {
	base := map[string]string{
		"pv_name": "/dev/sda1", "pv_uuid": "u", "pv_major": "8", "pv_minor": "1", "dev_size": "1048576", "pv_size": "1048576",
		"vg_name": "vg", "vg_uuid": "v", "pv_tags": "", "pv_missing": "",
		"pv_count": "1", "lv_count": "0", "vg_size": "4194304", "vg_free": "4194304", "vg_extent_size": "4194304", "vg_missing_pv_count": "0", "vg_tags": "a,b",
		"lv_name": "lv", "lv_uuid": "l", "lv_path": "/dev/vg/lv", "lv_size": "4194304", "lv_attr": "-wi-a-----", "lv_tags": "",
	}
	var parts []string
	for _, f := range fields {
		if f == drop {
			continue
		}
		v := base[f]
		if s, ok := set[f]; ok {
			v = s
		}
		if strings.HasPrefix(v, "RAW:") {
			parts = append(parts, `"`+f+`":`+strings.TrimPrefix(v, "RAW:"))
			continue
		}
		parts = append(parts, `"`+f+`":"`+v+`"`)
	}
	return []byte(`{"report":[{"` + kind + `":[{` + strings.Join(parts, ", ") + `}]}]}`)
}

func TestParseErrorsNameTheField(t *testing.T) {
	pvs := func(set map[string]string, drop string) []byte { return oneRow("pv", PVFields, set, drop) }
	vgs := func(set map[string]string, drop string) []byte { return oneRow("vg", VGFields, set, drop) }
	lvs := func(set map[string]string, drop string) []byte { return oneRow("lv", LVFields, set, drop) }
	// An odd PV row whose device number reads is kept with its problem (only that device is
	// in doubt); its problem is what the error would have said.
	parsePV := func(b []byte) error {
		pvs, err := ParsePVs(b)
		for _, p := range pvs {
			if p.Problem != "" {
				return errors.New(p.Problem)
			}
		}
		return err
	}
	parseVG := func(b []byte) error { _, err := ParseVGs(b); return err }
	parseLV := func(b []byte) error { _, err := ParseLVs(b); return err }
	for _, tc := range []struct {
		name  string
		parse func([]byte) error
		in    []byte
		want  string // "" for no error
	}{
		{"pv valid", parsePV, pvs(nil, ""), ""},
		{"vg valid", parseVG, vgs(nil, ""), ""},
		{"lv valid", parseLV, lvs(nil, ""), ""},
		{"empty output", parsePV, []byte(" \n"), "pvs report: empty output"},
		{"not JSON", parsePV, []byte("  PV VG\n"), "pvs report: invalid character"},
		{"no report list", parsePV, []byte(`{"pv":[]}`), `no "report" list`},
		{"no section", parseVG, []byte(`{"report":[{"pv":[]}]}`), `vgs report: no "vg" section`},
		{"section not a list", parseLV, []byte(`{"report":[{"lv":{}}]}`), "report[0].lv is not a list of objects"},
		{"a field missing", parsePV, pvs(nil, "pv_major"), "pvs report: pv[0] has no field pv_major"},
		{"a number, not a string", parseVG, vgs(map[string]string{"vg_size": "RAW:4194304"}, ""), "vg[0].vg_size is not a string: 4194304"},
		{"a size with a suffix", parsePV, pvs(map[string]string{"pv_size": "1.00m"}, ""), `pv[0].pv_size "1.00m" is not a byte count`},
		{"a negative size", parseLV, lvs(map[string]string{"lv_size": "-1"}, ""), `lv[0].lv_size "-1" is not a byte count`},
		{"a padded count", parseVG, vgs(map[string]string{"pv_count": "01"}, ""), `vg[0].pv_count "01" is not a count`},
		{"a missing flag", parsePV, pvs(map[string]string{"pv_missing": "yes"}, ""), `pv[0].pv_missing "yes" is neither "missing" nor empty`},
		{"a bad tag", parseVG, vgs(map[string]string{"vg_tags": "a,,b"}, ""), `vg[0].vg_tags "a,,b": empty tag`},
		{"no PV name", parsePV, pvs(map[string]string{"pv_name": ""}, ""), "pv[0].pv_name is empty"},
		{"a VG name without UUID", parsePV, pvs(map[string]string{"vg_uuid": ""}, ""), `pv[0].vg_name "vg" and vg_uuid "": one is empty`},
		{"more free than size", parseVG, vgs(map[string]string{"vg_free": "8388608"}, ""), "vg[0].vg_free 8388608 is more than vg_size 4194304"},
		{"a short attr", parseLV, lvs(map[string]string{"lv_attr": "-wi"}, ""), `lv[0].lv_attr "-wi" is shorter than 5 characters`},
		{"an LV without VG", parseLV, lvs(map[string]string{"vg_name": ""}, ""), "lv[0].vg_name is empty"},
		{"a log beside the report", parsePV, []byte(`{"report":[{"pv":[]}],"log":[{"log_seq_num":"1"}]}`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse(tc.in)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// One broken foreign PV never fails the report (issue 29): its row is kept, marked, by its
// device number, and every other row reads as before. A row whose device number cannot be
// read fails the whole report, since nothing says which device is in doubt.
func TestParseKeepsAnOddPVRowApart(t *testing.T) {
	good := map[string]string{"pv_name": "/dev/nvme0n1p1", "pv_uuid": "u1", "pv_major": "259", "pv_minor": "1", "dev_size": "4194304", "pv_size": "4194304",
		"vg_name": "", "vg_uuid": "", "pv_tags": "", "pv_missing": ""}
	odd := map[string]string{"pv_name": "/dev/sdz", "pv_uuid": "u2", "pv_major": "8", "pv_minor": "208", "dev_size": "4194304", "pv_size": "1.00m",
		"vg_name": "foreign", "vg_uuid": "", "pv_tags": "", "pv_missing": "yes"}
	pvs, err := ParsePVs(render(t, "pv", []map[string]string{odd, good}))
	if err != nil || len(pvs) != 2 {
		t.Fatalf("ParsePVs = %+v, %v; want both rows", pvs, err)
	}
	if pvs[0].Major != 8 || pvs[0].Minor != 208 || !strings.Contains(pvs[0].Problem, `pv[0].pv_size "1.00m" is not a byte count`) {
		t.Errorf("odd row %+v", pvs[0])
	}
	if pvs[1].Problem != "" || pvs[1].Name != "/dev/nvme0n1p1" || pvs[1].Size != 4194304 {
		t.Errorf("good row %+v", pvs[1])
	}
	odd["pv_major"] = "x"
	if pvs, err := ParsePVs(render(t, "pv", []map[string]string{odd, good})); err == nil || pvs != nil {
		t.Errorf("a row without a device number: %+v, %v; want the report to fail", pvs, err)
	}
}

func TestParseKeepsEveryRowAndTag(t *testing.T) {
	vgs, err := ParseVGs(fixture(t, "foreign-vgs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(vgs) != 2 || !slices.Equal(vgs[1].Tags, slotTags) || vgs[0].Tags != nil {
		t.Fatalf("%+v", vgs)
	}
}
