package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prism-storage/prism/internal/bytesize"
	"github.com/prism-storage/prism/internal/node/osdstats"
	"github.com/prism-storage/prism/internal/plan/rook"
	"github.com/prism-storage/prism/test/e2e/prometheus"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
)

func ctx() context.Context { return context.Background() }

const (
	policyName = "e2e"
	// roleLabel selects the node; the suite adds it (docs/user-guide.md uses the same key).
	roleLabel = "prism.storage.io/role"
)

// policyYAML is the policy the suite applies: the fast model's drives carry one 4 GiB DB slot
// per QLC drive of the QLC model, plus a spare; no cache.
func policyYAML(mode prismv1.PolicyMode) string {
	return fmt.Sprintf(`apiVersion: prism.storage.io/v1alpha1
kind: HybridStoragePolicy
metadata: {name: %s}
spec:
  mode: %s
  nodeSelector: {matchLabels: {%s: e2e}}
  fastDevices: {tiers: [Fast], models: [%q]}
  capacityDevices: {tiers: [Capacity], models: [%q]}
  db: {size: 4Gi, spareSlots: 1}
  cache: {mode: None}
  osd: {deviceClass: qlc}
  cephCluster: {namespace: %s, name: %s}
`, policyName, mode, roleLabel, cfg.fastModel, cfg.qlcModel, cfg.cephNS, cfg.cephName)
}

// helm runs the helm binary against the suite's kubeconfig, its output to the GinkgoWriter.
func helm(args ...string) error {
	args = append([]string{"--kubeconfig", cfg.kubeconfig}, args...)
	cmd := exec.Command(cfg.helm, args...)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	GinkgoWriter.Printf("$ %s %s\n", cfg.helm, strings.Join(args, " "))
	return cmd.Run()
}

func storageNode() *prismv1.StorageNode {
	sn := &prismv1.StorageNode{}
	Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
	return sn
}

func policy() *prismv1.HybridStoragePolicy {
	p := &prismv1.HybridStoragePolicy{}
	Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, p)).To(Succeed())
	return p
}

func cephCluster() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(hybridstoragepolicy.CephClusterGVK)
	Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.cephNS, Name: cfg.cephName}, u)).To(Succeed())
	return u
}

// expectOneDeviceEntry checks that the storage.nodes entry of HOST names one device, DATA, with
// its metadataDevice META, and returns that device's config and the entry's.
func expectOneDeviceEntry(nodes map[string]map[string]any, host, data, meta string) (devCfg, nodeCfg map[string]any) {
	Expect(nodes).To(HaveKey(host))
	entry := nodes[host]
	GinkgoWriter.Printf("CephCluster storage.nodes[%s]: %v\n", host, entry)
	devices, _ := entry["devices"].([]any)
	Expect(devices).To(HaveLen(1))
	dev := devices[0].(map[string]any)
	Expect(dev["name"]).To(Equal(data))
	devCfg, _ = dev["config"].(map[string]any)
	Expect(devCfg).To(HaveKeyWithValue("metadataDevice", meta))
	nodeCfg, _ = entry["config"].(map[string]any)
	return devCfg, nodeCfg
}

// rookNodes is the CephCluster's spec.storage.nodes by name.
func rookNodes(u *unstructured.Unstructured) map[string]map[string]any {
	list, _, err := unstructured.NestedSlice(u.Object, "spec", "storage", "nodes")
	Expect(err).NotTo(HaveOccurred())
	out := map[string]map[string]any{}
	for _, n := range list {
		m := n.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

// deviceByModel is the node's one inventoried device of that model.
func deviceByModel(sn *prismv1.StorageNode, model string) (prismv1.Device, bool) {
	for _, d := range sn.Status.Devices {
		if d.Model == model {
			return d, true
		}
	}
	return prismv1.Device{}, false
}

func selection(p *prismv1.HybridStoragePolicy) *prismv1.NodeSelection {
	for i := range p.Status.Nodes {
		if p.Status.Nodes[i].Node == cfg.node {
			return &p.Status.Nodes[i]
		}
	}
	return nil
}

var _ = Describe("the Prism chain", Ordered, func() {
	// What the earlier specs found, for the later ones.
	var fast, qlc prismv1.Device
	var hostname string
	qlcOSD := -1 // the OSD Rook made on the QLC drive
	lostDB := "" // why Prism withholds partition DB entries from this cluster (decision 0035)

	It("installs the chart and the agent is Ready on the node", Label("reboot-before"), func() {
		args := []string{"upgrade", "--install", "prism", cfg.chart, "--namespace", cfg.namespace, "--create-namespace",
			// The endurance page, at the suite's Prometheus (spec 6f deploys it at that address).
			"--set", "operator.prometheusURL=" + prometheus.URL}
		for _, s := range cfg.helmSet {
			args = append(args, "--set", s)
		}
		// Under TCG the apiserver may time a create out; upgrade --install finishes the release.
		Eventually(func() error { return helm(args...) }).WithTimeout(3 * cfg.timeout).WithPolling(10 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			ds := &appsv1.DaemonSet{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-agent"}, ds)).To(Succeed())
			g.Expect(ds.Status.NumberReady).To(BeNumerically(">=", 1), "agent DaemonSet: %+v", ds.Status)
			g.Expect(agentPod(g).Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-operator"}, d)).To(Succeed())
			g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1), "operator Deployment: %+v", d.Status)
		}).Should(Succeed())
	})

	It("inventories the fast and the QLC drive in their tiers", Label("reboot-before"), func() {
		fast, qlc = inventoriedDrives()
		Expect(fast.Tier).To(Equal(prismv1.TierFast), "fast drive: %s", fast.TierReason)
		Expect(qlc.Tier).To(Equal(prismv1.TierCapacity), "QLC drive: %s", qlc.TierReason)
		Expect(fast.Eligibility.Eligible).To(BeTrue(), "fast drive: %+v", fast.Eligibility.Reasons)
		Expect(qlc.Eligibility.Eligible).To(BeTrue(), "QLC drive: %+v", qlc.Eligibility.Reasons)
		Expect(fast.StablePath).To(HavePrefix("/dev/disk/by-id/"))
		Expect(qlc.StablePath).To(HavePrefix("/dev/disk/by-id/"))
		Expect(fast.Partitions).To(BeEmpty(), "the fast drive must start empty")
		sn := storageNode()
		Expect(meta.IsStatusConditionTrue(sn.Status.Conditions, prismv1.ConditionInventoried)).To(BeTrue(), "%+v", sn.Status.Conditions)
	})

	It("labels the node; a DryRun policy publishes its selection and writes nothing", Label("reboot-before"), func() {
		node := &corev1.Node{}
		Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, node)).To(Succeed())
		hostname = node.Labels[corev1.LabelHostname]
		Expect(hostname).NotTo(BeEmpty())
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"e2e"}}}`, roleLabel)
		Expect(k8s.Patch(ctx(), node, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())

		p := &prismv1.HybridStoragePolicy{}
		Expect(yaml.Unmarshal([]byte(policyYAML(prismv1.ModeDryRun)), p)).To(Succeed())
		Expect(k8s.Create(ctx(), p)).To(Succeed())
		var sel *prismv1.NodeSelection
		Eventually(func(g Gomega) {
			p := &prismv1.HybridStoragePolicy{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, p)).To(Succeed())
			g.Expect(p.Status.ObservedGeneration).To(Equal(p.Generation))
			sel = selection(p)
			g.Expect(sel).NotTo(BeNil(), "status: %+v", p.Status)
			g.Expect(sel.Fast).To(ConsistOf(HaveField("StablePath", fast.StablePath)), "selection: %+v", sel)
			g.Expect(sel.Capacity).To(ConsistOf(HaveField("StablePath", qlc.StablePath)), "selection: %+v", sel)
		}).Should(Succeed())
		Expect(sel.Capacity[0].DBSlot).To(Equal(prismv1.PartitionPath(fast.StablePath, 1)), "the planned DB slot")
		// Nothing written: no claim or plan on the StorageNode, no partition, no Rook entry.
		Consistently(func(g Gomega) {
			sn := &prismv1.StorageNode{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
			g.Expect(sn.Spec.PolicyName).To(BeEmpty())
			g.Expect(sn.Spec.Plan).To(BeNil())
			g.Expect(sn.Status.Partitions).To(BeEmpty())
			d, _ := deviceByModel(sn, cfg.fastModel)
			g.Expect(d.Partitions).To(BeEmpty())
			g.Expect(rookNodes(cephCluster())).NotTo(HaveKey(hostname))
		}).WithTimeout(30 * time.Second).WithPolling(10 * time.Second).Should(Succeed())
	})

	It("README's plugin commands show the drives in their tiers and the DryRun selection with its DB slot; README's policy sample passes the API server", func() {
		if cfg.kubectlPrism == "" {
			Skip("PRISM_E2E_KUBECTL_PRISM is not set: no kubectl-prism binary to run README's commands with")
		}
		var devices, sel string
		Eventually(func(g Gomega) {
			var err error
			devices, err = kubectlPlugin("devices")
			g.Expect(err).NotTo(HaveOccurred())
		}).WithTimeout(cfg.timeout).Should(Succeed())
		// NODE DEVICE MODEL SIZE TIER WHY ELIGIBLE
		for _, d := range []struct {
			name, model, tier string
		}{{fast.Name, fast.Model, "Fast"}, {qlc.Name, qlc.Model, "Capacity"}} {
			r := row(devices, cfg.node, d.name, d.model)
			Expect(r).NotTo(BeEmpty(), "no row for %s (%s) in:\n%s", d.name, d.model, devices)
			Expect(r).To(ContainSubstring(" "+d.tier+" "), r)
			Expect(r).To(HaveSuffix(" yes"), "eligible: %s", r)
		}
		Eventually(func(g Gomega) {
			var err error
			sel, err = kubectlPlugin("selection")
			g.Expect(err).NotTo(HaveOccurred())
		}).WithTimeout(cfg.timeout).Should(Succeed())
		Expect(sel).To(ContainSubstring("Policy "+policyName+" (DryRun): 1 nodes selected, 1 with both tiers."), sel)
		Expect(row(sel, cfg.node, "fast", fast.Name, fast.Model)).NotTo(BeEmpty(), sel)
		slot := row(sel, cfg.node, "capacity", qlc.Name, qlc.Model)
		Expect(slot).To(HaveSuffix(" "+selection(policy()).Capacity[0].DBSlot), "the capacity row names its DB slot:\n%s", sel)

		sample := filepath.Join(cfg.samples, "hybridstoragepolicy.yaml")
		out, err := kubectlApplyDryRun(sample)
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(out).To(ContainSubstring("created (server dry run)"), out)
	})

	It("in Apply, the plan reaches the StorageNode and the agent makes the partitions Ready", Label("reboot-before"), func() {
		p := policy()
		Expect(k8s.Patch(ctx(), p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"mode":"Apply"}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			sn := &prismv1.StorageNode{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
			g.Expect(sn.Spec.PolicyName).To(Equal(policyName))
			g.Expect(sn.Spec.Mode).To(Equal(prismv1.ModeApply))
			g.Expect(sn.Spec.Plan).NotTo(BeNil())
			g.Expect(sn.Spec.Plan.FastDevices).To(ConsistOf(HaveField("StablePath", fast.StablePath)))
			g.Expect(sn.Spec.Plan.FastDevices[0].Slots).To(ContainElement(HaveField("DataDevice", qlc.StablePath)))
			expectPlanCarriedOut(g, sn)
			// Each DB slot has its logical volume (decision 0036; the chart's default).
			for _, slot := range sn.Spec.Plan.FastDevices[0].Slots {
				st := partitionStatus(sn, fast.StablePath, slot.Partition.Number)
				g.Expect(st).NotTo(BeNil())
				g.Expect(st.Volume).NotTo(BeNil(), "partition %d has no volume", slot.Partition.Number)
				g.Expect(*st.Volume).To(And(HaveField("State", prismv1.DBVolumeReady),
					HaveField("Path", prismv1.DBVolumePath(fast.StablePath, slot.Index))), "%+v", st.Volume)
				g.Expect(st.Volume.SizeBytes).To(BeNumerically(">", slot.Partition.SizeBytes-8<<20), "the LV fills the partition")
				// No OSD yet: the agent reads each new volume Empty (decision 0037).
				g.Expect(st.DBContent).To(Equal(prismv1.DBSlotEmpty), "partition %d: %+v", slot.Partition.Number, st)
			}
			// Twice the wait: before its first table the agent reads the whole 400 GB fast
			// device sparsely (decision 0041: 4 KiB of every MiB, 1.5 GB over NVMe/TCP inside
			// the TCG guest): the spec passed in 318 s on a quiet host (2026-12-07); with Go
			// builds beside the guest the partitions were Ready after 15 min 12 s, 12 min of it
			// before the first write (the sparse read and the probes): the spec timed out (session 23).
		}).WithTimeout(2 * cfg.timeout).Should(Succeed())
		sn := storageNode()
		GinkgoWriter.Printf("plan: %+v\npartitions: %+v\n", sn.Spec.Plan, sn.Status.Partitions)
	})

	It("writes Prism's entry into the CephCluster: the QLC drive with its DB slot (or withholds it from a Ceph that loses partition DBs)", Label("reboot-before"), func() {
		sn := storageNode()
		var slot prismv1.DBSlot
		for _, s := range sn.Spec.Plan.FastDevices[0].Slots {
			if s.DataDevice == qlc.StablePath {
				slot = s
			}
		}
		wantMeta, _, onVolume := dbDevice(sn, fast.StablePath, slot)
		if why := rook.PartitionDBWithheld(cephCluster()); !onVolume && why != "" {
			// Decision 0035: this Ceph's ceph-volume would prepare an OSD that cannot start
			// from a partition DB slot (or its version is not known yet); Prism writes no
			// entry and says why.
			lostDB = why
			Eventually(func(g Gomega) {
				p := &prismv1.HybridStoragePolicy{}
				g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, p)).To(Succeed())
				c := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(hybridstoragepolicy.ReasonCephLosesPartitionDB), "%+v", c)
				g.Expect(c.Message).To(ContainSubstring("ceph/ceph#69506"))
			}).Should(Succeed())
			Expect(rookNodes(cephCluster())).NotTo(HaveKey(hostname))
			return
		}
		Eventually(func(g Gomega) {
			p := &prismv1.HybridStoragePolicy{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, p)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, prismv1.ConditionRookConfigured)).To(BeTrue(), "%+v", p.Status.Conditions)
		}).Should(Succeed())
		c := cephCluster()
		devCfg, nodeCfg := expectOneDeviceEntry(rookNodes(c), hostname, qlc.StablePath, wantMeta)
		if onVolume {
			// ceph-volume takes an existing LV whole: no size is passed.
			Expect(nodeCfg).NotTo(HaveKey("databaseSizeMB"))
			Expect(devCfg).NotTo(HaveKey("databaseSizeMB"))
		} else {
			Expect(nodeCfg).To(HaveKeyWithValue("databaseSizeMB", strconv.FormatInt(slot.Partition.SizeBytes>>20, 10)))
		}
		Expect(nodeCfg).To(HaveKeyWithValue("deviceClass", "qlc"))
		Expect(c.GetAnnotations()).To(HaveKeyWithValue("nodes.prism.storage.io/"+policyName, hostname))
		saveArtifacts("entry-written", sn, policy(), c, kubeNode())
	})

	It("Rook's operator prepares the QLC drive: its OSD is up, data on the QLC drive, BlueFS DB on Prism's slot", Label("reboot-before"), func() {
		if !cfg.rookOperator {
			Skip("no Rook operator in this cluster (PRISM_E2E_ROOK_OPERATOR=1 says there is)")
		}
		if lostDB != "" {
			Skip("Prism wrote no entry (decision 0035): " + lostDB)
		}
		slot := slotOf(storageNode(), qlc.StablePath)
		Expect(slot).NotTo(BeNil(), "no DB slot for %s", qlc.StablePath)
		var meta map[int]map[string]any
		// Rook orchestrates mons, then the mgr, then the OSDs: under TCG that alone takes a while.
		Eventually(func(g Gomega) {
			g.Expect(osdsUp(osdDump(g))).To(BeNumerically(">=", 1), "no OSD up yet")
			meta = osdMetadata(g)
			g.Expect(osdOn(meta, qlc.Name)).NotTo(Equal(-1), "no OSD reports data on %s", qlc.Name)
		}).WithTimeout(3 * cfg.timeout).WithPolling(30 * time.Second).Should(Succeed())
		qlcOSD = osdOn(meta, qlc.Name)
		_, dbBytes, _ := dbDevice(storageNode(), fast.StablePath, *slot)
		expectDBOnPrismSlot(meta[qlcOSD], cfg.node, qlc.Name, fast.Name, dbBytes)
		Expect(deviceClasses(Default)).To(HaveKeyWithValue(qlcOSD, "qlc"), "the policy's osd.deviceClass")
		Eventually(func(g Gomega) { g.Expect(osdPods(g)).To(HaveKey(strconv.Itoa(qlcOSD))) }).Should(Succeed())
		// The agent reads the OSD's BlueStore label on the slot's volume, so the slot is never
		// given to another drive (decision 0037), and the spare slot still Empty. It reads at
		// its next pass: a udev event of Rook's LVs, or its 5 min period.
		Eventually(func(g Gomega) {
			sn := &prismv1.StorageNode{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
			st := partitionStatus(sn, fast.StablePath, slot.Partition.Number)
			g.Expect(st).NotTo(BeNil())
			g.Expect(st.DBContent).To(Equal(prismv1.DBSlotInUse), "%+v", st)
			g.Expect(st.DBFound).To(ContainSubstring("ceph_bluestore"), "%+v", st)
			if spare := spareSlot(sn); spare != nil {
				g.Expect(partitionStatus(sn, fast.StablePath, spare.Partition.Number)).To(HaveField("DBContent", prismv1.DBSlotEmpty))
			}
		}).WithTimeout(8 * time.Minute).WithPolling(15 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("partitions with the OSD: %+v\n", storageNode().Status.Partitions)
	})

	It("the agent reads the OSD's admin socket: the StorageNode lists the OSD with its BlueFS DB, and `kubectl prism osds` prints it", Label("reboot-before"), func() {
		if qlcOSD < 0 {
			Skip("no OSD on the QLC drive (the spec before says why)")
		}
		slot := slotOf(storageNode(), qlc.StablePath)
		Expect(slot).NotTo(BeNil(), "no DB slot for %s", qlc.StablePath)
		_, dbBytes, _ := dbDevice(storageNode(), fast.StablePath, *slot)
		// The agent polls the sockets under <dataDirHostPath>/exporter once per -health-period
		// and writes them at its next pass (a udev event, or its 5 min period).
		var osd prismv1.OSDStatus
		Eventually(func(g Gomega) {
			sn := &prismv1.StorageNode{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
			i := slices.IndexFunc(sn.Status.OSDs, func(o prismv1.OSDStatus) bool { return int(o.ID) == qlcOSD })
			g.Expect(i).NotTo(Equal(-1), "osd.%d not in status.osds: %+v", qlcOSD, sn.Status.OSDs)
			osd = sn.Status.OSDs[i]
			// BlueFS's db_total_bytes is the DB device's size: Prism's slot (two significant digits).
			g.Expect(osd.DBTotalBytes).To(BeNumerically("~", dbBytes, dbBytes/20), "%+v", osd)
			g.Expect(osd.DBUsedBytes).To(BeNumerically(">", 0), "%+v", osd)
			g.Expect(osd.Spilled).To(BeFalse(), "%+v", osd)
			g.Expect(osd.Message).NotTo(ContainSubstring("last read:"), "every admin socket command answered")
			g.Expect(osd.Classes).To(ContainElement(And(HaveField("Name", osdstats.ClassSST), HaveField("OccupiedBytes", Not(BeNil())))), "%+v", osd)
		}).WithTimeout(8 * time.Minute).WithPolling(15 * time.Second).Should(Succeed())
		saveArtifacts("osd-table", storageNode())
		if cfg.kubectlPrism == "" {
			Skip("PRISM_E2E_KUBECTL_PRISM is not set: no kubectl-prism binary")
		}
		out, err := kubectlPlugin("osds")
		Expect(err).NotTo(HaveOccurred())
		// NODE OSD DB USED DB SLOT SPILLED ...
		r := row(out, cfg.node, fmt.Sprintf("osd.%d", qlcOSD))
		Expect(r).NotTo(BeEmpty(), "no row for osd.%d in:\n%s", qlcOSD, out)
		Expect(r).To(ContainSubstring(" "+bytesize.IEC(osd.DBTotalBytes)+" "), "the DB slot column: %s", r)
	})

	// A second node joins here, on two nodes only (twonode_test.go; never run yet).
	twoNodeSpecs()

	// The reboot drill's first phase ends here (reboot_test.go): what the node holds now must
	// come back unchanged after the guest restarts.
	It("records the node for the reboot drill: GPT and partition GUIDs, LV uuids, checksums, plan, Rook entry", Label("reboot-before"), func() {
		if cfg.reboot != rebootRecordPhase {
			Skip("PRISM_E2E_REBOOT=record runs this, on the first boot of hack/e2e/run.sh PRISM_E2E_REBOOT=1")
		}
		recordForReboot(hostname)
	})

	It("serves the agent's metrics, naming both drives with their tiers", func() {
		pod := agentPod(Default)
		// The exporter reads the devices once per -health-period (1 min): its first poll can come
		// before the agent's first inventory, so the devices may appear up to a period later
		// (seen 2026-11-26: the spec ran 60 s after the agent started).
		Eventually(func(g Gomega) {
			body, err := scrapeAgent(ctx(), pod.Name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(metricLines(body, "prism_device_info{")).To(ContainElements(
				And(ContainSubstring(`model="`+cfg.fastModel+`"`), ContainSubstring(`tier="Fast"`)),
				And(ContainSubstring(`model="`+cfg.qlcModel+`"`), ContainSubstring(`tier="Capacity"`))))
			g.Expect(metricLines(body, "prism_node_inventory_timestamp_seconds")).NotTo(BeEmpty())
		}).WithTimeout(3 * time.Minute).Should(Succeed())
	})

	It("a Prometheus scrapes every agent; every dashboard query has data from them; the endurance page names every node and its drives", expectPrometheusSeesEveryAgent)

	It("refuses every Prism endpoint to a pod of another namespace: 401 without a token, 403 with its own; the chart's scraper and page reader pass", expectEndpointsRefuseStrangers)

	It("the operator's pod passes the API server's Pod Security restricted; the privileged agent's is refused there", expectOperatorRestricted)

	It("a hot-added QLC drive takes the spare DB slot and joins the Rook entry; no OSD restarts", func() {
		if len(cfg.hotAdd) == 0 {
			Skip("no way to add a drive to this node (PRISM_E2E_HOTADD)")
		}
		spare := spareSlot(storageNode())
		Expect(spare).NotTo(BeNil(), "the policy keeps one spare DB slot")
		var before map[int]osdState
		var podsBefore map[string]osdPod
		if cfg.rookOperator {
			before, podsBefore = osdDump(Default), osdPods(Default)
			GinkgoWriter.Printf("before the hot-add: osd dump %+v, pods %+v\n", before, podsBefore)
		}
		cmd := exec.Command(cfg.hotAdd[0], cfg.hotAdd[1:]...)
		cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
		Expect(cmd.Run()).To(Succeed(), "hot-add: %q", cfg.hotAdd)

		var qlc2 prismv1.Device
		Eventually(func(g Gomega) {
			sn := &prismv1.StorageNode{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
			var found bool
			for _, d := range sn.Status.Devices {
				if d.Model == cfg.qlcModel && d.StablePath != qlc.StablePath {
					qlc2, found = d, true
				}
			}
			g.Expect(found).To(BeTrue(), "no second %q among %v", cfg.qlcModel, models(sn))
		}).Should(Succeed())
		Expect(qlc2.Tier).To(Equal(prismv1.TierCapacity), "hot-added drive: %s", qlc2.TierReason)
		Expect(qlc2.Eligibility.Eligible).To(BeTrue(), "hot-added drive: %+v", qlc2.Eligibility.Reasons)

		Eventually(func(g Gomega) {
			sn := &prismv1.StorageNode{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
			g.Expect(sn.Spec.Plan).NotTo(BeNil())
			s2 := slotOf(sn, qlc2.StablePath)
			g.Expect(s2).NotTo(BeNil(), "no slot for %s in %+v", qlc2.StablePath, sn.Spec.Plan)
			g.Expect(s2.Partition.Number).To(Equal(spare.Partition.Number), "the spare slot")
			g.Expect(slotOf(sn, qlc.StablePath).Partition.Number).To(Equal(int32(1)), "the first drive keeps its slot")
			g.Expect(sn.Status.ObservedPlanGeneration).To(Equal(sn.Generation))
			g.Expect(meta.IsStatusConditionTrue(sn.Status.Conditions, prismv1.ConditionProvisioned)).To(BeTrue(), "%+v", sn.Status.Conditions)
		}).Should(Succeed())
		if lostDB != "" {
			Expect(rookNodes(cephCluster())).NotTo(HaveKey(hostname), "no entry (decision 0035): %s", lostDB)
			return
		}
		spareMeta, spareBytes, _ := dbDevice(storageNode(), fast.StablePath, *spare)
		// A new drive of a node with entries waits for the operator's probe to say no OSD of the
		// node is destroyed (decision 0061). Without Rook's operator there is no Ceph to ask: the
		// drive stays out of the entry, and the policy says why.
		if !cfg.rookOperator {
			Eventually(func(g Gomega) {
				c := meta.FindStatusCondition(policy().Status.Conditions, prismv1.ConditionRookConfigured)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal("NewOSDsHeld"), "%s", c.Message)
				g.Expect(c.Message).To(ContainSubstring(qlc2.StablePath + ": a new drive; waiting: "))
			}).Should(Succeed())
			devices, _ := rookNodes(cephCluster())[hostname]["devices"].([]any)
			Expect(devices).To(HaveLen(1), "without Ceph's answers only the first drive has an entry")
			return
		}
		Eventually(func(g Gomega) {
			nodes := rookNodes(cephCluster())
			g.Expect(nodes).To(HaveKey(hostname))
			devices, _ := nodes[hostname]["devices"].([]any)
			g.Expect(devices).To(ContainElement(And(
				HaveKeyWithValue("name", qlc2.StablePath),
				HaveKeyWithValue("config", HaveKeyWithValue("metadataDevice", spareMeta)))),
				"RookConfigured: %+v", meta.FindStatusCondition(policy().Status.Conditions, prismv1.ConditionRookConfigured))
			g.Expect(devices).To(HaveLen(2))
		}).WithTimeout(2 * cfg.timeout).Should(Succeed())
		var after map[int]osdState
		var metaAfter map[int]map[string]any
		Eventually(func(g Gomega) {
			after = osdDump(g)
			g.Expect(osdsUp(after)).To(BeNumerically(">=", 2), "the new OSD is not up yet")
			metaAfter = osdMetadata(g)
			g.Expect(osdOn(metaAfter, qlc2.Name)).NotTo(Equal(-1), "no OSD reports data on %s", qlc2.Name)
		}).WithTimeout(3 * cfg.timeout).WithPolling(30 * time.Second).Should(Succeed())
		id2 := osdOn(metaAfter, qlc2.Name)
		Expect(id2).NotTo(Equal(qlcOSD))
		expectDBOnPrismSlot(metaAfter[id2], cfg.node, qlc2.Name, fast.Name, spareBytes)
		// Once Rook has finished with the changed CephCluster, no OSD that was up restarted.
		waitRookReconciled()
		saveArtifacts("hot-added", storageNode(), policy(), cephCluster(), kubeNode())
		saveJSON("hot-added", "osd-metadata.json", metaAfter)
		expectNoOSDRestarted(before, podsBefore)
	})

	It("the replacement gate's Ceph probe, started as the operator starts it, runs under the kubelet and answers as the admin CLI does", func() {
		if !cfg.rookOperator || qlcOSD < 0 {
			Skip("the probe asks Rook's Ceph about an OSD (PRISM_E2E_ROOK_OPERATOR=1)")
		}
		expectProbeAnswersCeph(cfg.node, hostname, rook.ProbeDrive{Path: qlc.StablePath, Kernel: qlc.Name}, qlcOSD)
	})

	It("drill: a QLC drive dies; docs/runbooks/replace-data-disk.md run as written puts a new drive in its slot, every object reads back, nothing else changes", func() {
		if !cfg.drills {
			Skip("PRISM_E2E_DRILLS is not 1: no failure drills (docs/e2e.md)")
		}
		if !cfg.rookOperator || lostDB != "" {
			Skip("the drill needs Rook's operator and Prism's entries (PRISM_E2E_ROOK_OPERATOR=1, decision 0035)")
		}
		replaceDataDiskDrill(fast, hostname)
	})

	It("deleting the policy withdraws the Rook entries and releases the node, and removes no partition", func() {
		var before map[int]osdState
		var podsBefore map[string]osdPod
		if cfg.rookOperator {
			before, podsBefore = osdDump(Default), osdPods(Default)
		}
		Expect(k8s.Delete(ctx(), policy())).To(Succeed())
		Eventually(func() bool {
			err := k8s.Get(ctx(), client.ObjectKey{Name: policyName}, &prismv1.HybridStoragePolicy{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "the policy's finalizer was not released")
		c := cephCluster()
		Expect(rookNodes(c)).NotTo(HaveKey(hostname))
		Expect(c.GetAnnotations()).NotTo(HaveKey("nodes.prism.storage.io/" + policyName))
		sn := storageNode()
		Expect(sn.Spec.PolicyName).To(BeEmpty())
		Expect(sn.Spec.Plan).To(BeNil())
		expectReleasedKeepsPartitions(cfg.node)
		if !cfg.rookOperator {
			return
		}
		expectOSDsKept(before, podsBefore)
		saveArtifacts("policy-deleted", storageNode(), cephCluster())
	})

	It("Ceph ends HEALTH_OK, or with only the checks a one-node guest under emulation raises", func() {
		if !cfg.rookOperator {
			Skip("no Rook operator in this cluster (PRISM_E2E_ROOK_OPERATOR=1 says there is)")
		}
		// Settled (a reconcile's PG peering may still be under way), then held for two minutes:
		// a failed mgr module stays failed, one that fails late shows within the hold.
		check := func(g Gomega) {
			h := readCephHealth(g)
			GinkgoWriter.Printf("ceph health %s: %d checks\n", h.Status, len(h.Checks))
			g.Expect(unexpectedChecks(h)).To(BeEmpty(), "ceph health %s", h.Status)
		}
		Eventually(check).WithTimeout(cfg.timeout).WithPolling(30 * time.Second).Should(Succeed())
		Consistently(check).WithTimeout(2 * time.Minute).WithPolling(30 * time.Second).Should(Succeed())
		saveJSON("end", "health-detail.json", readCephHealth(Default))
	})
})

// inventoriedDrives waits for the node's StorageNode to list a drive of the fast and one of
// the QLC model.
func inventoriedDrives() (fast, qlc prismv1.Device) {
	Eventually(func(g Gomega) {
		sn := &prismv1.StorageNode{}
		g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
		var ok bool
		fast, ok = deviceByModel(sn, cfg.fastModel)
		g.Expect(ok).To(BeTrue(), "no %q among %v", cfg.fastModel, models(sn))
		qlc, ok = deviceByModel(sn, cfg.qlcModel)
		g.Expect(ok).To(BeTrue(), "no %q among %v", cfg.qlcModel, models(sn))
	}).Should(Succeed())
	return fast, qlc
}

// partitionStatus is the status of partition number of the fast device; nil when absent.
func partitionStatus(sn *prismv1.StorageNode, fastPath string, number int32) *prismv1.PartitionStatus {
	for i, p := range sn.Status.Partitions {
		if p.Device == fastPath && p.Number == number {
			return &sn.Status.Partitions[i]
		}
	}
	return nil
}

// dbDevice is what a slot's Rook entry names as its metadataDevice and the OSD's DB size:
// the slot's logical volume once the agent reports it Ready (decision 0036), else the
// partition.
func dbDevice(sn *prismv1.StorageNode, fastPath string, slot prismv1.DBSlot) (path string, bytes int64, volume bool) {
	if st := partitionStatus(sn, fastPath, slot.Partition.Number); st != nil && st.Volume != nil && st.Volume.State == prismv1.DBVolumeReady {
		return st.Volume.Path, st.Volume.SizeBytes, true
	}
	return prismv1.PartitionPath(fastPath, slot.Partition.Number), slot.Partition.SizeBytes, false
}

// expectPlanCarriedOut: the agent has carried out the StorageNode's plan as it is now: its
// generation observed, Provisioned, each planned partition Ready.
func expectPlanCarriedOut(g Gomega, sn *prismv1.StorageNode) {
	g.Expect(sn.Status.ObservedPlanGeneration).To(Equal(sn.Generation), "conditions: %+v", sn.Status.Conditions)
	g.Expect(meta.IsStatusConditionTrue(sn.Status.Conditions, prismv1.ConditionProvisioned)).To(BeTrue(),
		"conditions: %+v, partitions: %+v", sn.Status.Conditions, sn.Status.Partitions)
	g.Expect(sn.Status.Partitions).To(HaveLen(len(sn.Spec.Plan.FastDevices[0].Slots)))
	for _, s := range sn.Status.Partitions {
		g.Expect(s.State).To(Equal(prismv1.PartitionReady), "%+v", s)
	}
}

// expectReleasedKeepsPartitions: the released node's fast drive keeps its partitions; the
// agent's inventory still lists them (status.partitions follows the plan, so it empties with
// the release: internal/node/agent withoutPlan).
func expectReleasedKeepsPartitions(node string) {
	Consistently(func(g Gomega) {
		sn := &prismv1.StorageNode{}
		g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: node}, sn)).To(Succeed())
		d, ok := deviceByModel(sn, cfg.fastModel)
		g.Expect(ok).To(BeTrue())
		g.Expect(d.Partitions).NotTo(BeEmpty(), "%s: the fast drive's partitions", node)
	}).WithTimeout(30 * time.Second).WithPolling(10 * time.Second).Should(Succeed())
}

// expectOSDsKept: once Rook has applied the CephCluster as it is now, no OSD restarted and every
// OSD up before is up (a drill leaves its dead drive's OSD destroyed, down and out).
func expectOSDsKept(before map[int]osdState, podsBefore map[string]osdPod) {
	waitRookReconciled()
	expectNoOSDRestarted(before, podsBefore)
	after := osdDump(Default)
	Expect(osdsUp(after)).To(Equal(osdsUp(before)), "osd dump: %+v", after)
}

// waitRookReconciled waits until Rook's operator has finished a reconcile of the CephCluster as
// it is now: Ready for its current generation.
func waitRookReconciled() {
	gen := cephCluster().GetGeneration()
	Eventually(func(g Gomega) {
		c := cephCluster()
		observed, _, _ := unstructured.NestedInt64(c.Object, "status", "observedGeneration")
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(c.Object, "status", "message")
		g.Expect(observed).To(BeNumerically(">=", gen), "CephCluster %s: %s", phase, msg)
		g.Expect(phase).To(Equal("Ready"), "CephCluster: %s", msg)
	}).WithTimeout(3 * cfg.timeout).WithPolling(15 * time.Second).Should(Succeed())
}

// expectNoOSDRestarted: every OSD up before is up now, from the same epoch (its daemon did not
// restart), in the same pod without a container restart.
func expectNoOSDRestarted(before map[int]osdState, podsBefore map[string]osdPod) {
	after, podsAfter := osdDump(Default), osdPods(Default)
	GinkgoWriter.Printf("osd dump %+v, pods %+v\n", after, podsAfter)
	for id, b := range before {
		if b.Up != 1 {
			continue
		}
		Expect(after).To(HaveKey(id), "osd.%d is gone", id)
		Expect(after[id].Up).To(Equal(1), "osd.%d is down", id)
		Expect(after[id].UpFrom).To(Equal(b.UpFrom), "osd.%d came up again (up_from)", id)
	}
	for id, p := range podsBefore {
		Expect(podsAfter).To(HaveKeyWithValue(id, p), "osd.%s's pod was replaced or restarted", id)
	}
}

// slotOf is the node plan's DB slot for that data device, nil if none.
func slotOf(sn *prismv1.StorageNode, dataDevice string) *prismv1.DBSlot {
	if sn.Spec.Plan == nil {
		return nil
	}
	for i := range sn.Spec.Plan.FastDevices {
		for j, s := range sn.Spec.Plan.FastDevices[i].Slots {
			if s.DataDevice == dataDevice {
				return &sn.Spec.Plan.FastDevices[i].Slots[j]
			}
		}
	}
	return nil
}

// spareSlot is the node plan's first spare DB slot (no data device), nil if none.
func spareSlot(sn *prismv1.StorageNode) *prismv1.DBSlot {
	return slotOf(sn, "")
}

// agentPod is the agent's pod on the suite's node.
func agentPod(g Gomega) *corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx(), pods, client.InNamespace(cfg.namespace),
		client.MatchingLabels{"app.kubernetes.io/component": "agent"})).To(Succeed())
	for i := range pods.Items {
		if pods.Items[i].Spec.NodeName == cfg.node {
			return &pods.Items[i]
		}
	}
	g.Expect(pods.Items).To(ContainElement(HaveField("Spec.NodeName", cfg.node)), "no agent pod on %s", cfg.node)
	return nil
}

func models(sn *prismv1.StorageNode) []string {
	var out []string
	for _, d := range sn.Status.Devices {
		out = append(out, fmt.Sprintf("%s=%q(%s)", d.Name, d.Model, d.Tier))
	}
	return out
}

// metricLines are the exposition's sample lines that start with prefix.
func metricLines(body, prefix string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// saveArtifacts writes the objects as JSON under cfg.artifacts/<stage>/<kind>.json, as the API
// server returned them, so that a green run's objects can be replayed in unit tests
// (internal/plan/decide's recorded chain). Only the first of each kind is kept per stage.
func saveArtifacts(stage string, objs ...client.Object) {
	for _, o := range objs {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		if kind == "" {
			kind = fmt.Sprintf("%T", o)
		}
		kind = kind[strings.LastIndex(kind, ".")+1:]
		saveJSON(stage, strings.ToLower(kind)+".json", o)
	}
}

// saveJSON writes v as indented JSON to cfg.artifacts/<stage>/<name>; nothing without
// PRISM_E2E_ARTIFACTS.
func saveJSON(stage, name string, v any) {
	if cfg.artifacts == "" {
		return
	}
	dir := filepath.Join(cfg.artifacts, stage)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	b, err := json.MarshalIndent(v, "", "  ")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, name), b, 0o644)).To(Succeed())
}

// kubeNode is the e2e node as the API server has it now.
func kubeNode() *corev1.Node {
	n := &corev1.Node{}
	Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, n)).To(Succeed())
	return n
}
