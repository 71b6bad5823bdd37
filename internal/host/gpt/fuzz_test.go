package gpt

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseSfdiskJSON checks that any input either fails cleanly or gives a Table whose
// invariants hold, and that the Table survives a round trip through sfdisk's JSON shape.
func FuzzParseSfdiskJSON(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sfdisk", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"partitiontable":{"label":"gpt","unit":"sectors","firstlba":34,"lastlba":99,"sectorsize":512,"partitions":[{"node":"x9","start":1,"size":1,"type":"t"}]}}`))
	f.Add([]byte(`{"partitiontable":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ParseSfdiskJSON(data)
		if err != nil {
			if tab.HasTable() || len(tab.Partitions) > 0 {
				t.Fatalf("error %v with a non-zero table %+v", err, tab)
			}
			return
		}
		if !tab.HasTable() || checkSectorSize(tab.SectorSize) != nil {
			t.Fatalf("label %q sector size %d", tab.Label, tab.SectorSize)
		}
		if tab.Label == LabelGPT && (tab.FirstLBA < 0 || tab.LastLBA < tab.FirstLBA || tab.LastLBA > math.MaxInt64/tab.SectorSize) {
			t.Fatalf("lba range %d..%d", tab.FirstLBA, tab.LastLBA)
		}
		for i, p := range tab.Partitions {
			if i > 0 && tab.Partitions[i-1].Number >= p.Number {
				t.Fatalf("partitions not sorted and unique: %+v", tab.Partitions)
			}
			if p.Number < 1 || p.StartBytes < 0 || p.SizeBytes <= 0 || p.EndBytes() < p.StartBytes ||
				p.StartBytes%tab.SectorSize != 0 || p.SizeBytes%tab.SectorSize != 0 || p.TypeGUID == "" ||
				p.TypeGUID != strings.ToLower(p.TypeGUID) {
				t.Fatalf("bad partition %+v", p)
			}
		}
		again, err := ParseSfdiskJSON(render(t, tab))
		if err != nil {
			t.Fatalf("re-parsing %+v: %v", tab, err)
		}
		if !reflect.DeepEqual(again, tab) {
			t.Fatalf("round trip changed the table:\n%+v\n%+v", tab, again)
		}
	})
}

// render writes a Table the way sfdisk --json does.
func render(t *testing.T, tab Table) []byte {
	type part struct {
		Node  string `json:"node"`
		Start int64  `json:"start"`
		Size  int64  `json:"size"`
		Type  string `json:"type"`
		UUID  string `json:"uuid,omitempty"`
		Name  string `json:"name,omitempty"`
	}
	pt := map[string]any{"label": tab.Label, "id": tab.ID, "device": "/dev/sdz", "unit": "sectors", "sectorsize": tab.SectorSize}
	if tab.Label == LabelGPT || tab.FirstLBA != 0 || tab.LastLBA != 0 {
		pt["firstlba"], pt["lastlba"] = tab.FirstLBA, tab.LastLBA
	}
	var parts []part
	for _, p := range tab.Partitions {
		parts = append(parts, part{fmt.Sprintf("/dev/sdz%d", p.Number), p.StartBytes / tab.SectorSize, p.SizeBytes / tab.SectorSize, p.TypeGUID, p.UUID, p.Name})
	}
	if parts != nil {
		pt["partitions"] = parts
	}
	b, err := json.Marshal(map[string]any{"partitiontable": pt})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
