package e2e

// The chain's specs for a second node (hack/e2e/run.sh PRISM_E2E_NODES=2, which names it in
// PRISM_E2E_NODE2; docs/decisions/0054-two-nodes-in-the-e2e.md). NEVER RUN: written before any
// two-node cluster came up, only compiled and vetted. The chain registers them after node 1's
// OSD is read back, before the hot-add; on one node each skips itself.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// twoHostPool is the pool whose replicas must land on both hosts.
const twoHostPool = "e2e-two-hosts"

func skipOnOneNode() {
	if cfg.node2 == "" {
		Skip("one node: PRISM_E2E_NODE2 names a second (hack/e2e/run.sh PRISM_E2E_NODES=2)")
	}
}

// storageNodeOf is NAME's StorageNode.
func storageNodeOf(g Gomega, name string) *prismv1.StorageNode {
	sn := &prismv1.StorageNode{}
	g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: name}, sn)).To(Succeed())
	return sn
}

// hostnameOf is the node's kubernetes.io/hostname label: Rook's name for it in storage.nodes.
func hostnameOf(name string) string {
	n := &corev1.Node{}
	Expect(k8s.Get(ctx(), client.ObjectKey{Name: name}, n)).To(Succeed())
	Expect(n.Labels).To(HaveKey(corev1.LabelHostname))
	return n.Labels[corev1.LabelHostname]
}

// agentPodOn is the agent's pod on that node.
func agentPodOn(g Gomega, node string) *corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx(), pods, client.InNamespace(cfg.namespace),
		client.MatchingLabels{"app.kubernetes.io/component": "agent"})).To(Succeed())
	for i := range pods.Items {
		if pods.Items[i].Spec.NodeName == node {
			return &pods.Items[i]
		}
	}
	g.Expect(pods.Items).To(ContainElement(HaveField("Spec.NodeName", node)), "no agent pod on %s", node)
	return nil
}

// osdOnHost is the OSD whose metadata names that host and the data disk (a kernel name, which
// both nodes may share); -1 if none.
func osdOnHost(meta map[int]map[string]any, host, disk string) int {
	for id, m := range meta {
		if m["hostname"] == host && slices.Contains(devList(m["bluestore_bdev_devices"]), disk) {
			return id
		}
	}
	return -1
}

// managedNodes is the CephCluster annotation's list of nodes the policy's entries cover.
func managedNodes(c *unstructured.Unstructured) []string {
	v := c.GetAnnotations()[rook.ManagedNodesAnnotation(policyName)]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// pgActing is each PG of the pool with its state and acting OSDs (`ceph pg ls-by-pool`).
func pgActing(g Gomega, pool string) map[string]struct {
	State  string
	Acting []int
} {
	out, err := ceph("pg", "ls-by-pool", pool, "--format", "json")
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	var ls struct {
		PGStats []struct {
			PGID   string `json:"pgid"`
			State  string `json:"state"`
			Acting []int  `json:"acting"`
		} `json:"pg_stats"`
	}
	g.Expect(json.Unmarshal(out, &ls)).To(Succeed(), "pg ls-by-pool: %s", out)
	m := map[string]struct {
		State  string
		Acting []int
	}{}
	for _, p := range ls.PGStats {
		m[p.PGID] = struct {
			State  string
			Acting []int
		}{p.State, p.Acting}
	}
	return m
}

// twoNodeSpecs registers the two-node specs in the chain's ordered container.
func twoNodeSpecs() {
	var fast2, qlc2 prismv1.Device
	var host1, host2 string
	var node1Gen int64
	var node1Entry map[string]any // nil: Prism wrote none for node 1 (decision 0035)

	It("two nodes: the agent on node 2 inventories its own fast and QLC drive", func() {
		skipOnOneNode()
		Eventually(func(g Gomega) {
			ds := &appsv1.DaemonSet{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-agent"}, ds)).To(Succeed())
			g.Expect(ds.Status.NumberReady).To(BeEquivalentTo(2), "agent DaemonSet: %+v", ds.Status)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			sn := storageNodeOf(g, cfg.node2)
			var ok bool
			fast2, ok = deviceByModel(sn, cfg.fastModel)
			g.Expect(ok).To(BeTrue(), "node 2's devices: %v", models(sn))
			qlc2, ok = deviceByModel(sn, cfg.qlcModel)
			g.Expect(ok).To(BeTrue(), "node 2's devices: %v", models(sn))
			g.Expect(meta.IsStatusConditionTrue(sn.Status.Conditions, prismv1.ConditionInventoried)).To(BeTrue(), "%+v", sn.Status.Conditions)
		}).Should(Succeed())
		// Node 2's own drives (hack/e2e/run.sh node2_drives), not node 1's seen twice.
		Expect(fast2.Serial).To(Equal("PRISM-E2E2-FAST"))
		Expect(qlc2.Serial).To(Equal("PRISM-E2E2-QLC"))
		Expect(fast2.Tier).To(Equal(prismv1.TierFast), "fast drive: %s", fast2.TierReason)
		Expect(qlc2.Tier).To(Equal(prismv1.TierCapacity), "QLC drive: %s", qlc2.TierReason)
		Expect(fast2.Eligibility.Eligible).To(BeTrue(), "fast drive: %+v", fast2.Eligibility.Reasons)
		Expect(qlc2.Eligibility.Eligible).To(BeTrue(), "QLC drive: %+v", qlc2.Eligibility.Reasons)
		Expect(fast2.Partitions).To(BeEmpty(), "node 2's fast drive must start empty")
	})

	It("two nodes: labelled, node 2 is claimed and provisioned by the same policy; node 1's plan does not change", func() {
		skipOnOneNode()
		host1, host2 = hostnameOf(cfg.node), hostnameOf(cfg.node2)
		node1Gen = storageNode().Generation
		node1Entry = rookNodes(cephCluster())[host1]
		n := &corev1.Node{}
		Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node2}, n)).To(Succeed())
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"e2e"}}}`, roleLabel)
		Expect(k8s.Patch(ctx(), n, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		Eventually(func(g Gomega) {
			sn := storageNodeOf(g, cfg.node2)
			g.Expect(sn.Spec.PolicyName).To(Equal(policyName))
			g.Expect(sn.Spec.Mode).To(Equal(prismv1.ModeApply))
			g.Expect(sn.Spec.Plan).NotTo(BeNil())
			g.Expect(sn.Spec.Plan.FastDevices).To(ConsistOf(HaveField("StablePath", fast2.StablePath)))
			g.Expect(slotOf(sn, qlc2.StablePath)).NotTo(BeNil(), "no DB slot for %s", qlc2.StablePath)
			expectPlanCarriedOut(g, sn)
			p := &prismv1.HybridStoragePolicy{}
			g.Expect(k8s.Get(ctx(), client.ObjectKey{Name: policyName}, p)).To(Succeed())
			g.Expect(p.Status.Nodes).To(ContainElements(HaveField("Node", cfg.node), HaveField("Node", cfg.node2)), "the policy's selection")
		}).Should(Succeed())
		Expect(storageNode().Generation).To(Equal(node1Gen), "node 1's StorageNode spec changed")
	})

	It("two nodes: the CephCluster has node 2's entry, its QLC drive with its own DB slot; node 1's entry unchanged", func() {
		skipOnOneNode()
		Eventually(func(g Gomega) {
			c := cephCluster()
			g.Expect(rookNodes(c)).To(HaveKey(host2))
			g.Expect(managedNodes(c)).To(ContainElement(host2))
		}).Should(Succeed())
		sn := storageNodeOf(Default, cfg.node2)
		slot := slotOf(sn, qlc2.StablePath)
		Expect(slot).NotTo(BeNil())
		wantMeta, _, _ := dbDevice(sn, fast2.StablePath, *slot)
		c := cephCluster()
		_, nodeCfg := expectOneDeviceEntry(rookNodes(c), host2, qlc2.StablePath, wantMeta)
		Expect(nodeCfg).To(HaveKeyWithValue("deviceClass", "qlc"))
		if node1Entry != nil {
			Expect(rookNodes(c)[host1]).To(Equal(node1Entry), "node 1's entry changed")
			Expect(managedNodes(c)).To(ContainElement(host1))
		}
		saveArtifacts("two-nodes-entries", sn, policy(), c)
	})

	It("two nodes: Rook makes an OSD on node 2's QLC drive, its BlueFS DB on node 2's slot; node 1's OSDs do not restart", func() {
		skipOnOneNode()
		if !cfg.rookOperator {
			Skip("no Rook operator in this cluster (PRISM_E2E_ROOK_OPERATOR=1 says there is)")
		}
		before, podsBefore := osdDump(Default), osdPods(Default)
		sn := storageNodeOf(Default, cfg.node2)
		slot := slotOf(sn, qlc2.StablePath)
		Expect(slot).NotTo(BeNil())
		_, dbBytes, _ := dbDevice(sn, fast2.StablePath, *slot)
		osd2 := -1
		Eventually(func(g Gomega) {
			osd2 = osdOnHost(osdMetadata(g), cfg.node2, qlc2.Name)
			g.Expect(osd2).NotTo(Equal(-1), "no OSD on %s reports data on %s", cfg.node2, qlc2.Name)
			g.Expect(osdDump(g)[osd2].Up).To(Equal(1), "osd.%d is not up", osd2)
		}).WithTimeout(3 * cfg.timeout).WithPolling(30 * time.Second).Should(Succeed())
		expectDBOnPrismSlot(osdMetadata(Default)[osd2], cfg.node2, qlc2.Name, fast2.Name, dbBytes)
		Expect(deviceClasses(Default)).To(HaveKeyWithValue(osd2, "qlc"))
		expectNoOSDRestarted(before, podsBefore)
	})

	It("two nodes: a pool with failure domain host puts every placement group on both hosts", func() {
		skipOnOneNode()
		if !cfg.rookOperator {
			Skip("no Rook operator in this cluster (PRISM_E2E_ROOK_OPERATOR=1 says there is)")
		}
		pool := &unstructured.Unstructured{}
		pool.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephBlockPool"})
		pool.SetNamespace(cfg.cephNS)
		pool.SetName(twoHostPool)
		Expect(unstructured.SetNestedField(pool.Object, map[string]any{
			"failureDomain": "host",
			"deviceClass":   "qlc",
			"replicated":    map[string]any{"size": int64(2)},
		}, "spec")).To(Succeed())
		Expect(k8s.Create(ctx(), pool)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx(), pool))).To(Succeed()) })
		Eventually(func(g Gomega) {
			hosts := map[int]any{}
			for id, m := range osdMetadata(g) {
				hosts[id] = m["hostname"]
			}
			pgs := pgActing(g, twoHostPool)
			g.Expect(pgs).NotTo(BeEmpty(), "the pool has no placement groups yet")
			for id, pg := range pgs {
				g.Expect(pg.State).To(Equal("active+clean"), "pg %s", id)
				g.Expect(pg.Acting).To(HaveLen(2), "pg %s", id)
				g.Expect(hosts[pg.Acting[0]]).NotTo(Equal(hosts[pg.Acting[1]]), "pg %s: both replicas on one host", id)
			}
		}).WithTimeout(2 * cfg.timeout).WithPolling(30 * time.Second).Should(Succeed())
	})

	It("two nodes: each agent's metrics name its own node's drives, not the other's", func() {
		skipOnOneNode()
		for _, n := range []struct{ node, other string }{{cfg.node, cfg.node2}, {cfg.node2, cfg.node}} {
			pod := agentPodOn(Default, n.node)
			Eventually(func(g Gomega) {
				body, err := scrapeAgent(ctx(), pod.Name)
				g.Expect(err).NotTo(HaveOccurred())
				lines := metricLines(body, "prism_device_info{")
				g.Expect(lines).To(ContainElement(And(ContainSubstring(`node="`+n.node+`"`), ContainSubstring(`model="`+cfg.qlcModel+`"`))))
				g.Expect(lines).NotTo(ContainElement(ContainSubstring(`node="` + n.other + `"`)))
			}).WithTimeout(3*time.Minute).Should(Succeed(), "agent %s on %s", pod.Name, n.node)
		}
	})

	It("two nodes: removing node 2's label withdraws only its entry and releases it; its partitions stay, every OSD stays up", func() {
		skipOnOneNode()
		var before map[int]osdState
		var podsBefore map[string]osdPod
		if cfg.rookOperator {
			before, podsBefore = osdDump(Default), osdPods(Default)
		}
		n := &corev1.Node{}
		Expect(k8s.Get(ctx(), client.ObjectKey{Name: cfg.node2}, n)).To(Succeed())
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, roleLabel)
		Expect(k8s.Patch(ctx(), n, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		Eventually(func(g Gomega) {
			c := cephCluster()
			g.Expect(rookNodes(c)).NotTo(HaveKey(host2))
			g.Expect(managedNodes(c)).NotTo(ContainElement(host2))
			sn := storageNodeOf(g, cfg.node2)
			g.Expect(sn.Spec.PolicyName).To(BeEmpty())
			g.Expect(sn.Spec.Plan).To(BeNil())
		}).Should(Succeed())
		c := cephCluster()
		if node1Entry != nil {
			Expect(rookNodes(c)[host1]).To(Equal(node1Entry), "node 1's entry changed")
			Expect(managedNodes(c)).To(ContainElement(host1))
		}
		sn1 := storageNode()
		Expect(sn1.Spec.PolicyName).To(Equal(policyName))
		Expect(sn1.Generation).To(Equal(node1Gen), "node 1's StorageNode spec changed")
		expectReleasedKeepsPartitions(cfg.node2)
		if !cfg.rookOperator {
			return
		}
		expectOSDsKept(before, podsBefore)
		saveArtifacts("two-nodes-unlabelled", storageNodeOf(Default, cfg.node2), storageNode(), cephCluster())
	})
}
