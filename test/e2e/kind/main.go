// Command kind runs Prism's e2e suite (test/e2e) in a kind cluster, through kind's own Go
// library (sigs.k8s.io/kind, pinned in go.mod): `make e2e-kind`.
//
//  1. finds the container engine kind would use (docker, nerdctl or podman) and stops with a
//     clear message when there is none;
//  2. creates a one-node cluster (kind v0.33.0's default node image) with its kubeconfig in
//     a temporary file;
//  3. loads Prism's OCI archive (make images: bin/images/prism.oci.tar) into every node, as
//     `kind load image-archive` does;
//  4. installs Rook's chart (its CRDs; hack/e2e/rook-bins.sh --chart-only gives the chart and
//     helm) and a CephCluster for Prism to write into, as hack/e2e/guest-cluster.sh does;
//  5. runs `go test ./test/e2e` against the cluster and deletes it (unless -keep).
//
// The suite pairs a fast and a QLC drive of the models it is given (-fast-model, -qlc-model):
// kind's nodes are containers on this host, so those must be drives of this host (or NVMe-oF
// loop devices, hack/guest/nvmet-loop.sh). The suite partitions the fast one.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	"sigs.k8s.io/kind/pkg/cmd"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-kind:", err)
		os.Exit(1)
	}
}

// cephCluster is what Prism writes into; no OSD is asked of Rook (useAllNodes: false).
const cephCluster = `apiVersion: ceph.rook.io/v1
kind: CephCluster
metadata: {name: e2e, namespace: rook-ceph}
spec:
  dataDirHostPath: /var/lib/rook
  cephVersion: {image: quay.io/ceph/ceph:v20.2.4}
  mon: {count: 1, allowMultiplePerNode: true}
  mgr: {count: 1, allowMultiplePerNode: true}
  dashboard: {enabled: false}
  crashCollector: {disable: true}
  monitoring: {enabled: false}
  storage: {useAllNodes: false, useAllDevices: false}
`

func run() error {
	name := flag.String("name", "prism-e2e", "the kind cluster's name")
	archive := flag.String("image", "bin/images/prism.oci.tar", "Prism's OCI archive (make images)")
	rookDir := flag.String("rook", "", "the directory hack/e2e/rook-bins.sh --chart-only prints (helm, rook-ceph/); empty: run that script")
	fastModel := flag.String("fast-model", "", "the model of this host's fast drive the suite pairs (PRISM_E2E_FAST_MODEL)")
	qlcModel := flag.String("qlc-model", "", "the model of this host's QLC drive (PRISM_E2E_QLC_MODEL)")
	keep := flag.Bool("keep", false, "keep the cluster afterwards")
	flag.Parse()

	// 1. The container engine. kind has no other way to run its nodes.
	engine, err := containerEngine()
	if err != nil {
		return err
	}
	if _, err := os.Stat(*archive); err != nil {
		return fmt.Errorf("%s: %w (run make images)", *archive, err)
	}
	if *rookDir == "" {
		out, err := exec.Command("hack/e2e/rook-bins.sh", "--chart-only").Output()
		if err != nil {
			return fmt.Errorf("hack/e2e/rook-bins.sh --chart-only: %w", err)
		}
		*rookDir = strings.TrimSpace(string(out))
	}
	helm := filepath.Join(*rookDir, "helm")

	// 2. The cluster.
	provider := cluster.NewProvider(engine, cluster.ProviderWithLogger(cmd.NewLogger()))
	dir, err := os.MkdirTemp("", "prism-e2e-kind-")
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	start := time.Now()
	if err := provider.Create(*name, cluster.CreateWithKubeconfigPath(kubeconfig),
		cluster.CreateWithWaitForReady(5*time.Minute), cluster.CreateWithDisplayUsage(false)); err != nil {
		return fmt.Errorf("kind create cluster %s: %w", *name, err)
	}
	if !*keep {
		defer func() {
			if err := provider.Delete(*name, kubeconfig); err != nil {
				fmt.Fprintln(os.Stderr, "e2e-kind: delete:", err)
			}
			_ = os.RemoveAll(dir)
		}()
	}
	fmt.Printf("e2e-kind: cluster %s ready (%s)\n", *name, time.Since(start).Round(time.Second))

	// 3. Prism's image into every node's containerd.
	nodes, err := provider.ListInternalNodes(*name)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		f, err := os.Open(*archive)
		if err != nil {
			return err
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("load %s into %s: %w", *archive, n.String(), err)
		}
	}
	fmt.Printf("e2e-kind: %s loaded into %d nodes\n", *archive, len(nodes))

	// 4. Rook's chart and the CephCluster.
	sh := func(name string, args ...string) error {
		c := exec.Command(name, args...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		return c.Run()
	}
	if err := sh(helm, "--kubeconfig", kubeconfig, "upgrade", "--install", "rook-ceph", filepath.Join(*rookDir, "rook-ceph"),
		"--namespace", "rook-ceph", "--create-namespace", "--set", "csi.installCsiOperator=false", "--wait"); err != nil {
		return fmt.Errorf("helm install rook-ceph: %w", err)
	}
	if err := createCephCluster(kubeconfig); err != nil {
		return fmt.Errorf("create the CephCluster: %w", err)
	}

	// 5. The suite, with the kubectl plugin README's install section builds.
	plugin := filepath.Join(os.TempDir(), "prism-e2e-kind", "kubectl-prism")
	if err := sh("go", "build", "-o", plugin, "./cmd/kubectl-prism"); err != nil {
		return fmt.Errorf("build kubectl-prism: %w", err)
	}
	test := exec.Command("go", "test", "-count=1", "-timeout=60m", "-v", "./test/e2e", "-args", "-e2e.kubeconfig="+kubeconfig, "-ginkgo.v")
	test.Stdout, test.Stderr = os.Stdout, os.Stderr
	test.Env = append(os.Environ(), "PRISM_E2E_HELM="+helm, "PRISM_E2E_CEPHCLUSTER=rook-ceph/e2e", "PRISM_E2E_KUBECTL_PRISM="+plugin)
	if *fastModel != "" {
		test.Env = append(test.Env, "PRISM_E2E_FAST_MODEL="+*fastModel)
	}
	if *qlcModel != "" {
		test.Env = append(test.Env, "PRISM_E2E_QLC_MODEL="+*qlcModel)
	}
	if err := test.Run(); err != nil {
		return fmt.Errorf("the e2e suite: %w", err)
	}
	return nil
}

// containerEngine is the engine kind finds, once it has shown that it answers. kind's
// DetectNodeProvider looks only for a client (`docker -v`), so a docker CLI without a daemon
// (as on the machine this was written on) passes it; listing clusters needs the engine itself.
func containerEngine() (cluster.ProviderOption, error) {
	const none = "no container engine: kind runs its nodes as containers of docker, nerdctl or podman"
	const see = "docs/e2e.md says which e2e paths ran on this machine; make e2e-prism runs the same suite in the QEMU guest"
	engine, err := cluster.DetectNodeProvider()
	if err != nil {
		return nil, fmt.Errorf("%s, and none is installed here. %s", none, see)
	}
	if _, err := cluster.NewProvider(engine).List(); err != nil {
		return nil, fmt.Errorf("%s; a client is installed but the engine does not answer (%v). %s", none, err, see)
	}
	return engine, nil
}

// createCephCluster creates the CephCluster once Rook's CRD serves it.
func createCephCluster(kubeconfig string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	c, err := client.New(rc, client.Options{})
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(cephCluster), &u.Object); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		err = c.Create(ctx, u)
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(5 * time.Second) // the CRD may not be Established yet
	}
}
