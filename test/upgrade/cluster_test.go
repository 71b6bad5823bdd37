package upgrade

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/test/support/fixturehost"
	"github.com/prism-storage/prism/test/support/testenv"
)

// cluster is one envtest control plane with Prism's binaries run against it as its pods.
type cluster struct {
	t          *testing.T
	env        *testenv.Env
	kubeconfig string
	roots      map[string]string // node name -> fixture host root
}

const (
	testLabel   = "prism-test"
	policyName  = "upgrade"
	cephNS      = "rook-ceph"
	cephName    = "rook-ceph"
	rookCluster = `
apiVersion: ceph.rook.io/v1
kind: CephCluster
spec:
  cephVersion: {image: quay.io/ceph/ceph:v19.2.3}
  dataDirHostPath: /var/lib/rook
  mon: {count: 3}
  storage:
    useAllNodes: false
    useAllDevices: false
`
)

// nodeNames are the fixture nodes the policy claims (test/fixtures/nodes).
var nodeNames = []string{"optane-qlc-a", "optane-qlc-b"}

// startCluster starts the control plane with Prism's CRDs from crds, the fixture nodes' Node
// objects and host roots, and the admin's CephCluster.
func startCluster(t *testing.T, crds string) *cluster {
	t.Helper()
	env, err := testenv.StartWithCRDs(crds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kc, err := env.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, env: env, kubeconfig: filepath.Join(t.TempDir(), "kubeconfig"), roots: map[string]string{}}
	if err := os.WriteFile(c.kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	repo := testenv.RepoRoot()
	ctx := context.Background()
	for _, name := range nodeNames {
		f, err := fixturehost.Load(filepath.Join(repo, fixturehost.NodesDir, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(t.TempDir(), name)
		if err := fixturehost.Build(f, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
			t.Fatal(err)
		}
		c.roots[name] = root
		labels := map[string]string{testLabel: "upgrade", testLabel + "/rolled-back": "yes"}
		for k, v := range f.Labels {
			labels[k] = v
		}
		if err := env.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cephNS}}); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(rookCluster), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(cephNS)
	u.SetName(cephName)
	if err := env.Client.Create(ctx, u, client.FieldOwner("admin")); err != nil {
		t.Fatal(err)
	}
	return c
}

// operator runs bins' operator as the chart's Deployment would (one replica, no leader election).
func (c *cluster) operator(bins binaries, name string) *proc {
	return start(c.t, c.kubeconfig, name, bins.manager, operatorArgs...)
}

var operatorArgs = []string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false"}

// agent runs bins' agent for node on its fixture host root, read-only (--provision=false: the
// fixture's devices are files, not block devices to partition). It inventories once at start
// (the period is an hour), so the test is the only other writer of the status afterwards.
func (c *cluster) agent(bins binaries, name, node string) *proc {
	root := c.roots[node]
	return start(c.t, c.kubeconfig, name, bins.agent, "run", "--node-name="+node, "--host-root="+root,
		"--identify-dir="+filepath.Join(root, "identify"), "--logs-dir="+filepath.Join(root, "logs"),
		"--period=1h", "--heartbeat=1h", "--provision=false", "--metrics-bind-address=0",
		"--ignore-ancestor-processes")
}

// applyCRDs updates Prism's CRDs in place from dir, as `helm upgrade` or `helm rollback`
// applies the chart's templates/crds/, and waits until they are served.
func (c *cluster) applyCRDs(dir string) {
	c.t.Helper()
	if _, err := envtest.InstallCRDs(c.env.Config, envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true}); err != nil {
		c.t.Fatalf("applying the CRDs of %s: %v", dir, err)
	}
}

var (
	storageNodeGVK = prismv1.GroupVersion.WithKind("StorageNode")
	policyGVK      = prismv1.GroupVersion.WithKind("HybridStoragePolicy")
	cephClusterGVK = schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster"}
)

// get reads an object as stored, with no Go types between (an old and a new Prism read it alike).
func (c *cluster) get(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	c.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		c.t.Fatal(err)
	}
	return u
}

// waitFor polls cond every 200 ms until it holds or timeout passes; what says why it does not.
func (c *cluster) waitFor(timeout time.Duration, what string, cond func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("after %s: %s: %s", timeout, what, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitForAgent waits until node's StorageNode says its agent is version and has inventoried.
func (c *cluster) waitForAgent(node, version string) {
	c.t.Helper()
	c.waitFor(time.Minute, "agent "+version+" on "+node, func() (bool, string) {
		sn := &unstructured.Unstructured{}
		sn.SetGroupVersionKind(storageNodeGVK)
		if err := c.env.Client.Get(context.Background(), client.ObjectKey{Name: node}, sn); err != nil {
			return false, err.Error()
		}
		v, _, _ := unstructured.NestedString(sn.Object, "status", "agentVersion")
		inv, _, _ := unstructured.NestedString(sn.Object, "status", "lastInventoryTime")
		return v == version && inv != "", fmt.Sprintf("agentVersion %q, lastInventoryTime %q", v, inv)
	})
}

// createPolicy creates the policy in Apply mode for the fixture nodes, DB slots of 60 GiB.
func (c *cluster) createPolicy() {
	c.t.Helper()
	p := &prismv1.HybridStoragePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: prismv1.HybridStoragePolicySpec{
			Mode:         prismv1.ModeApply,
			NodeSelector: prismv1.NodeSelector{MatchLabels: map[string]prismv1.LabelValue{testLabel: "upgrade", "prism.storage.io/role": "storage"}},
			CephCluster:  prismv1.ObjectRef{Namespace: cephNS, Name: cephName},
			DB:           prismv1.DBSizing{Size: resource.NewQuantity(60<<30, resource.BinarySI)},
		},
	}
	if err := c.env.Client.Create(context.Background(), p); err != nil {
		c.t.Fatal(err)
	}
}

// markProvisioned reports, as a provisioning agent would once done, every planned partition
// Ready (the agents here are read-only: they never write status.partitions).
func (c *cluster) markProvisioned(node string) {
	c.t.Helper()
	if err := testenv.MarkProvisioned(context.Background(), c.env.Client, node); err != nil {
		c.t.Fatalf("reporting node %s provisioned: %v", node, err)
	}
}

// state is what an upgrade or rollback must leave as it found: each node's claim, plan and
// spec generation, Prism's entries in the CephCluster, the policy's condition statuses.
type state struct {
	plans       map[string]any
	claims      map[string]string
	generations map[string]int64
	entries     map[string]any
	conditions  map[string]string
	rookMessage string // RookConfigured's message
}

func (c *cluster) observe() state {
	c.t.Helper()
	s := state{plans: map[string]any{}, claims: map[string]string{}, generations: map[string]int64{}, entries: map[string]any{}, conditions: map[string]string{}}
	for _, n := range nodeNames {
		sn := c.get(storageNodeGVK, "", n)
		s.plans[n], _, _ = unstructured.NestedFieldCopy(sn.Object, "spec", "plan")
		s.claims[n], _, _ = unstructured.NestedString(sn.Object, "spec", "policyName")
		s.generations[n] = sn.GetGeneration()
	}
	cc := c.get(cephClusterGVK, cephNS, cephName)
	list, _, _ := unstructured.NestedSlice(cc.Object, "spec", "storage", "nodes")
	for _, e := range list {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		s.entries[name] = m
	}
	p := c.get(policyGVK, "", policyName)
	conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
	for _, x := range conds {
		m, _ := x.(map[string]any)
		s.conditions[fmt.Sprint(m["type"])] = fmt.Sprintf("%v (%v)", m["status"], m["reason"])
		if m["type"] == "RookConfigured" {
			s.rookMessage, _ = m["message"].(string)
		}
	}
	return s
}

// same reports every difference between what was and what is.
func (was state) same(t *testing.T, step string, is state) {
	t.Helper()
	for _, n := range nodeNames {
		if !reflect.DeepEqual(was.plans[n], is.plans[n]) {
			t.Errorf("%s: node %s's plan changed:\nwas %v\nis  %v", step, n, was.plans[n], is.plans[n])
		}
		if was.claims[n] != is.claims[n] {
			t.Errorf("%s: node %s's claim %q became %q", step, n, was.claims[n], is.claims[n])
		}
		if was.generations[n] != is.generations[n] {
			t.Errorf("%s: node %s's spec was rewritten (generation %d -> %d)", step, n, was.generations[n], is.generations[n])
		}
		if !reflect.DeepEqual(was.entries[n], is.entries[n]) {
			t.Errorf("%s: node %s's CephCluster entry changed:\nwas %v\nis  %v", step, n, was.entries[n], is.entries[n])
		}
	}
	if !reflect.DeepEqual(was.conditions, is.conditions) || was.rookMessage != is.rookMessage {
		t.Errorf("%s: the policy's conditions changed:\nwas %v, RookConfigured %q\nis  %v, RookConfigured %q", step, was.conditions, was.rookMessage, is.conditions, is.rookMessage)
	}
}

// settled waits until the policy's status reflects its current generation, then 2 s more for
// the writes a reconcile may still make after it.
func (c *cluster) settled(gen int64) {
	c.t.Helper()
	c.waitFor(time.Minute, "the operator to observe the policy's generation", func() (bool, string) {
		p := c.get(policyGVK, "", policyName)
		og, _, _ := unstructured.NestedInt64(p.Object, "status", "observedGeneration")
		return og >= gen, fmt.Sprintf("observedGeneration %d, generation %d", og, gen)
	})
	time.Sleep(2 * time.Second)
}

// patchPolicy merge-patches the policy's spec and returns its new generation.
func (c *cluster) patchPolicy(patch string, opts ...client.PatchOption) *unstructured.Unstructured {
	c.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(policyGVK)
	u.SetName(policyName)
	if err := c.env.Client.Patch(context.Background(), u, client.RawPatch("application/merge-patch+json", []byte(patch)), opts...); err != nil {
		c.t.Fatalf("patching the policy with %s: %v", patch, err)
	}
	return u
}
