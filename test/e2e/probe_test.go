package e2e

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/decide"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// The replacement gate asks Ceph through a probe pod (decision 0047). The operator starts one
// only while a replacement is held, which a one-node chain never has; this spec starts the
// same pod and CephClient as the operator, impersonating its service account, so that the
// chart's RBAC and admission policy, Rook's CephClient, the kubelet's termination messages and
// Ceph 20's answers all meet once, and checks the answers against the admin CLI's.

// operatorClient is a client that acts as the chart's operator service account.
func operatorClient() client.Client {
	c := rest.CopyConfig(restCfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + cfg.namespace + ":prism-operator"}
	k, err := client.New(c, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return k
}

// expectProbeAnswersCeph runs the probe of node (hostname its kubernetes.io/hostname) about
// drive, as the operator would, and checks each answer against the admin CLI: the same health
// status, the same PG count, the node's OSDs all asked about, no destroyed id, and osd.
// osdID located on the drive.
func expectProbeAnswersCeph(node, hostname string, drive rook.ProbeDrive, osdID int) {
	as := operatorClient()
	p := policy()
	owner := *metav1.NewControllerRef(p, prismv1.GroupVersion.WithKind("HybridStoragePolicy"))
	owner.Controller, owner.BlockOwnerDeletion = nil, nil
	Expect(as.Apply(ctx(), client.ApplyConfigurationFromUnstructured(rook.ProbeCephClient(cfg.cephNS, owner)),
		client.FieldOwner(decide.CephClusterManager(p.Name)), client.ForceOwnership)).To(Succeed(),
		"the operator's service account applies the probe's CephClient")
	Eventually(func(g Gomega) {
		s := &corev1.Secret{}
		g.Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.cephNS, Name: "rook-ceph-client-" + rook.ProbeClient}, s)).To(Succeed(),
			"Rook has not made the probe client's Secret")
	}).Should(Succeed())

	image, _, _ := unstructured.NestedString(cephCluster().Object, "spec", "cephVersion", "image")
	// Labelled for a policy that does not exist: the operator keeps only the probes its gate
	// asks for and deletes the policy's others (PlanProbes), as it deleted one labelled for
	// this policy, started by hand in session 23's chain, before it finished.
	pod := rook.ProbePod(rook.ProbeTarget{Policy: p.Name + "-suite", Owner: owner, Namespace: cfg.cephNS, Image: image,
		Node: node, Hostname: hostname, Devices: drive.Names()})
	Expect(as.Create(ctx(), pod)).To(Succeed(), "the chart's RBAC and admission policy let the operator start its probe")
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx(), pod))).To(Succeed()) })

	var a rook.CephAnswers
	Eventually(func(g Gomega) {
		got := &corev1.Pod{}
		g.Expect(k8s.Get(ctx(), client.ObjectKeyFromObject(pod), got)).To(Succeed())
		var done bool
		a, done = rook.ProbeAnswers(got, time.Now())
		g.Expect(done).To(BeTrue(), "probe %s: %s", got.Name, got.Status.Phase)
		pod = got
	}).WithTimeout(2 * cfg.timeout).WithPolling(10 * time.Second).Should(Succeed())
	saveJSON("probe", "answers.json", map[string]string{
		"health": string(a.Health), "pg-stat": string(a.PGStat), "devices": string(a.Devices),
		"safe-to-destroy": string(a.SafeToDestroy), "destroyed": string(a.Destroyed), "err": a.Err})
	GinkgoWriter.Printf("probe %s on %s: health %s\npg-stat %s\ndevices %s\nsafe-to-destroy %s\ndestroyed %s\n",
		pod.Name, pod.Spec.NodeName, a.Health, a.PGStat, a.Devices, a.SafeToDestroy, a.Destroyed)
	Expect(a.Err).To(BeEmpty(), "every one of the probe's questions answered")

	health, err := rook.ParseHealth(a.Health)
	Expect(err).NotTo(HaveOccurred())
	var admin struct{ Status string }
	Expect(json.Unmarshal(mustCeph("health", "--format", "json"), &admin)).To(Succeed())
	Expect(health.Status).To(Equal(admin.Status), "the probe's health against the admin CLI's")

	pgs, err := rook.ParsePGStat(a.PGStat)
	Expect(err).NotTo(HaveOccurred())
	Expect(pgs.Ready).To(BeTrue())
	// Ceph 20.2.4 nests the count in pg_summary (recorded in this spec's first run, 2026-12-07:
	// `{"pg_ready":true,"pg_summary":{"num_pg_by_state":[...],"num_pgs":1,...}}`); older
	// releases put it at the top.
	var adminPGs struct {
		NumPGs  *int `json:"num_pgs"`
		Summary *struct {
			NumPGs *int `json:"num_pgs"`
		} `json:"pg_summary"`
	}
	adminRaw := mustCeph("pg", "stat", "--format", "json")
	Expect(json.Unmarshal(adminRaw, &adminPGs)).To(Succeed())
	adminCount := adminPGs.NumPGs
	if adminPGs.Summary != nil {
		adminCount = adminPGs.Summary.NumPGs
	}
	Expect(adminCount).NotTo(BeNil(), "the admin CLI's ceph pg stat has no num_pgs: %s", adminRaw)
	Expect(pgs.Total).To(Equal(*adminCount), "PGs counted by the probe and by the admin CLI (%s)", adminRaw)

	devs, err := rook.ParseDeviceLs(a.Devices)
	Expect(err).NotTo(HaveOccurred())
	ids, listed := rook.OSDsOnDevice(devs, drive.Path, drive.Kernel)
	Expect(listed).To(BeTrue(), "Ceph locates %v among %+v", drive.Names(), devs)
	Expect(ids).To(ContainElement(osdID))

	destroyed, err := rook.ParseDestroyed(a.Destroyed)
	Expect(err).NotTo(HaveOccurred())
	Expect(destroyed).To(BeEmpty())

	safe, err := rook.ParseSafeToDestroy(a.SafeToDestroy)
	Expect(err).NotTo(HaveOccurred())
	var hostOSDs []int
	for _, f := range strings.Fields(string(mustCeph("osd", "ls-tree", rook.CrushHost(node, hostname)))) {
		id, err := strconv.Atoi(f)
		Expect(err).NotTo(HaveOccurred(), "ceph osd ls-tree: %q", f)
		hostOSDs = append(hostOSDs, id)
	}
	asked := safe.Asked()
	slices.Sort(asked)
	slices.Sort(hostOSDs)
	Expect(asked).To(Equal(hostOSDs), "safe-to-destroy asked about every OSD of the CRUSH host: %+v", safe)
}

func mustCeph(args ...string) []byte {
	out, err := ceph(args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}
