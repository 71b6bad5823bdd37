package lvm

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// addFixtures seeds a fuzz target with every fixture of one report.
func addFixtures(f *testing.F, report string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*-"+report+".json"))
	if len(files) == 0 {
		f.Fatalf("no %s fixtures", report)
	}
	for _, file := range files {
		f.Add(fixture(f, filepath.Base(file)))
	}
}

// render writes rows the way LVM's JSON report does: every value a string.
func render(t *testing.T, kind string, rows []map[string]string) []byte {
	if rows == nil {
		rows = []map[string]string{}
	}
	b, err := json.Marshal(map[string]any{"report": []map[string]any{{kind: rows}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func itoa(n int) string       { return strconv.Itoa(n) }
func i64(n int64) string      { return strconv.FormatInt(n, 10) }
func tags(ts []string) string { return strings.Join(ts, ",") }

// FuzzParsePVs: any input fails cleanly or gives PVs whose invariants hold and that survive a
// round trip through LVM's JSON shape.
func FuzzParsePVs(f *testing.F) {
	addFixtures(f, "pvs")
	f.Add([]byte(`{"report":[{"pv":[{"pv_name":"/dev/a"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pvs, err := ParsePVs(data)
		if err != nil {
			if pvs != nil {
				t.Fatalf("error %v with PVs %+v", err, pvs)
			}
			return
		}
		var rows []map[string]string
		var whole []PV
		for _, p := range pvs {
			if p.Problem != "" {
				if p.Major < 0 || p.Minor < 0 {
					t.Fatalf("odd row with a bad device number %+v", p)
				}
				continue
			}
			if p.Name == "" || p.UUID == "" || p.Major < 0 || p.Minor < 0 || p.Size < 0 || p.DevSize < 0 || (p.VGName == "") != (p.VGUUID == "") {
				t.Fatalf("bad PV %+v", p)
			}
			checkTags(t, p.Tags)
			missing := ""
			if p.Missing {
				missing = "missing"
			}
			vg := p.VGName
			if p.VGUnknown {
				if vg != "" || p.VGUUID != "" {
					t.Fatalf("PV of an unknown VG with a VG %+v", p)
				}
				vg = unknownVG
			}
			rows = append(rows, map[string]string{"pv_name": p.Name, "pv_uuid": p.UUID, "pv_major": itoa(p.Major), "pv_minor": itoa(p.Minor),
				"dev_size": i64(p.DevSize), "pv_size": i64(p.Size), "vg_name": vg, "vg_uuid": p.VGUUID, "pv_tags": tags(p.Tags), "pv_missing": missing})
			whole = append(whole, p)
		}
		again, err := ParsePVs(render(t, "pv", rows))
		if err != nil || len(again)+len(whole) > 0 && !reflect.DeepEqual(again, whole) {
			t.Fatalf("round trip: %+v -> %+v (%v)", whole, again, err)
		}
	})
}

// FuzzParseVGs is FuzzParsePVs for the VG report.
func FuzzParseVGs(f *testing.F) {
	addFixtures(f, "vgs")
	f.Add([]byte(`{"report":[{"vg":[]}],"log":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		vgs, err := ParseVGs(data)
		if err != nil {
			if vgs != nil {
				t.Fatalf("error %v with VGs %+v", err, vgs)
			}
			return
		}
		var rows []map[string]string
		for _, v := range vgs {
			if v.Name == "" || v.UUID == "" || v.PVCount < 0 || v.LVCount < 0 || v.MissingPVCount < 0 || v.Size < 0 || v.Free < 0 || v.Free > v.Size || v.ExtentSize < 0 {
				t.Fatalf("bad VG %+v", v)
			}
			checkTags(t, v.Tags)
			rows = append(rows, map[string]string{"vg_name": v.Name, "vg_uuid": v.UUID, "pv_count": itoa(v.PVCount), "lv_count": itoa(v.LVCount),
				"vg_size": i64(v.Size), "vg_free": i64(v.Free), "vg_extent_size": i64(v.ExtentSize), "vg_missing_pv_count": itoa(v.MissingPVCount), "vg_tags": tags(v.Tags)})
		}
		again, err := ParseVGs(render(t, "vg", rows))
		if err != nil || !reflect.DeepEqual(again, vgs) {
			t.Fatalf("round trip: %+v -> %+v (%v)", vgs, again, err)
		}
	})
}

// FuzzParseLVs is FuzzParsePVs for the LV report.
func FuzzParseLVs(f *testing.F) {
	addFixtures(f, "lvs")
	f.Add([]byte(`{"report":[{"lv":[{"lv_name":"a","lv_uuid":"b","vg_name":"c","lv_path":"","lv_size":"0","lv_attr":"-wi-a-----","lv_tags":"x,y"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lvs, err := ParseLVs(data)
		if err != nil {
			if lvs != nil {
				t.Fatalf("error %v with LVs %+v", err, lvs)
			}
			return
		}
		var rows []map[string]string
		for _, l := range lvs {
			if l.Name == "" || l.UUID == "" || l.VGName == "" || l.Size < 0 || len(l.Attr) < 5 {
				t.Fatalf("bad LV %+v", l)
			}
			checkTags(t, l.Tags)
			rows = append(rows, map[string]string{"lv_name": l.Name, "lv_uuid": l.UUID, "vg_name": l.VGName, "lv_path": l.Path,
				"lv_size": i64(l.Size), "lv_attr": l.Attr, "lv_tags": tags(l.Tags)})
		}
		again, err := ParseLVs(render(t, "lv", rows))
		if err != nil || !reflect.DeepEqual(again, lvs) {
			t.Fatalf("round trip: %+v -> %+v (%v)", lvs, again, err)
		}
	})
}

func checkTags(t *testing.T, ts []string) {
	if ts != nil && len(ts) == 0 {
		t.Fatal("an empty, non-nil tag list")
	}
	for _, tag := range ts {
		if err := CheckTag(tag); err != nil {
			t.Fatal(err)
		}
	}
}
