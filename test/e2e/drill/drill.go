// Package drill is the pure part of the e2e chain's failure drill of
// docs/runbooks/replace-data-disk.md (test/e2e drill_test.go, PRISM_E2E_DRILLS=1): where each of
// the runbook's commands runs, the values of its placeholders, how a command's comment asks it
// to be repeated, and the reading of what kubectl, Ceph and LVM print back. Apart from the
// cluster, so that `make test` checks it.
package drill

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/lvm"
)

// Name is how the runbook's `<!-- not run by DRILL: ... -->` markers name this drill.
const Name = "test/e2e"

// Runbook is the runbook the drill runs, under the runbooks directory; hack/doccheck asks for a
// drill naming docs/runbooks/replace-data-disk.md, which test/e2e's drill file does.
const Runbook = "replace-data-disk.md"

// Where is where a runbook command runs.
type Where int

const (
	// InOperatorPod: ceph, in Rook's operator pod with the admin key it keeps, as the suite's
	// other Ceph calls (Rook's toolbox holds the same key; the guest has none).
	InOperatorPod Where = iota + 1
	// Kubectl: kubectl with the suite's kubeconfig in KUBECONFIG (a plugin reads it there too).
	Kubectl
	// OnNode: ceph-volume, on the node itself: the suite runs in the guest, as root.
	OnNode
)

// Route says where the command runs; a program the drill has no place for is an error that
// names it (mark the block not run by this drill, or teach the drill).
func Route(argv []string) (Where, error) {
	if len(argv) == 0 {
		return 0, errors.New("an empty command")
	}
	switch argv[0] {
	case "ceph":
		return InOperatorPod, nil
	case "kubectl":
		return Kubectl, nil
	case "ceph-volume":
		return OnNode, nil
	}
	return 0, fmt.Errorf("the e2e drill cannot run %q: mark its block <!-- not run by %s: REASON -->, or teach the drill", argv[0], Name)
}

// Victim is what the runbook's placeholders stand for: the dead drive's OSD, the node, the
// OSD's DB slot and Rook's namespace; NewOSD once the replacement's OSD is up.
type Victim struct {
	OSD           int
	Node          string
	Slot          string // $SLOT_DEVICE (SlotDevice)
	RookNamespace string
	NewOSD        int // -1 until known
}

// Values are the runbook's placeholders filled; $NEW_OSD_ID only once it is known.
func (v Victim) Values() map[string]string {
	m := map[string]string{
		"OSD_ID":         strconv.Itoa(v.OSD),
		"NODE":           v.Node,
		"SLOT_DEVICE":    v.Slot,
		"ROOK_NAMESPACE": v.RookNamespace,
	}
	if v.NewOSD >= 0 {
		m["NEW_OSD_ID"] = strconv.Itoa(v.NewOSD)
	}
	return m
}

// SlotDevice is $SLOT_DEVICE as the runbook defines it from the StorageNode's status: the
// slot's logical volume once the agent reports it Ready, else (the DB on the partition itself,
// volume state PartitionInUse) the partition.
func SlotDevice(st prismv1.PartitionStatus) (string, error) {
	switch {
	case st.Volume != nil && st.Volume.State == prismv1.DBVolumeReady && st.Volume.Path != "":
		return st.Volume.Path, nil
	case st.Volume != nil && st.Volume.State == prismv1.DBVolumePartitionInUse && st.Path != "":
		return st.Path, nil
	}
	return "", fmt.Errorf("partition %d of %s: no volume Ready and no partition in use (volume %+v): the runbook gives no $SLOT_DEVICE", st.Number, st.Device, st.Volume)
}

// Repeat is how a command's trailing comment asks for it to be repeated.
type Repeat int

const (
	Once Repeat = iota
	// UntilExit0: "# repeat until it exits 0".
	UntilExit0
	// UntilSlotEmpty: "# until the slot's dbContent is Empty": the StorageNode printed names
	// the slot Empty.
	UntilSlotEmpty
)

// RepeatOf reads the comment; one that asks for a repeat the drill does not know is an error,
// so that a reworded runbook cannot make the drill run a waiting step once.
func RepeatOf(comment string) (Repeat, error) {
	c := strings.TrimSpace(comment)
	switch {
	case c == "":
		return Once, nil
	case strings.HasPrefix(c, "repeat until it exits 0"):
		return UntilExit0, nil
	case strings.HasPrefix(c, "until the slot's dbContent is Empty"):
		return UntilSlotEmpty, nil
	case strings.HasPrefix(c, "repeat") || strings.HasPrefix(c, "until"):
		return Once, fmt.Errorf("comment %q asks for a repeat the drill does not know", c)
	}
	return Once, nil
}

// SlotContent reads `kubectl get storagenode NAME -o yaml`: what the agent reports partition
// number of the fast device holds.
func SlotContent(out []byte, fast string, number int32) (prismv1.DBSlotContent, string, error) {
	var sn prismv1.StorageNode
	if err := yaml.Unmarshal(out, &sn); err != nil {
		return "", "", fmt.Errorf("the StorageNode printed: %w", err)
	}
	if sn.Kind != "StorageNode" {
		return "", "", fmt.Errorf("the object printed is a %q, not a StorageNode", sn.Kind)
	}
	for _, p := range sn.Status.Partitions {
		if p.Device == fast && p.Number == number {
			return p.DBContent, p.DBFound, nil
		}
	}
	return "", "", fmt.Errorf("StorageNode %s: no status.partitions entry for partition %d of %s", sn.Name, number, fast)
}

// PGsClean reads `ceph pg stat -f json`: whether every PG is active+clean, with the states by count.
func PGsClean(out []byte) (bool, string, error) {
	var s struct {
		Summary *struct {
			ByState []struct {
				Name string `json:"name"`
				Num  int    `json:"num"`
			} `json:"num_pg_by_state"`
			NumPGs *int `json:"num_pgs"`
		} `json:"pg_summary"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return false, "", fmt.Errorf("pg stat: %w", err)
	}
	if s.Summary == nil || s.Summary.NumPGs == nil {
		return false, "", errors.New("pg stat: no pg_summary.num_pgs")
	}
	var parts []string
	clean := 0
	for _, st := range s.Summary.ByState {
		parts = append(parts, fmt.Sprintf("%d %s", st.Num, st.Name))
		if st.Name == "active+clean" {
			clean += st.Num
		}
	}
	slices.Sort(parts)
	summary := fmt.Sprintf("%d pgs: %s", *s.Summary.NumPGs, strings.Join(parts, ", "))
	return *s.Summary.NumPGs > 0 && clean == *s.Summary.NumPGs, summary, nil
}

// OSDDevices is what one OSD daemon reports of its devices (`ceph osd metadata ID`).
type OSDDevices struct {
	ID        int
	Data, DB  []string // kernel names
	Dedicated bool     // bluefs_dedicated_db
	DBBytes   int64
}

// ReadOSDMetadata reads `ceph osd metadata ID` (one JSON object, the CLI's default format).
func ReadOSDMetadata(out []byte) (OSDDevices, error) {
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return OSDDevices{}, fmt.Errorf("osd metadata: %w", err)
	}
	id, ok := m["id"].(float64)
	if !ok {
		return OSDDevices{}, fmt.Errorf("osd metadata: no id in %.200s", out)
	}
	list := func(k string) []string {
		s, _ := m[k].(string)
		var out []string
		for _, d := range strings.Split(s, ",") {
			if d != "" {
				out = append(out, d)
			}
		}
		return out
	}
	d := OSDDevices{ID: int(id), Data: list("bluestore_bdev_devices"), DB: list("bluefs_db_devices"), Dedicated: m["bluefs_dedicated_db"] == "1"}
	if s, _ := m["bluefs_db_size"].(string); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return d, fmt.Errorf("osd metadata: bluefs_db_size %q: %w", s, err)
		}
		d.DBBytes = n
	}
	return d, nil
}

// Volumes are the logical volumes of an `lvs` report (lvm.LVsArgv) by path, each as
// "uuid tags": what must not change on the slots the drill does not touch (a zap of the wrong
// slot clears its ceph.* tags; a slot made again gets a new uuid).
func Volumes(out []byte, paths []string) (map[string]string, error) {
	lvs, err := lvm.ParseLVs(out)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, p := range paths {
		i := slices.IndexFunc(lvs, func(l lvm.LV) bool { return l.Path == p })
		if i < 0 {
			return nil, fmt.Errorf("lvs: no logical volume %s", p)
		}
		tags := slices.Clone(lvs[i].Tags)
		slices.Sort(tags)
		m[p] = lvs[i].UUID + " " + strings.Join(tags, ",")
	}
	return m, nil
}

// Changed lists what differs between two snapshots of the devices outside the drill, by key.
func Changed(before, after map[string]string) []string {
	var out []string
	for k, b := range before {
		if a, ok := after[k]; !ok {
			out = append(out, fmt.Sprintf("%s: gone (was %q)", k, b))
		} else if a != b {
			out = append(out, fmt.Sprintf("%s: %q, before the drill %q", k, a, b))
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			out = append(out, fmt.Sprintf("%s: new (%q)", k, a))
		}
	}
	slices.Sort(out)
	return out
}

// SectorsWritten reads a block device's stat file (/sys/block/<dev>/stat,
// Documentation/block/stat.rst): its seventh field, the 512-byte sectors written since boot.
func SectorsWritten(stat []byte) (int64, error) {
	f := strings.Fields(string(stat))
	if len(f) < 11 {
		return 0, fmt.Errorf("block stat %q: %d fields, want at least 11", stat, len(f))
	}
	n, err := strconv.ParseInt(f[6], 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("block stat %q: write sectors %q", stat, f[6])
	}
	return n, nil
}

// VolumeNames splits a slot's volume path, /dev/<vg>/<lv>, into its VG and LV names.
func VolumeNames(path string) (vg, lv string, err error) {
	rest, ok := strings.CutPrefix(path, "/dev/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("volume path %q: want /dev/<vg>/<lv>", path)
	}
	return parts[0], parts[1], nil
}
