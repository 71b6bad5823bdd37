package decide

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// TestRecordedChainOSDsUseTheReportedVolumes ties what Ceph reported of the OSDs Rook made
// after the hot-add (`ceph osd metadata`, saved by the suite) to what the agent reported: each
// entry's QLC drive carries exactly one OSD, its data on that drive, its BlueFS DB dedicated
// and on the fast drive, exactly the size of the volume the agent reported Ready at the path
// the entry names.
func TestRecordedChainOSDsUseTheReportedVolumes(t *testing.T) {
	r := loadStage(t, "hot-added")
	var meta map[string]map[string]any
	b, err := os.ReadFile(filepath.Join(recordedChain, "hot-added", "osd-metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	byPath := map[string]prismv1.Device{}
	for _, d := range r.sn.Status.Devices {
		byPath[d.StablePath] = d
	}
	volumes := map[string]prismv1.PartitionStatus{}
	for _, p := range r.sn.Status.Partitions {
		if p.Volume != nil {
			volumes[p.Volume.Path] = p
		}
	}
	nodes, _, _ := unstructured.NestedSlice(r.cluster.Object, "spec", "storage", "nodes")
	seen := 0
	for _, n := range nodes {
		devs, _, _ := unstructured.NestedSlice(n.(map[string]any), "devices")
		for _, d := range devs {
			name, _, _ := unstructured.NestedString(d.(map[string]any), "name")
			db, _, _ := unstructured.NestedString(d.(map[string]any), "config", "metadataDevice")
			data, ok := byPath[name]
			vol, vok := volumes[db]
			if !ok || !vok || vol.Volume.State != prismv1.DBVolumeReady {
				t.Fatalf("entry %s with DB %s: in the inventory %t, volume %+v", name, db, ok, vol.Volume)
			}
			fast := byPath[vol.Device]
			osds := osdsWithData(meta, data.Name)
			if len(osds) != 1 {
				t.Fatalf("Ceph reports %d OSDs with data on %s (%s), want 1", len(osds), data.Name, name)
			}
			osd := osds[0]
			if osd["bluefs_dedicated_db"] != "1" || osd["bluefs_db_devices"] != fast.Name || osd["bluefs_db_size"] != strconv.FormatInt(vol.Volume.SizeBytes, 10) {
				t.Errorf("osd.%v on %s: DB on %v, %v bytes, dedicated %v; the agent reported %s on %s, %d bytes",
					osd["id"], data.Name, osd["bluefs_db_devices"], osd["bluefs_db_size"], osd["bluefs_dedicated_db"], db, fast.Name, vol.Volume.SizeBytes)
			}
			seen++
		}
	}
	if seen != 2 || len(meta) != 2 {
		t.Errorf("%d entries checked, %d OSDs in Ceph; the recorded run had hot-added a second QLC drive", seen, len(meta))
	}
}

// osdsWithData is the metadata of each OSD whose BlueStore data is on the kernel device name.
func osdsWithData(meta map[string]map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, m := range meta {
		if m["bluestore_bdev_devices"] == name {
			out = append(out, m)
		}
	}
	return out
}
