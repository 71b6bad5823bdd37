package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// The upgrade drill (issue 31 item 1, docs/upgrade.md): the previous release's image and chart
// installed, an Apply policy carried out, `helm upgrade` to this tree and `helm rollback`, each
// checked against the host's own view of the fast drive. Runs only when hack/e2e/run.sh was
// given PRISM_E2E_UPGRADE_FROM (the guest then runs this container alone: -ginkgo.label-filter=upgrade).
type upgradeConfig struct {
	from     string // the previous release's commit
	oldChart string // its chart directory
	oldImage string // its image, as imported (repository:tag)
	oldVer   string // its binaries' version
	newVer   string // this tree's image's binaries' version
}

func upgradeSettings() (upgradeConfig, bool) {
	u := upgradeConfig{
		from:     os.Getenv("PRISM_E2E_UPGRADE_FROM"),
		oldChart: os.Getenv("PRISM_E2E_UPGRADE_CHART"),
		oldImage: os.Getenv("PRISM_E2E_UPGRADE_IMAGE"),
		oldVer:   os.Getenv("PRISM_E2E_UPGRADE_VERSION"),
		newVer:   os.Getenv("PRISM_E2E_VERSION"),
	}
	return u, u.from != ""
}

// hostView is what the node's own tools read of the fast drive: its GPT (disk and partition
// GUIDs, bounds, names), the LVs on its slots, and checksums of the headers Prism wrote.
type hostView struct {
	GPT     json.RawMessage // sfdisk --json: label-id, each partition's uuid, start, size, name
	LVs     []map[string]string
	Headers map[string]string // path and range: sha256
}

// readHostView reads the fast drive as the node sees it; slots are its planned partitions.
func readHostView(fastPath string, partitions []int32) hostView {
	v := hostView{Headers: map[string]string{}}
	out, err := exec.Command("sfdisk", "--json", fastPath).Output()
	Expect(err).NotTo(HaveOccurred(), "sfdisk --json %s", fastPath)
	v.GPT = out
	out, err = exec.Command("lvs", "--reportformat", "json", "--units", "b",
		"--options", "vg_name,vg_uuid,lv_name,lv_uuid,lv_size,lv_tags,devices").Output()
	Expect(err).NotTo(HaveOccurred(), "lvs")
	var report struct {
		Report []struct {
			LV []map[string]string `json:"lv"`
		} `json:"report"`
	}
	Expect(json.Unmarshal(out, &report)).To(Succeed(), "lvs: %s", out)
	for _, r := range report.Report {
		for _, lv := range r.LV {
			for _, n := range partitions {
				if strings.HasPrefix(lv["devices"], fmt.Sprintf("%s(", partitionDevice(fastPath, n))) {
					v.LVs = append(v.LVs, lv)
				}
			}
		}
	}
	// The disk's first and last MiB (protective MBR, primary and backup GPT) and each slot's
	// first MiB (the LVM label and metadata area the agent wrote).
	v.Headers[fastPath+"@0"] = sha256Range(fastPath, 0, 1<<20)
	v.Headers[fastPath+"@end"] = sha256Range(fastPath, -1<<20, 1<<20)
	for _, n := range partitions {
		p := prismv1.PartitionPath(fastPath, n)
		v.Headers[p+"@0"] = sha256Range(p, 0, 1<<20)
	}
	return v
}

// partitionDevice is the kernel's name of partition n (lvs names /dev/nvme0n1p1, not by-id).
func partitionDevice(fastPath string, n int32) string {
	dev, err := os.Readlink(prismv1.PartitionPath(fastPath, n))
	Expect(err).NotTo(HaveOccurred())
	if !strings.HasPrefix(dev, "/") {
		dev = "/dev/" + dev[strings.LastIndex(dev, "/")+1:]
	}
	return dev
}

// sha256Range hashes length bytes of path from off (off < 0: from the end).
func sha256Range(path string, off, length int64) string {
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	if off < 0 {
		size, err := f.Seek(0, io.SeekEnd)
		Expect(err).NotTo(HaveOccurred())
		off += size
	}
	h := sha256.New()
	_, err = io.Copy(h, io.NewSectionReader(f, off, length))
	Expect(err).NotTo(HaveOccurred(), "reading %s", path)
	return hex.EncodeToString(h.Sum(nil))
}

// storedState is what the API server holds that an upgrade must leave alone.
type storedState struct {
	NodeGeneration int64
	Plan           json.RawMessage // the StorageNode's spec as stored, read without Prism's types
	Entry          map[string]any  // Prism's entry in the CephCluster
	Annotations    map[string]string
}

func readStoredState(hostname string) storedState {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(prismv1.GroupVersion.WithKind("StorageNode"))
	Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, u)).To(Succeed())
	spec, err := json.Marshal(u.Object["spec"])
	Expect(err).NotTo(HaveOccurred())
	c := cephCluster()
	return storedState{NodeGeneration: u.GetGeneration(), Plan: spec, Entry: rookNodes(c)[hostname], Annotations: c.GetAnnotations()}
}

var _ = Describe("upgrade and rollback from the previous release", Ordered, Label("upgrade"), func() {
	var up upgradeConfig
	var fast prismv1.Device
	var hostname string
	var slots []int32
	var host hostView
	var stored storedState
	var oldRevision int
	crdUIDs := map[string]types.UID{}

	BeforeAll(func() {
		var ok bool
		if up, ok = upgradeSettings(); !ok {
			Skip("PRISM_E2E_UPGRADE_FROM is not set (hack/e2e/run.sh prism with PRISM_E2E_UPGRADE_FROM=COMMIT)")
		}
		Expect(up.oldChart).NotTo(BeEmpty(), "PRISM_E2E_UPGRADE_CHART")
		Expect(strings.Count(up.oldImage, ":")).To(Equal(1), "PRISM_E2E_UPGRADE_IMAGE=%q: want REPOSITORY:TAG", up.oldImage)
	})

	// expectUnchanged: the fast drive as the host reads it and what the API server stores are as
	// they were when the plan was carried out.
	expectUnchanged := func(when string) {
		now := readHostView(fast.StablePath, slots)
		Expect(now.LVs).To(Equal(host.LVs), "%s: the slots' LVs", when)
		Expect(now.Headers).To(Equal(host.Headers), "%s: the GPT and slot headers", when)
		Expect(string(now.GPT)).To(Equal(string(host.GPT)), "%s: the GPT (sfdisk --json)", when)
		s := readStoredState(hostname)
		Expect(s.NodeGeneration).To(Equal(stored.NodeGeneration), "%s: the StorageNode's generation", when)
		Expect(string(s.Plan)).To(MatchJSON(string(stored.Plan)), "%s: the StorageNode's spec", when)
		Expect(s.Entry).To(Equal(stored.Entry), "%s: Prism's CephCluster entry", when)
		Expect(s.Annotations).To(Equal(stored.Annotations), "%s: the CephCluster's annotations", when)
	}
	// agentRolledTo: the DaemonSet has rolled its one pod to image, Ready, and the StorageNode
	// reports the agent's version.
	agentRolledTo := func(image, version string, podBefore types.UID) types.UID {
		var uid types.UID
		Eventually(func(g Gomega) {
			ds := &appsv1.DaemonSet{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-agent"}, ds)).To(Succeed())
			g.Expect(ds.Status.ObservedGeneration).To(Equal(ds.Generation))
			g.Expect(ds.Status.UpdatedNumberScheduled).To(Equal(ds.Status.DesiredNumberScheduled), "%+v", ds.Status)
			g.Expect(ds.Status.NumberAvailable).To(Equal(ds.Status.DesiredNumberScheduled), "%+v", ds.Status)
			pod := agentPod(g)
			g.Expect(pod.UID).NotTo(Equal(podBefore), "the agent pod was not replaced")
			g.Expect(pod.Spec.Containers[0].Image).To(Equal(image))
			g.Expect(pod.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))))
			uid = pod.UID
			g.Expect(storageNode().Status.AgentVersion).To(Equal(version))
		}).Should(Succeed())
		return uid
	}
	// operatorRolledTo: every operator pod runs image (the old ones are gone), one at least Ready.
	operatorRolledTo := func(image string) {
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx(), pods, client.InNamespace(cfg.namespace),
				client.MatchingLabels{"app.kubernetes.io/component": "operator"})).To(Succeed())
			ready := 0
			for _, p := range pods.Items {
				g.Expect(p.Spec.Containers[0].Image).To(Equal(image), "pod %s", p.Name)
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			g.Expect(ready).To(BeNumerically(">=", 1), "no operator pod Ready")
		}).Should(Succeed())
	}
	// reconciles: a spec edit both releases know (one more node label in the selector, which
	// the node gets first) is reconciled by the operator now running: the policy's status
	// observes the new generation, every condition True.
	reconciles := func(label string) {
		node := kubeNode()
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"yes"}}}`, label)
		Expect(k8s.Patch(ctx(), node, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		p := policy()
		patch = fmt.Sprintf(`{"spec":{"nodeSelector":{"matchLabels":{%q:"yes"}}}}`, label)
		Expect(k8s.Patch(ctx(), p, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		gen := p.Generation
		Eventually(func(g Gomega) {
			p := &prismv1.HybridStoragePolicy{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, p)).To(Succeed())
			g.Expect(p.Status.ObservedGeneration).To(Equal(gen))
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, prismv1.ConditionRookConfigured)).To(BeTrue(), "%+v", p.Status.Conditions)
			g.Expect(selection(p)).NotTo(BeNil(), "the node is no longer selected: %+v", p.Status)
		}).Should(Succeed())
		GinkgoWriter.Printf("policy generation %d reconciled: %+v\n", gen, policy().Status.Conditions)
	}
	ignoreHealthChecks := func() ([]string, bool) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(prismv1.GroupVersion.WithKind("HybridStoragePolicy"))
		Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, u)).To(Succeed())
		v, found, _ := unstructured.NestedStringSlice(u.Object, "spec", "osd", "ignoreHealthChecks")
		return v, found
	}
	crdsInPlace := func(when string) {
		for name, uid := range crdUIDs {
			crd := getCRD(name)
			Expect(crd.GetUID()).To(Equal(uid), "%s: CRD %s was recreated, not updated in place", when, name)
		}
	}
	var agentUID types.UID

	It("installs the previous release's chart and image; its agent inventories the drives", func() {
		Eventually(func() error {
			return helm("upgrade", "--install", "prism", up.oldChart, "--namespace", cfg.namespace, "--create-namespace",
				"--set", "image.repository="+strings.SplitN(up.oldImage, ":", 2)[0], "--set", "image.tag="+strings.SplitN(up.oldImage, ":", 2)[1])
		}).WithTimeout(3 * cfg.timeout).WithPolling(10 * time.Second).Should(Succeed())
		oldRevision = helmRevision()
		agentUID = agentRolledTo(up.oldImage, up.oldVer, "")
		operatorRolledTo(up.oldImage)
		fast, _ = inventoriedDrives()
		Expect(fast.Partitions).To(BeEmpty(), "the fast drive must start empty")
		for _, n := range []string{"hybridstoragepolicies.prism.storage.io", "storagenodes.prism.storage.io"} {
			crd := getCRD(n)
			crdUIDs[n] = crd.GetUID()
			Expect(crdSchemaHas(crd, "spec", "osd", "ignoreHealthChecks")).To(BeFalse(), "the previous release's CRD %s", n)
		}
		GinkgoWriter.Printf("previous release %s (%s) installed as helm revision %d\n", up.from, up.oldImage, oldRevision)
	})

	It("under the previous release, an Apply policy makes the partitions and LVs and writes the CephCluster entry", func() {
		node := kubeNode()
		hostname = node.Labels[corev1.LabelHostname]
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"e2e"}}}`, roleLabel)
		Expect(k8s.Patch(ctx(), node, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		// Created without Prism's types: what the previous release's CRD accepts.
		u := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal([]byte(policyYAML(prismv1.ModeApply)), &u.Object)).To(Succeed())
		Expect(k8s.Create(ctx(), u)).To(Succeed())
		Eventually(func(g Gomega) {
			sn := &prismv1.StorageNode{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node}, sn)).To(Succeed())
			g.Expect(sn.Spec.Plan).NotTo(BeNil())
			g.Expect(sn.Status.ObservedPlanGeneration).To(Equal(sn.Generation), "conditions: %+v", sn.Status.Conditions)
			g.Expect(meta.IsStatusConditionTrue(sn.Status.Conditions, prismv1.ConditionProvisioned)).To(BeTrue(), "%+v", sn.Status.Conditions)
			g.Expect(sn.Spec.Plan.FastDevices).To(ConsistOf(HaveField("StablePath", fast.StablePath)))
			slots = nil
			for _, slot := range sn.Spec.Plan.FastDevices[0].Slots {
				st := partitionStatus(sn, fast.StablePath, slot.Partition.Number)
				g.Expect(st).NotTo(BeNil())
				g.Expect(st.State).To(Equal(prismv1.PartitionReady))
				g.Expect(st.Volume).NotTo(BeNil(), "partition %d has no volume", slot.Partition.Number)
				g.Expect(st.Volume.State).To(Equal(prismv1.DBVolumeReady))
				slots = append(slots, slot.Partition.Number)
			}
			p := &prismv1.HybridStoragePolicy{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, p)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(p.Status.Conditions, prismv1.ConditionRookConfigured)).To(BeTrue(), "%+v", p.Status.Conditions)
			g.Expect(rookNodes(cephCluster())).To(HaveKey(hostname))
		}).WithTimeout(2 * cfg.timeout).Should(Succeed())
		host = readHostView(fast.StablePath, slots)
		Expect(host.LVs).To(HaveLen(len(slots)), "one LV per slot, as the node's lvs lists them")
		stored = readStoredState(hostname)
		GinkgoWriter.Printf("slots %v\nGPT %s\nLVs %v\nheaders %v\nentry %v\n", slots, host.GPT, host.LVs, host.Headers, stored.Entry)
		saveArtifacts("upgrade-installed", storageNode(), policy(), cephCluster())
	})

	It("helm upgrade to this tree: CRDs in place, the agent rolls, nothing on the drive or in the plan changes", func() {
		// The new chart's defaults, and what this cluster sets for every install of this tree
		// (PRISM_E2E_HELM_SET: the emulated control plane's lease timings, which the previous
		// release's chart does not know).
		args := []string{"upgrade", "prism", cfg.chart, "--namespace", cfg.namespace, "--reset-values"}
		for _, s := range cfg.helmSet {
			args = append(args, "--set", s)
		}
		Eventually(func() error { return helm(args...) }).WithTimeout(3 * cfg.timeout).WithPolling(10 * time.Second).Should(Succeed())
		newImage := chartImage(cfg.chart)
		ds := &appsv1.DaemonSet{}
		Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-agent"}, ds)).To(Succeed())
		Expect(ds.Spec.UpdateStrategy.RollingUpdate).NotTo(BeNil())
		Expect(ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable.String()).To(Equal("1"))
		agentUID = agentRolledTo(newImage, up.newVer, agentUID)
		operatorRolledTo(newImage)
		crdsInPlace("after helm upgrade")
		crd := getCRD("hybridstoragepolicies.prism.storage.io")
		Expect(crdSchemaHas(crd, "spec", "osd", "ignoreHealthChecks")).To(BeTrue(), "the upgraded CRD serves the new field")
		// The objects the previous release stored read with this tree's types.
		_ = storageNode()
		_ = policy()
		expectUnchanged("after helm upgrade")
		reconciles("prism.storage.io/e2e-upgraded")
		expectUnchanged("after the new operator reconciled an edit")
		// The new field can be set and is stored.
		p := policy()
		Expect(k8s.Patch(ctx(), p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"osd":{"ignoreHealthChecks":["OSD_NEARFULL"]}}}`)))).To(Succeed())
		v, found := ignoreHealthChecks()
		Expect(found).To(BeTrue())
		Expect(v).To(Equal([]string{"OSD_NEARFULL"}))
		Eventually(func(g Gomega) {
			p := &prismv1.HybridStoragePolicy{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, p)).To(Succeed())
			g.Expect(p.Status.ObservedGeneration).To(Equal(p.Generation))
		}).Should(Succeed())
		expectUnchanged("after the new field was set")
		saveArtifacts("upgrade-upgraded", storageNode(), policy(), cephCluster())
	})

	It("helm rollback: the previous CRDs in place, the agent rolls back, nothing changes; the old release reconciles what the new one wrote", func() {
		Eventually(func() error {
			return helm("rollback", "prism", fmt.Sprint(oldRevision), "--namespace", cfg.namespace)
		}).WithTimeout(3 * cfg.timeout).WithPolling(10 * time.Second).Should(Succeed())
		agentUID = agentRolledTo(up.oldImage, up.oldVer, agentUID)
		operatorRolledTo(up.oldImage)
		crdsInPlace("after helm rollback")
		crd := getCRD("hybridstoragepolicies.prism.storage.io")
		Expect(crdSchemaHas(crd, "spec", "osd", "ignoreHealthChecks")).To(BeFalse(), "the rolled-back CRD")
		// The API server prunes the newer field from what it reads out of etcd.
		Eventually(func(g Gomega) {
			_, found := ignoreHealthChecks()
			g.Expect(found).To(BeFalse(), "spec.osd.ignoreHealthChecks still reads after the rollback")
		}).WithTimeout(time.Minute).Should(Succeed())
		expectUnchanged("after helm rollback")
		reconciles("prism.storage.io/e2e-rolled-back")
		expectUnchanged("after the old operator reconciled an edit")
		saveArtifacts("upgrade-rolled-back", storageNode(), policy(), cephCluster())
	})
})

// helmRevision is the release's current revision (helm status -o json).
func helmRevision() int {
	cmd := exec.Command(cfg.helm, "--kubeconfig", cfg.kubeconfig, "status", "prism", "--namespace", cfg.namespace, "-o", "json")
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "helm status")
	var st struct {
		Version int `json:"version"`
	}
	Expect(json.Unmarshal(out, &st)).To(Succeed())
	Expect(st.Version).To(BeNumerically(">", 0))
	return st.Version
}

// chartImage is the image a chart's defaults name: image.repository and the chart's appVersion.
func chartImage(chart string) string {
	var values struct {
		Image struct{ Repository, Tag string } `json:"image"`
	}
	var meta struct {
		AppVersion string `json:"appVersion"`
	}
	for f, v := range map[string]any{"values.yaml": &values, "Chart.yaml": &meta} {
		b, err := os.ReadFile(chart + "/" + f)
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.Unmarshal(b, v)).To(Succeed(), "%s/%s", chart, f)
	}
	tag := values.Image.Tag
	if tag == "" {
		tag = meta.AppVersion
	}
	return values.Image.Repository + ":" + tag
}

// getCRD reads a CRD without its Go types (the suite's scheme has Prism's and core's only).
func getCRD(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	Expect(k8s.Get(ctx(), client.ObjectKey{Name: name}, u)).To(Succeed())
	return u
}

// crdSchemaHas: the CRD's first served version's schema has the property at path.
func crdSchemaHas(crd *unstructured.Unstructured, path ...string) bool {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if served, _ := vm["served"].(bool); !served {
			continue
		}
		fields := []string{"schema", "openAPIV3Schema"}
		for _, p := range path {
			fields = append(fields, "properties", p)
		}
		_, found, _ := unstructured.NestedMap(vm, fields...)
		return found
	}
	return false
}
