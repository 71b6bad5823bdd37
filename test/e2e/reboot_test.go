package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/gpt"
	"github.com/prism-storage/prism/internal/host/lvm"
	"github.com/prism-storage/prism/internal/node/agent"
)

// The reboot drill (issue 30 item 3c): the node restarts with Prism's partitions and LVs on its
// drives. The guest runs the suite twice (hack/e2e/run.sh PRISM_E2E_REBOOT=1): before the
// restart, the chain's specs up to the OSDs (label reboot-before) and recordForReboot, which
// writes rebootRecord to PRISM_E2E_REBOOT_RECORD on the work disk; after a second boot on the
// same disks, the specs labelled reboot-after compare the node with that record.

// The drill's phase, from PRISM_E2E_REBOOT.
const (
	rebootRecordPhase = "record"
	rebootVerifyPhase = "verify"
)

// provisioningReasons are the agent's events that say it wrote (or refused to write) a device:
// a rebooted node with its slots in place must record none of them.
var provisioningReasons = []string{agent.EventPartitionsCreated, agent.EventDBVolumeCreated,
	agent.EventDeviceRefused, agent.EventDBVolumeRefused}

// rebootRecord is what the drill keeps of the node before it restarts.
type rebootRecord struct {
	Time                   metav1.Time            `json:"time"`
	Generation             int64                  `json:"generation"`
	ObservedPlanGeneration int64                  `json:"observedPlanGeneration"`
	Plan                   *prismv1.NodePlan      `json:"plan"`
	Partitions             []partitionRecord      `json:"partitions"`
	PolicyGeneration       int64                  `json:"policyGeneration"`
	CephGeneration         int64                  `json:"cephGeneration"`
	Hostname               string                 `json:"hostname"`
	CephEntry              map[string]any         `json:"cephEntry"`
	Events                 []string               `json:"events"` // names of the StorageNode's provisioning events
	Drives                 map[string]driveRecord `json:"drives"` // by stable path
	LVs                    map[string]string      `json:"lvs"`    // vg/lv of each DB volume -> LV uuid
	// OSDs are Ceph's OSD ids and their fsids (`ceph osd dump`), with Rook's operator only.
	OSDs map[string]string `json:"osds,omitempty"`
}

// partitionRecord is the part of a PartitionStatus a reboot must not change.
type partitionRecord struct {
	Device, Label, State, Volume, VolumeState, DBContent string
	Number                                               int32
}

// driveRecord is a drive's GPT identity and checksums of the regions Prism owns or must not touch.
type driveRecord struct {
	DiskGUID   string            `json:"diskGUID"`
	Partitions map[string]string `json:"partitions"` // number -> unique partition GUID
	Sums       map[string]string `json:"sums"`       // region -> sha256
}

func partitionRecords(sn *prismv1.StorageNode) []partitionRecord {
	var out []partitionRecord
	for _, p := range sn.Status.Partitions {
		r := partitionRecord{Device: p.Device, Number: p.Number, Label: p.Label, State: string(p.State), DBContent: string(p.DBContent)}
		if p.Volume != nil {
			r.Volume, r.VolumeState = p.Volume.Path, string(p.Volume.State)
		}
		out = append(out, r)
	}
	return out
}

// planDrives are the stable paths of the plan's fast devices and data devices.
func planDrives(plan *prismv1.NodePlan) []string {
	var out []string
	for _, f := range plan.FastDevices {
		out = append(out, f.StablePath)
		for _, s := range f.Slots {
			if s.DataDevice != "" && !slices.Contains(out, s.DataDevice) {
				out = append(out, s.DataDevice)
			}
		}
	}
	return out
}

const mib = 1 << 20

// readDrive reads a drive's GPT and checksums its first and last MiB (the tables) and the first
// MiB of each partition (an LVM label and metadata area, a BlueStore label), read-only.
func readDrive(path string) (driveRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return driveRecord{}, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return driveRecord{}, err
	}
	dev, err := filepath.EvalSymlinks(path)
	if err != nil {
		return driveRecord{}, err
	}
	b, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(dev), "queue/logical_block_size"))
	if err != nil {
		return driveRecord{}, err
	}
	sector, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return driveRecord{}, fmt.Errorf("%s logical_block_size: %w", dev, err)
	}
	rec := driveRecord{Partitions: map[string]string{}, Sums: map[string]string{}}
	sum := func(name string, off int64) error {
		buf := make([]byte, mib)
		if _, err := f.ReadAt(buf, off); err != nil {
			return fmt.Errorf("%s: reading %s at %d: %w", path, name, off, err)
		}
		h := sha256.Sum256(buf)
		rec.Sums[name] = hex.EncodeToString(h[:])
		return nil
	}
	if err := sum("first MiB", 0); err != nil {
		return rec, err
	}
	if err := sum("last MiB", size-mib); err != nil {
		return rec, err
	}
	d, err := gpt.ReadDisk(f, size, sector)
	if err != nil {
		return rec, err
	}
	if !d.Primary.Valid {
		return rec, nil // no table: a data drive Prism has not written
	}
	rec.DiskGUID = d.Primary.DiskGUID
	for _, e := range d.Primary.Entries {
		n := strconv.Itoa(e.Number)
		rec.Partitions[n] = e.UUID
		if err := sum("partition "+n+" first MiB", e.FirstLBA*sector); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

// readLVs is each DB volume's LV uuid, by vg/lv, from the host's lvs.
func readLVs(sn *prismv1.StorageNode) map[string]string {
	out, err := exec.Command(lvm.LVsArgv()[0], lvm.LVsArgv()[1:]...).Output()
	Expect(err).NotTo(HaveOccurred(), "lvs")
	lvs, err := lvm.ParseLVs(out)
	Expect(err).NotTo(HaveOccurred(), "lvs: %s", out)
	m := map[string]string{}
	for _, p := range sn.Status.Partitions {
		if p.Volume == nil {
			continue
		}
		for _, lv := range lvs {
			if lvm.LVPath(lv.VGName, lv.Name) == p.Volume.Path {
				m[lv.VGName+"/"+lv.Name] = lv.UUID
			}
		}
	}
	return m
}

// osdFSIDs are Ceph's OSDs, id -> fsid: an OSD re-created after a reboot has a new fsid.
func osdFSIDs() map[string]string {
	out, err := ceph("osd", "dump", "--format", "json")
	Expect(err).NotTo(HaveOccurred())
	var dump struct {
		OSDs []struct {
			OSD  int    `json:"osd"`
			UUID string `json:"uuid"`
		} `json:"osds"`
	}
	Expect(json.Unmarshal(out, &dump)).To(Succeed(), "osd dump: %s", out)
	m := map[string]string{}
	for _, o := range dump.OSDs {
		m[strconv.Itoa(o.OSD)] = o.UUID
	}
	return m
}

// provisioningEvents are the names of the StorageNode's events with provisioningReasons.
func provisioningEvents() []string {
	list, err := clientset.CoreV1().Events("").List(ctx(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=StorageNode,involvedObject.name=" + cfg.node})
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range list.Items {
		if slices.Contains(provisioningReasons, e.Reason) {
			out = append(out, e.Namespace+"/"+e.Name+" "+e.Reason)
		}
	}
	slices.Sort(out)
	return out
}

// takeRebootRecord reads what the drill compares, from the API server and the host.
func takeRebootRecord(hostname string) rebootRecord {
	sn := storageNode()
	Expect(sn.Spec.Plan).NotTo(BeNil())
	c := cephCluster()
	r := rebootRecord{Time: metav1.Now(), Generation: sn.Generation, ObservedPlanGeneration: sn.Status.ObservedPlanGeneration,
		Plan: sn.Spec.Plan, Partitions: partitionRecords(sn), PolicyGeneration: policy().Generation,
		CephGeneration: c.GetGeneration(), Hostname: hostname, CephEntry: rookNodes(c)[hostname],
		Events: provisioningEvents(), Drives: map[string]driveRecord{}, LVs: readLVs(sn)}
	if cfg.rookOperator {
		r.OSDs = osdFSIDs()
	}
	for _, path := range planDrives(sn.Spec.Plan) {
		d, err := readDrive(path)
		Expect(err).NotTo(HaveOccurred())
		r.Drives[path] = d
	}
	return r
}

// recordForReboot writes the record to PRISM_E2E_REBOOT_RECORD (and the artifacts).
func recordForReboot(hostname string) {
	Expect(cfg.rebootRecord).NotTo(BeEmpty(), "PRISM_E2E_REBOOT_RECORD: where the record outlives the reboot")
	r := takeRebootRecord(hostname)
	Expect(r.Drives).NotTo(BeEmpty())
	Expect(r.LVs).NotTo(BeEmpty(), "no DB volume to keep across the reboot")
	b, err := json.MarshalIndent(r, "", "  ")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(cfg.rebootRecord, b, 0o644)).To(Succeed())
	saveJSON("reboot", "before.json", r)
	GinkgoWriter.Printf("reboot record: %s\n", b)
}

// rebootDifferences lists what changed between the record and now, each as one line.
func rebootDifferences(before, after rebootRecord) []string {
	var out []string
	diff := func(what string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			out = append(out, fmt.Sprintf("%s: before %s, after %s", what, ja, jb))
		}
	}
	diff("StorageNode generation", before.Generation, after.Generation)
	diff("StorageNode observedPlanGeneration", before.ObservedPlanGeneration, after.ObservedPlanGeneration)
	diff("StorageNode plan", before.Plan, after.Plan)
	diff("StorageNode partitions", before.Partitions, after.Partitions)
	diff("policy generation", before.PolicyGeneration, after.PolicyGeneration)
	diff("CephCluster generation", before.CephGeneration, after.CephGeneration)
	diff("CephCluster entry", before.CephEntry, after.CephEntry)
	// Only new ones count: the API server expires events (an hour by default).
	diff("provisioning events since the record", []string(nil), newEvents(before.Events, after.Events))
	diff("DB volumes' LV uuids", before.LVs, after.LVs)
	diff("OSD ids and fsids", before.OSDs, after.OSDs)
	for path, d := range before.Drives {
		diff(path, d, after.Drives[path])
	}
	return out
}

// newEvents are the events of after that before does not name.
func newEvents(before, after []string) []string {
	var out []string
	for _, e := range after {
		if !slices.Contains(before, e) {
			out = append(out, e)
		}
	}
	return out
}

// writtenSectors is, for each whole NVMe disk not mounted, the sectors written to it since
// boot (/sys/block/NAME/stat, field 7).
func writtenSectors() map[string]int64 {
	mounts, err := os.ReadFile("/proc/self/mounts")
	Expect(err).NotTo(HaveOccurred())
	mounted := map[string]bool{}
	for _, l := range strings.Split(string(mounts), "\n") {
		if src, _, _ := strings.Cut(l, " "); strings.HasPrefix(src, "/dev/") {
			if dev, err := filepath.EvalSymlinks(src); err == nil {
				mounted[filepath.Base(dev)] = true
			}
		}
	}
	out := map[string]int64{}
	disks, _ := filepath.Glob("/sys/block/nvme*n*")
	for _, d := range disks {
		name := filepath.Base(d)
		if strings.Contains(name, "c") || mounted[name] {
			continue // one path of a multipath namespace; the work disk
		}
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		Expect(err).NotTo(HaveOccurred())
		f := strings.Fields(string(b))
		Expect(len(f)).To(BeNumerically(">=", 7), "%s/stat: %q", d, b)
		n, err := strconv.ParseInt(f[6], 10, 64)
		Expect(err).NotTo(HaveOccurred())
		out[name] = n
	}
	return out
}

var _ = Describe("after the node reboots", Label("reboot-after"), Ordered, func() {
	var before rebootRecord

	BeforeAll(func() {
		if cfg.reboot != rebootVerifyPhase {
			Skip("PRISM_E2E_REBOOT=verify runs this, on the second boot of hack/e2e/run.sh PRISM_E2E_REBOOT=1")
		}
		b, err := os.ReadFile(cfg.rebootRecord)
		Expect(err).NotTo(HaveOccurred(), "the record written before the reboot")
		Expect(json.Unmarshal(b, &before)).To(Succeed())
	})

	It("the agent inventories the node again and its StorageNode is Inventoried and Provisioned again on the same plan", func() {
		Eventually(func(g Gomega) {
			sn := storageNode()
			g.Expect(sn.Status.LastInventoryTime).NotTo(BeNil())
			g.Expect(sn.Status.LastInventoryTime.After(before.Time.Time)).To(BeTrue(),
				"last inventory %s, record %s: the agent has not published since the reboot", sn.Status.LastInventoryTime, before.Time)
			g.Expect(sn.Status.ObservedPlanGeneration).To(Equal(sn.Generation))
			for _, t := range []string{prismv1.ConditionInventoried, prismv1.ConditionProvisioned} {
				g.Expect(meta.IsStatusConditionTrue(sn.Status.Conditions, t)).To(BeTrue(), "%s: %+v", t, sn.Status.Conditions)
			}
			for _, p := range sn.Status.Partitions {
				g.Expect(p.State).To(Equal(prismv1.PartitionReady), "%+v", p)
				if p.Volume != nil {
					g.Expect(p.Volume.State).To(Equal(prismv1.DBVolumeReady), "%+v", p.Volume)
				}
			}
		}).Should(Succeed())
		GinkgoWriter.Printf("StorageNode after the reboot: %+v\n", storageNode().Status.Conditions)
	})

	It("nothing was re-partitioned or re-created: GPT and partition GUIDs, LV uuids, checksums, plan, Rook entry and events as before", func() {
		after := takeRebootRecord(before.Hostname)
		saveJSON("reboot", "after.json", after)
		// Compared as the record was read back: through JSON (numbers, times, empty lists).
		b, err := json.Marshal(after)
		Expect(err).NotTo(HaveOccurred())
		after = rebootRecord{}
		Expect(json.Unmarshal(b, &after)).To(Succeed())
		Expect(rebootDifferences(before, after)).To(BeEmpty())
	})

	It("no sector was written to any drive since the boot", func() {
		w := writtenSectors()
		GinkgoWriter.Printf("sectors written since boot: %v\n", w)
		Expect(w).NotTo(BeEmpty())
		for name, n := range w {
			Expect(n).To(BeZero(), "%s: %d sectors written since the boot", name, n)
		}
	})
})
