package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/lvm"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/runbook"
	"github.com/prism-storage/prism/test/e2e/drill"
)

// drillRunbookPath is the runbook the drill runs as written; hack/doccheck asks for a drill
// naming it. The suite reads it from cfg.runbooks (the guest has docs/runbooks at /opt/e2e).
const drillRunbookPath = "docs/runbooks/replace-data-disk.md"

const (
	drillPool    = "prismdrill"
	drillPoolPGs = "16"
	drillObjects = 16
)

// qlcDrive is a QLC drive the drill added, with its DB slot and its OSD.
type qlcDrive struct {
	dev  prismv1.Device
	slot prismv1.DBSlot
	osd  int
}

// replaceDataDiskDrill (PRISM_E2E_DRILLS=1) is issue 30's drill 3a on Rook's real operator: a
// third QLC OSD whose DB shares the fast device, a size-2 pool with failure domain osd holding
// objects whose checksums are recorded; then that drive dies (its NVMe-oF namespace removed,
// prism-nvmet-loop --remove), its OSD goes down and Prism keeps its slot (decision 0037);
// docs/runbooks/replace-data-disk.md's blocks run as internal/runbook parses them (the ones not
// marked not run by test/e2e); step 4 is a new drive, which takes the freed slot and gets an OSD
// once the operator's probe pod says no OSD of the node is destroyed (decision 0061).
// Every object must read back identical, and the other slots' volumes, the fast device's
// table and the other OSDs must be as before.
func replaceDataDiskDrill(fast prismv1.Device, hostname string) {
	began := time.Now()
	text, err := os.ReadFile(filepath.Join(cfg.runbooks, drill.Runbook))
	Expect(err).NotTo(HaveOccurred(), "the runbook %s (PRISM_E2E_RUNBOOKS)", drillRunbookPath)
	rb, err := runbook.Parse(string(text))
	Expect(err).NotTo(HaveOccurred(), drillRunbookPath)
	Expect(cfg.drillAdd).NotTo(BeEmpty(), "PRISM_E2E_DRILL_ADD")
	Expect(cfg.drillReplace).NotTo(BeEmpty(), "PRISM_E2E_DRILL_REPLACE")
	Expect(cfg.drillFail).NotTo(BeEmpty(), "PRISM_E2E_DRILL_FAIL")
	Expect(cfg.kubectlPrism).NotTo(BeEmpty(), "PRISM_E2E_KUBECTL_PRISM: step 5 runs `kubectl prism selection`")

	victim := addQLCDrive(cfg.drillAdd, fast, hostname, 0)
	drillMark(began, "osd.%d up on %s, DB on slot %d", victim.osd, victim.dev.Name, victim.slot.Index)
	sums := writeDrillObjects()
	drillMark(began, "pool %s: %d objects written, every PG active+clean", drillPool, len(sums))

	before := otherDevices(fast, victim)
	osdsBefore, podsBefore := osdDump(Default), osdPods(Default)
	delete(osdsBefore, victim.osd)
	delete(podsBefore, strconv.Itoa(victim.osd))

	killDrive(victim, fast, hostname, sums)
	drillMark(began, "%s dead: osd.%d down, slot %d kept", victim.dev.Name, victim.osd, victim.slot.Index)

	st := partitionStatus(storageNode(), fast.StablePath, victim.slot.Partition.Number)
	Expect(st).NotTo(BeNil())
	slotDev, err := drill.SlotDevice(*st)
	Expect(err).NotTo(HaveOccurred())
	v := drill.Victim{OSD: victim.osd, Node: cfg.node, Slot: slotDev, RookNamespace: cfg.cephNS, NewOSD: -1}
	r := &runbookRun{rb: rb, fast: fast.StablePath, slot: victim.slot.Partition.Number}
	r.step(1, v)
	drillMark(began, "runbook step 1: osd.%d out, safe to destroy", victim.osd)
	r.step(2, v)
	drillMark(began, "runbook step 2: osd.%d purged, its deployment gone", victim.osd)
	Expect(osdDump(Default)).NotTo(HaveKey(victim.osd), "osd.%d is still in the OSD map after step 2", victim.osd)
	// ceph-volume zaps through the /dev/<vg>/<lv> link (wipefs and dd on the LV's path):
	// decision 0037 saw the link gone from the agent's root once ceph-volume had run in Rook's
	// prepare pod. Said here, so that a failed step 3 is read at once.
	_, linkErr := os.Stat(slotDev)
	GinkgoWriter.Printf("before step 3: %s on the node: %v\n", slotDev, presentOr(linkErr))
	r.step(3, v)
	drillMark(began, "runbook step 3: slot %d zapped, the agent reads it Empty", victim.slot.Index)

	// Step 4: the new drive. The operator gives it the freed slot (the lowest free one: the
	// spare slot comes after it), writes its entry once its probe says no OSD of the node is
	// destroyed (decision 0061), and Rook prepares its OSD, which may take the purged id.
	fresh := addQLCDrive(cfg.drillReplace, fast, hostname, victim.slot.Partition.Number)
	Expect(fresh.slot.Index).To(Equal(victim.slot.Index), "the new drive takes the freed slot")
	Eventually(func(g Gomega) {
		devices := rookDevices(g, hostname)
		g.Expect(devices).NotTo(ContainElement(HaveKeyWithValue("name", victim.dev.StablePath)), "the dead drive's Rook entry is withdrawn")
	}).Should(Succeed())
	v.NewOSD = fresh.osd
	drillMark(began, "runbook step 4: %s in slot %d, osd.%d up", fresh.dev.Name, fresh.slot.Index, fresh.osd)

	out := r.step(5, v)
	sel := out["kubectl prism selection"]
	ns := selection(policy())
	Expect(ns).NotTo(BeNil(), "no selection for %s", cfg.node)
	i := slices.IndexFunc(ns.Capacity, func(s prismv1.SelectedDevice) bool { return s.StablePath == fresh.dev.StablePath })
	Expect(i).NotTo(Equal(-1), "the new drive is not in the policy's selection")
	Expect(row(sel, cfg.node, "capacity", fresh.dev.Name, fresh.dev.Model)).To(HaveSuffix(" "+ns.Capacity[i].DBSlot),
		"step 5: the new drive's DB SLOT is the freed slot:\n%s", sel)
	md, err := drill.ReadOSDMetadata([]byte(out["ceph osd metadata"]))
	Expect(err).NotTo(HaveOccurred(), "step 5's ceph osd metadata")
	Expect(md).To(And(HaveField("ID", fresh.osd), HaveField("Data", []string{fresh.dev.Name}),
		HaveField("DB", []string{fast.Name}), HaveField("Dedicated", true)), "step 5: the new OSD's metadata")
	drillMark(began, "runbook step 5: osd.%d data on %s, DB on %s (%d bytes)", md.ID, fresh.dev.Name, fast.Name, md.DBBytes)

	waitPGsClean(3 * cfg.timeout)
	readDrillObjects(sums)
	// Once Rook has finished with the CephCluster as the replacement left it (as spec 6b).
	waitRookReconciled()
	Expect(drill.Changed(before, otherDevices(fast, victim))).To(BeEmpty(), "devices outside the drill changed")
	expectNoOSDRestarted(osdsBefore, podsBefore)
	Expect(rb.Steps).To(HaveLen(5), "the runbook's steps (decision 0061: step 2 purges, no step 6)")
	saveArtifacts("drill-replace-data-disk", storageNode(), policy(), cephCluster())
	drillMark(began, "done: every object identical, nothing else changed")
}

// drillMark logs a drill milestone with the drill's time so far (the guest marks each spec; a
// drill is one spec).
func drillMark(began time.Time, format string, args ...any) {
	fmt.Printf("e2e-drill: %.0f s %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
}

// addQLCDrive runs argv, which makes one more drive of the QLC model appear, and waits for
// Prism and Rook: the drive inventoried in the Capacity tier, a DB slot in the node's plan (the
// partition wanted, when not 0), Rook's entry with the slot as its metadataDevice, and an OSD
// up with its data on the drive and its BlueFS DB on the slot.
func addQLCDrive(argv []string, fast prismv1.Device, hostname string, wantPartition int32) qlcDrive {
	known := map[string]bool{}
	for _, d := range storageNode().Status.Devices {
		known[d.StablePath] = true
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Run()).To(Succeed(), "%q", argv)
	var q qlcDrive
	Eventually(func(g Gomega) {
		sn := &prismv1.StorageNode{}
		g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
		i := slices.IndexFunc(sn.Status.Devices, func(d prismv1.Device) bool { return d.Model == cfg.qlcModel && !known[d.StablePath] })
		g.Expect(i).NotTo(Equal(-1), "no new %q among %v", cfg.qlcModel, models(sn))
		q.dev = sn.Status.Devices[i]
		g.Expect(q.dev.Tier).To(Equal(prismv1.TierCapacity), "%s", q.dev.TierReason)
		s := slotOf(sn, q.dev.StablePath)
		g.Expect(s).NotTo(BeNil(), "no slot for %s in %+v (selection warnings %v)", q.dev.StablePath, sn.Spec.Plan, selectionWarnings())
		q.slot = *s
		g.Expect(sn.Status.ObservedPlanGeneration).To(Equal(sn.Generation))
		g.Expect(meta.IsStatusConditionTrue(sn.Status.Conditions, prismv1.ConditionProvisioned)).To(BeTrue(), "%+v", sn.Status.Conditions)
	}).Should(Succeed())
	if wantPartition != 0 {
		Expect(q.slot.Partition.Number).To(Equal(wantPartition), "the new drive's slot")
	}
	metaDev, dbBytes, _ := dbDevice(storageNode(), fast.StablePath, q.slot)
	// A new drive of a node with entries is written once the operator's probe pod says no OSD
	// of the node is destroyed (decision 0061): the condition says NewOSDsHeld until then.
	Eventually(func(g Gomega) {
		g.Expect(rookDevices(g, hostname)).To(ContainElement(And(
			HaveKeyWithValue("name", q.dev.StablePath),
			HaveKeyWithValue("config", HaveKeyWithValue("metadataDevice", metaDev)))),
			"RookConfigured: %+v", meta.FindStatusCondition(policy().Status.Conditions, prismv1.ConditionRookConfigured))
	}).WithTimeout(2 * cfg.timeout).Should(Succeed())
	var md map[int]map[string]any
	Eventually(func(g Gomega) {
		md = osdMetadata(g)
		id := osdOn(md, q.dev.Name)
		g.Expect(id).NotTo(Equal(-1), "no OSD reports data on %s", q.dev.Name)
		g.Expect(osdDump(g)[id].Up).To(Equal(1), "osd.%d not up", id)
	}).WithTimeout(4 * cfg.timeout).WithPolling(30 * time.Second).Should(Succeed())
	q.osd = osdOn(md, q.dev.Name)
	expectDBOnPrismSlot(md[q.osd], cfg.node, q.dev.Name, fast.Name, dbBytes)
	return q
}

// selectionWarnings are the policy's warnings for the suite's node (none when it has no selection).
func selectionWarnings() []string {
	if sel := selection(policy()); sel != nil {
		return sel.Warnings
	}
	return nil
}

// rookDevices is the CephCluster's device list for the node.
func rookDevices(g Gomega, hostname string) []any {
	nodes := rookNodes(cephCluster())
	g.Expect(nodes).To(HaveKey(hostname))
	devices, _ := nodes[hostname]["devices"].([]any)
	return devices
}

// writeDrillObjects makes the pool (replicated, size 2, min_size 1, failure domain osd, the QLC
// OSDs), sets every other pool to size 2 (the guest's default is 1: a PG whose only copy was on
// the dead drive would keep safe-to-destroy saying no for good, as test/ceph's first drill run
// found), waits for every PG active+clean and writes objects of 4 KiB to 1 MiB of random bytes,
// returning their SHA-256 by name.
func writeDrillObjects() map[string][32]byte {
	mustCeph := func(args ...string) {
		out, err := ceph(args...)
		Expect(err).NotTo(HaveOccurred(), "%s", out)
	}
	mustCeph("osd", "crush", "rule", "create-replicated", "prism-drill", "default", "osd", "qlc")
	mustCeph("osd", "pool", "create", drillPool, drillPoolPGs, drillPoolPGs, "replicated", "prism-drill")
	mustCeph("osd", "pool", "application", "enable", drillPool, "rbd")
	out, err := ceph("osd", "pool", "ls", "--format", "json")
	Expect(err).NotTo(HaveOccurred())
	var pools []string
	Expect(json.Unmarshal(out, &pools)).To(Succeed(), "osd pool ls: %s", out)
	for _, p := range pools {
		mustCeph("osd", "pool", "set", p, "size", "2")
		mustCeph("osd", "pool", "set", p, "min_size", "1")
	}
	waitPGsClean(cfg.timeout)
	sums := map[string][32]byte{}
	for i := range drillObjects {
		name := fmt.Sprintf("drill-%02d", i)
		Expect(putObject(sums, name, 4096<<(i%9))).To(Succeed())
	}
	GinkgoWriter.Printf("pools %v at size 2; %d objects in %s\n", pools, len(sums), drillPool)
	return sums
}

// putObject writes an object of size random bytes and records its SHA-256 once rados says it
// is written; extra are more rados options (a timeout).
func putObject(sums map[string][32]byte, name string, size int, extra ...string) error {
	data := make([]byte, size)
	_, _ = rand.Read(data)
	out, err := rados(data, append(extra, "-p", drillPool, "put", name, "-")...)
	if err != nil {
		return fmt.Errorf("rados put %s: %w: %s", name, err, out)
	}
	sums[name] = sha256.Sum256(data)
	return nil
}

// readDrillObjects reads every object back and compares its SHA-256.
func readDrillObjects(sums map[string][32]byte) {
	for name, want := range sums {
		data, err := rados(nil, "-p", drillPool, "get", name, "-")
		Expect(err).NotTo(HaveOccurred(), "rados get %s", name)
		Expect(sha256.Sum256(data)).To(Equal(want), "object %s read back differs (%d bytes)", name, len(data))
	}
	GinkgoWriter.Printf("%d objects read back, every SHA-256 identical\n", len(sums))
}

// rados runs the rados CLI in Rook's operator pod (as ceph), stdin given, and returns its stdout.
func rados(stdin []byte, args ...string) ([]byte, error) {
	dir := "/var/lib/rook/" + cfg.cephNS
	argv := append([]string{"--kubeconfig", cfg.kubeconfig, "-n", cfg.cephNS, "exec", "-i", "deploy/rook-ceph-operator", "--",
		"rados", "-c", dir + "/" + cfg.cephNS + ".config", "-k", dir + "/client.admin.keyring"}, args...)
	cmd := exec.Command(cfg.kubectl, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("rados %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// waitPGsClean waits until every PG is active+clean (`ceph pg stat`).
func waitPGsClean(limit time.Duration) {
	Eventually(func(g Gomega) {
		out, err := ceph("pg", "stat", "--format", "json")
		g.Expect(err).NotTo(HaveOccurred())
		clean, summary, err := drill.PGsClean(out)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(clean).To(BeTrue(), summary)
	}).WithTimeout(limit).WithPolling(15 * time.Second).Should(Succeed())
}

// otherDevices is what the drill must not change: the fast device's partition table, each
// other slot's logical volume (uuid and tags: ceph-volume's ceph.* tags name its OSD), and
// the sectors written to each spare slot's volume, which nothing uses (the other OSDs write
// to their drives and slots all the time, so theirs are not compared).
func otherDevices(fast prismv1.Device, victim qlcDrive) map[string]string {
	table, err := exec.Command("sfdisk", "--dump", "/dev/"+fast.Name).Output()
	Expect(err).NotTo(HaveOccurred(), "sfdisk --dump /dev/%s", fast.Name)
	sn := storageNode()
	var paths []string
	written := map[string]string{}
	for _, s := range sn.Spec.Plan.FastDevices[0].Slots {
		if s.Index == victim.slot.Index {
			continue
		}
		st := partitionStatus(sn, fast.StablePath, s.Partition.Number)
		if st == nil || st.Volume == nil || st.Volume.Path == "" {
			continue
		}
		paths = append(paths, st.Volume.Path)
		if s.DataDevice == "" {
			written[fmt.Sprintf("sectors written to spare slot %d (%s)", s.Index, st.Volume.Path)] = sectorsWritten(st.Volume.Path)
		}
	}
	argv := lvm.LVsArgv()
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	Expect(err).NotTo(HaveOccurred(), "%q", argv)
	m, err := drill.Volumes(out, paths)
	Expect(err).NotTo(HaveOccurred())
	m["partition table of /dev/"+fast.Name] = string(table)
	maps.Copy(m, written)
	return m
}

// sectorsWritten is the volume's written sectors since boot, read from its device-mapper
// device's stat (by its dm name: the /dev/<vg>/<lv> link may be missing, decision 0037).
func sectorsWritten(volume string) string {
	vg, lv, err := drill.VolumeNames(volume)
	Expect(err).NotTo(HaveOccurred())
	host := sysfs.Host{Root: "/"}
	dm, err := host.DeviceMapper(lvm.DMName(vg, lv))
	Expect(err).NotTo(HaveOccurred(), "the device-mapper device of %s", volume)
	stat, err := os.ReadFile(filepath.Join("/sys/class/block", dm, "stat"))
	Expect(err).NotTo(HaveOccurred())
	n, err := drill.SectorsWritten(stat)
	Expect(err).NotTo(HaveOccurred())
	return strconv.FormatInt(n, 10)
}

// killDrive removes the drive's NVMe-oF namespace (prism-nvmet-loop --remove SERIAL), then
// waits for what must follow: the block device gone from the node, the OSD down in Ceph, the
// drive gone from the agent's inventory, and Prism keeping its slot: the plan and the Rook
// entry unchanged, the slot read InUse, the policy's warning naming it (decision 0037).
// Clients keep writing meanwhile, one object per poll (recorded in sums once written): an OSD
// whose BlueFS DB is on a live device may not touch its dead main device until a write comes
// (BlueStore aborts on a failed write to it; then its peers report it down at once).
func killDrive(q qlcDrive, fast prismv1.Device, hostname string, sums map[string][32]byte) {
	argv := append(slices.Clone(cfg.drillFail), q.dev.Serial)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Run()).To(Succeed(), "%q", argv)
	Eventually(func() bool {
		_, err := os.Stat("/sys/block/" + q.dev.Name)
		return os.IsNotExist(err)
	}).WithTimeout(2*time.Minute).Should(BeTrue(), "/sys/block/%s still there", q.dev.Name)
	n := 0
	Eventually(func(g Gomega) {
		name := fmt.Sprintf("drill-during-%02d", n)
		n++
		// A write to a PG of the dying OSD waits for the map that marks it down: bounded.
		if err := putObject(sums, name, 64<<10, "--rados-osd-op-timeout", "60"); err != nil {
			GinkgoWriter.Printf("while %s dies: %v\n", q.dev.Name, err)
		}
		g.Expect(osdDump(g)[q.osd].Up).To(Equal(0), "osd.%d still up", q.osd)
	}).WithTimeout(2 * cfg.timeout).WithPolling(15 * time.Second).Should(Succeed())
	GinkgoWriter.Printf("osd.%d down after %d writes during the failure\n", q.osd, n)
	kept := fmt.Sprintf("DB slot %d keeps %s", q.slot.Index, q.dev.StablePath)
	Eventually(func(g Gomega) {
		sn := &prismv1.StorageNode{}
		g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
		g.Expect(sn.Status.Devices).NotTo(ContainElement(HaveField("StablePath", q.dev.StablePath)), "the dead drive is still inventoried")
		s := slotOf(sn, q.dev.StablePath)
		g.Expect(s).NotTo(BeNil(), "the plan gave the dead drive's slot away: %+v", sn.Spec.Plan)
		g.Expect(s.Partition.Number).To(Equal(q.slot.Partition.Number))
		st := partitionStatus(sn, fast.StablePath, s.Partition.Number)
		g.Expect(st).NotTo(BeNil())
		g.Expect(st.DBContent).To(Equal(prismv1.DBSlotInUse), "%+v", st)
		g.Expect(selectionWarnings()).To(ContainElement(ContainSubstring(kept)))
		g.Expect(rookDevices(g, hostname)).To(ContainElement(HaveKeyWithValue("name", q.dev.StablePath)), "the Rook entry is kept")
	}).Should(Succeed())
}

// runbookRun runs the runbook's blocks, step by step, as internal/runbook parses them.
type runbookRun struct {
	rb   runbook.Runbook
	fast string // the fast device's stable path and the slot's partition, for the waits
	slot int32
}

// step runs the step's blocks not marked not run by this drill and returns each command's
// output by its first three words, as the runbook has them.
func (r *runbookRun) step(n int, v drill.Victim) map[string]string {
	out := map[string]string{}
	values := v.Values()
	Expect(r.rb.CheckValues(values)).To(Succeed())
	for _, b := range r.rb.Steps[n-1].Blocks {
		if why := b.SkippedBy(drill.Name); why != "" {
			GinkgoWriter.Printf("step %d: block at line %d not run (%s)\n", n, b.Line, why)
			continue
		}
		for _, c := range b.Commands {
			out[strings.Join(c.Words[:min(3, len(c.Words))], " ")] = r.run(n, c, values)
		}
	}
	return out
}

// run runs one command where drill.Route says, repeated as its comment asks.
func (r *runbookRun) run(step int, c runbook.Command, values map[string]string) string {
	argv, err := c.Argv(values)
	Expect(err).NotTo(HaveOccurred(), drillRunbookPath)
	where, err := drill.Route(argv)
	Expect(err).NotTo(HaveOccurred(), "%s line %d", drillRunbookPath, c.Line)
	repeat, err := drill.RepeatOf(c.Comment)
	Expect(err).NotTo(HaveOccurred(), "%s line %d", drillRunbookPath, c.Line)
	var out string
	once := func(g Gomega) {
		b, err := runWhere(where, argv)
		out = string(b)
		g.Expect(err).NotTo(HaveOccurred(), "%s", out)
		if repeat == drill.UntilSlotEmpty {
			content, found, err := drill.SlotContent(b, r.fast, r.slot)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(content).To(Equal(prismv1.DBSlotEmpty), "the agent reads the slot %q (%s)", content, found)
		}
	}
	start := time.Now()
	if repeat == drill.Once {
		once(Default)
	} else {
		Eventually(once).WithTimeout(3 * cfg.timeout).WithPolling(15 * time.Second).Should(Succeed())
	}
	GinkgoWriter.Printf("step %d, line %d: ran %q (%.0f s): %s\n", step, c.Line, strings.Join(argv, " "), time.Since(start).Seconds(), lastLine(out))
	return out
}

// runWhere runs argv where the runbook's command belongs (drill.Route).
func runWhere(where drill.Where, argv []string) ([]byte, error) {
	switch where {
	case drill.InOperatorPod:
		return ceph(argv[1:]...)
	case drill.Kubectl:
		env := []string{"KUBECONFIG=" + cfg.kubeconfig}
		if cfg.kubectlPrism != "" {
			env = append(env, "PATH="+filepath.Dir(cfg.kubectlPrism)+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
		return kubectl(env, argv[1:]...)
	case drill.OnNode:
		return exec.Command(argv[0], argv[1:]...).CombinedOutput()
	}
	return nil, fmt.Errorf("no place to run %q", argv)
}

// presentOr is err, or "present" when there is none.
func presentOr(err error) any {
	if err != nil {
		return err
	}
	return "present"
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}
