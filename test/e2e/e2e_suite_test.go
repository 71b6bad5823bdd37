package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// config is what the suite is told about its cluster (flags, else environment, else defaults).
type config struct {
	kubeconfig string
	helm       string // the helm binary
	chart      string // Prism's chart directory
	namespace  string // the release's namespace
	helmSet    []string
	node       string // the node whose drives the suite pairs; empty: the cluster's only node
	// node2 is a second node with its own drives (hack/e2e/run.sh PRISM_E2E_NODES=2); empty: the
	// two-node specs skip themselves (twonode_test.go).
	node2     string
	fastModel string // the fast drive's model, as drivedb knows it (Fast tier)
	qlcModel  string // the QLC drive's model, as drivedb knows it (Capacity tier)
	cephNS    string // the CephCluster Prism writes into (Rook's CRD must be installed)
	cephName  string
	timeout   time.Duration // each wait
	// rookOperator: Rook's operator runs in the cluster, so the suite also waits for and checks
	// the OSDs it creates, through the ceph CLI in the operator's pod (kubectl exec).
	rookOperator bool
	kubectl      string // the kubectl binary, for exec into Rook's pods and README's plugin commands
	// kubectlPrism is the kubectl-prism plugin binary README's install section builds; its
	// directory goes first on kubectl's PATH, so `kubectl prism ...` runs it as a user's would.
	kubectlPrism string
	samples      string   // config/samples, README's policy sample among them
	hotAdd       []string // argv that makes a third drive of the QLC model appear on the node; empty: no hot-add spec
	// probeImage holds hack/e2e/sleep (its probe mode), present on the node: the stranger pod
	// that tries Prism's endpoints from another namespace; empty: no such spec.
	probeImage string
	// prometheusImage holds Debian's prometheus (hack/e2e/prometheus-image.sh), present on the
	// node: the Prometheus the dashboards and the endurance page are checked against; empty: no
	// such spec, and the endpoints spec expects no Prometheus behind the page.
	prometheusImage string
	// drills: the failure drills run after the hot-add spec (drill_test.go); they need Rook's
	// operator and the commands below. Off by default: the chain's time is unchanged.
	drills bool
	// drillAdd and drillReplace are argvs that make one more drive of the QLC model appear on
	// the node (the drill's third OSD, and the replacement of the dead drive); drillFail,
	// with a fabric serial appended, kills that drive (hack/guest/nvmet-loop.sh --remove).
	drillAdd, drillReplace, drillFail []string
	// runbooks is the directory of docs/runbooks, whose commands the drills run as written.
	runbooks string
	// artifacts: where the suite saves the objects it asserted on (StorageNode, policy,
	// CephCluster) as JSON, for replay in unit tests; empty: nowhere.
	artifacts string
	// reboot is the reboot drill's phase (reboot_test.go): record, verify, or empty (no drill);
	// rebootRecord is the file that carries the record across the reboot.
	reboot, rebootRecord string
}

var (
	cfg       config
	k8s       client.Client
	clientset *kubernetes.Clientset
	restCfg   *rest.Config

	flagKubeconfig = flag.String("e2e.kubeconfig", "", "run the e2e suite against this kubeconfig (else PRISM_E2E=1 and KUBECONFIG)")
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// gate says whether the suite was asked to run, and if not, why not.
func gate() (string, bool) {
	if *flagKubeconfig != "" {
		return *flagKubeconfig, true
	}
	if os.Getenv("PRISM_E2E") != "1" {
		return "", false
	}
	if kc := os.Getenv("KUBECONFIG"); kc != "" {
		return kc, true
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".kube", "config"), true
}

const skipMessage = `test/e2e: SKIPPED, no e2e cluster given. The suite installs Prism's chart and partitions
the node's fast drive, so it runs only when asked: PRISM_E2E=1 with KUBECONFIG, or
-e2e.kubeconfig=FILE (make e2e-prism: the QEMU guest; make e2e-kind: a kind cluster; docs/e2e.md).`

// TestMain keeps `go test ./...` honest: without a cluster no spec runs, the message says so,
// and go test's summary line ends in "[no tests to run]" rather than a bare "ok".
func TestMain(m *testing.M) {
	flag.Parse()
	if _, ok := gate(); !ok {
		fmt.Println(skipMessage)
		if err := flag.Set("test.run", "^$"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) {
	kc, ok := gate()
	if !ok {
		t.Skip(skipMessage)
	}
	cfg = config{
		kubeconfig: kc,
		helm:       env("PRISM_E2E_HELM", "helm"),
		chart:      env("PRISM_E2E_CHART", "../../charts/prism"),
		namespace:  env("PRISM_E2E_NAMESPACE", "prism-system"),
		node:       os.Getenv("PRISM_E2E_NODE"),
		node2:      os.Getenv("PRISM_E2E_NODE2"),
		fastModel:  env("PRISM_E2E_FAST_MODEL", "INTEL SSDPF21Q400GB"),
		qlcModel:   env("PRISM_E2E_QLC_MODEL", "INTEL SSDPF2NV307TZ"),
		timeout:    10 * time.Minute,
	}
	cfg.rookOperator = os.Getenv("PRISM_E2E_ROOK_OPERATOR") == "1"
	cfg.kubectl = env("PRISM_E2E_KUBECTL", "kubectl")
	cfg.kubectlPrism = os.Getenv("PRISM_E2E_KUBECTL_PRISM")
	cfg.samples = env("PRISM_E2E_SAMPLES", "../../config/samples")
	cfg.hotAdd = strings.Fields(os.Getenv("PRISM_E2E_HOTADD"))
	cfg.probeImage = os.Getenv("PRISM_E2E_PROBE_IMAGE")
	cfg.prometheusImage = os.Getenv("PRISM_E2E_PROMETHEUS_IMAGE")
	cfg.artifacts = os.Getenv("PRISM_E2E_ARTIFACTS")
	cfg.drills = os.Getenv("PRISM_E2E_DRILLS") == "1"
	cfg.drillAdd = strings.Fields(os.Getenv("PRISM_E2E_DRILL_ADD"))
	cfg.drillReplace = strings.Fields(os.Getenv("PRISM_E2E_DRILL_REPLACE"))
	cfg.drillFail = strings.Fields(os.Getenv("PRISM_E2E_DRILL_FAIL"))
	cfg.runbooks = env("PRISM_E2E_RUNBOOKS", "../../docs/runbooks")
	cfg.reboot, cfg.rebootRecord = os.Getenv("PRISM_E2E_REBOOT"), os.Getenv("PRISM_E2E_REBOOT_RECORD")
	if cfg.reboot != "" && cfg.reboot != rebootRecordPhase && cfg.reboot != rebootVerifyPhase {
		t.Fatalf("PRISM_E2E_REBOOT=%q: want %s or %s", cfg.reboot, rebootRecordPhase, rebootVerifyPhase)
	}
	if s := os.Getenv("PRISM_E2E_HELM_SET"); s != "" {
		cfg.helmSet = strings.Split(s, ",")
	}
	cc := env("PRISM_E2E_CEPHCLUSTER", "rook-ceph/e2e")
	ns, name, found := strings.Cut(cc, "/")
	if !found {
		t.Fatalf("PRISM_E2E_CEPHCLUSTER=%q: want NAMESPACE/NAME", cc)
	}
	cfg.cephNS, cfg.cephName = ns, name
	if s := os.Getenv("PRISM_E2E_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("PRISM_E2E_TIMEOUT=%q: %v", s, err)
		}
		cfg.timeout = d
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Prism e2e")
}

var _ = BeforeSuite(func() {
	var err error
	restCfg, err = clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	Expect(err).NotTo(HaveOccurred(), "kubeconfig %s", cfg.kubeconfig)
	// Under QEMU's TCG an apiserver answers slowly; the defaults throttle too.
	restCfg.Timeout = 2 * time.Minute
	restCfg.QPS, restCfg.Burst = 20, 40
	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(prismv1.AddToScheme(scheme)).To(Succeed())
	k8s, err = client.New(restCfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(restCfg)
	Expect(err).NotTo(HaveOccurred())
	SetDefaultEventuallyTimeout(cfg.timeout)
	SetDefaultEventuallyPollingInterval(5 * time.Second)
	if cfg.node == "" {
		nodes := &corev1.NodeList{}
		Expect(k8s.List(ctx(), nodes)).To(Succeed())
		Expect(nodes.Items).To(HaveLen(1), "the cluster has several nodes: name one with PRISM_E2E_NODE")
		cfg.node = nodes.Items[0].Name
	}
	GinkgoWriter.Printf("e2e: kubeconfig %s, node %s, fast %q, QLC %q, CephCluster %s/%s, Rook operator %t, hot-add %q\n",
		cfg.kubeconfig, cfg.node, cfg.fastModel, cfg.qlcModel, cfg.cephNS, cfg.cephName, cfg.rookOperator, cfg.hotAdd)
})

// Each spec's outcome as one line on stdout, "e2e-spec: <state> <seconds> s <text>", for the
// guest script's milestones (hack/e2e/guest-cluster.sh marks them with the guest's uptime).
var _ = ReportAfterEach(func(r SpecReport) {
	fmt.Printf("e2e-spec: %s %.1f s %s\n", r.State, r.RunTime.Seconds(), r.FullText())
})
