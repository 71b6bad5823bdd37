package envtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
	"github.com/prism-storage/prism/internal/plan/rook"
	"github.com/prism-storage/prism/test/support/testenv"
)

const operatorUser = "system:serviceaccount:prism-system:prism-operator"

// operatorClient acts as the operator's service account with the ClusterRole generated from
// the RBAC markers (config/rbac/role.yaml), so a missing permission fails the test.
func operatorClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(operatorConfig(t), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// operatorConfig installs the operator's ClusterRole and binding and returns a config that
// acts as its service account.
func operatorConfig(t *testing.T) *rest.Config {
	t.Helper()
	role := &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(testenv.RepoRoot(), "config/rbac/role.yaml"), role)
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prism-operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: operatorUser}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: operatorUser, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	return cfg
}

// grantProbeNamespace gives the operator's service account config/rbac/role.yaml's Role (the
// Ceph probe's pods and CephClient) in namespace ns, as the chart does in each of
// operator.cephNamespaces.
func grantProbeNamespace(t *testing.T, ns string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config/rbac/role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(raw), "\n---\n")
	role := &rbacv1.Role{}
	if len(docs) != 2 {
		t.Fatalf("config/rbac/role.yaml has %d documents, want the ClusterRole and the probe's Role", len(docs))
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), role); err != nil || role.Kind != "Role" {
		t.Fatalf("config/rbac/role.yaml's second document: %v (kind %q)", err, role.Kind)
	}
	role.Namespace = ns
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: operatorUser}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// reconcileAs runs the reconciler with the given client until the policy is settled.
func reconcileAs(t *testing.T, c client.Client, name string) *prismv1.HybridStoragePolicy {
	t.Helper()
	r := &hybridstoragepolicy.Reconciler{Client: c}
	for i := 0; i < 2; i++ {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
			t.Fatalf("reconcile %s: %v", name, err)
		}
	}
	p := &prismv1.HybridStoragePolicy{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, p); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return p
}

// foreignSet is an admin's own PVC-backed OSDs, appended to userCephCluster's storage.
const foreignSet = `    storageClassDeviceSets:
    - name: user-ebs
      count: 3
      portable: true
      tuneDeviceClass: true
      volumeClaimTemplates:
      - metadata: {name: data}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Ti}}
          storageClassName: gp3
          volumeMode: Block
`

func newClusterWithForeignSet(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return createCephCluster(t, userCephCluster+foreignSet)
}

// reportCores writes, as the node's agent would, a running cache on every fast device with
// a cache partition, each capacity device a core in slot order, Ready unless states says
// otherwise. Cache ids come from the plan (the lead's planner) or the device's position.
func reportCores(t *testing.T, node string, states map[string]prismv1.CoreState) {
	t.Helper()
	ctx := context.Background()
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: node}, sn); err != nil {
		t.Fatal(err)
	}
	sn.Status.Caches = nil
	for i, f := range sn.Spec.Plan.FastDevices {
		if f.Cache == nil {
			continue
		}
		id := f.CacheID
		if id == 0 {
			id = int32(i + 1)
		}
		cache := prismv1.CacheStatus{FastDevice: f.StablePath, CacheID: id, State: prismv1.CacheRunning}
		for j, s := range f.Slots {
			if s.DataDevice == "" {
				continue
			}
			core := prismv1.CacheCoreStatus{Device: s.DataDevice, CoreID: int32(j + 1), ExportedObject: fmt.Sprintf("/dev/cas%d-%d", id, j+1), State: prismv1.CoreReady}
			if st, ok := states[s.DataDevice]; ok {
				core.State = st
			}
			cache.Cores = append(cache.Cores, core)
		}
		sn.Status.Caches = append(sn.Status.Caches, cache)
	}
	if err := env.Client.Status().Update(ctx, sn); err != nil {
		t.Fatal(err)
	}
}

// cachedDevices are a node's capacity devices behind a cache, in plan order.
func cachedDevices(t *testing.T, node string) []string {
	t.Helper()
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: node}, sn); err != nil {
		t.Fatal(err)
	}
	var devs []string
	for _, f := range sn.Spec.Plan.FastDevices {
		for _, s := range f.Slots {
			if f.Cache != nil && s.DataDevice != "" {
				devs = append(devs, s.DataDevice)
			}
		}
	}
	return devs
}

// namedEntries are the entries of a list under spec.storage (nodes, storageClassDeviceSets) by name.
func namedEntries(t *testing.T, c *unstructured.Unstructured, list string) map[string]map[string]any {
	t.Helper()
	entries, _, err := unstructured.NestedSlice(c.Object, "spec", "storage", list)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, e := range entries {
		m := e.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

func deviceSets(t *testing.T, c *unstructured.Unstructured) map[string]map[string]any {
	return namedEntries(t, c, "storageClassDeviceSets")
}

// policyVolumes are the live (not terminating) volumes labelled with the policy.
func policyVolumes(t *testing.T, policy string) map[string]corev1.PersistentVolume {
	t.Helper()
	list := &corev1.PersistentVolumeList{}
	if err := env.Client.List(context.Background(), list, client.MatchingLabels{rook.LabelPolicy: policy}); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.PersistentVolume{}
	for _, v := range list.Items {
		if v.DeletionTimestamp.IsZero() {
			out[v.Name] = v
		}
	}
	return out
}

// createPolicy creates an Apply policy over the test's nodes targeting cluster.
func createPolicy(t *testing.T, label string, cluster *unstructured.Unstructured, cache prismv1.CacheMode) *prismv1.HybridStoragePolicy {
	t.Helper()
	policy := newPolicy(label, prismv1.ModeApply)
	policy.Spec.CephCluster = prismv1.ObjectRef{Namespace: cluster.GetNamespace(), Name: cluster.GetName()}
	policy.Spec.Cache.Mode = cache
	if err := env.Client.Create(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	return policy
}

func rookCondition(p *prismv1.HybridStoragePolicy) *metav1.Condition {
	return meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionRookConfigured)
}

func TestOSDsOnCachesBecomeDeviceSetsOnLocalVolumes(t *testing.T) {
	ctx := context.Background()
	op := operatorClient(t)
	label := unique("rookpvc")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	cluster := newClusterWithForeignSet(t)
	policy := createPolicy(t, label, cluster, prismv1.CacheWriteBack)
	reconcileAs(t, op, policy.Name)
	a := nodes["optane-qlc-a"].name
	for _, n := range []string{a, nodes["optane-qlc-b"].name, nodes["optane-qlc-homelab-d"].name} {
		markProvisioned(t, n)
	}
	devs := cachedDevices(t, a)
	if len(devs) != 3 {
		t.Fatalf("node a has %d capacity devices behind a cache, want its 3 QLC drives", len(devs))
	}

	// Partitions ready, no core reported yet: nothing for node a, neither raw nor on a cache.
	p := reconcileAs(t, op, policy.Name)
	c := getCephCluster(t, cluster)
	if _, ok := storageNodes(t, c)[a]; ok {
		t.Fatalf("node a's QLC drives are in storage.nodes although they sit behind a cache: %v", storageNodes(t, c)[a])
	}
	if got := deviceSets(t, c); len(got) != 1 || got["user-ebs"] == nil {
		t.Fatalf("device sets before any core is ready: %v", sortedNames(got))
	}
	if cond := rookCondition(p); cond == nil || cond.Reason != hybridstoragepolicy.ReasonWaitingForCacheCores ||
		!strings.Contains(cond.Message, a+": 3 capacity devices wait for their cache cores") {
		t.Fatalf("RookConfigured = %+v", cond)
	}

	// Two of node a's cores Ready, one Pending: two sets, four volumes, the third held back.
	reportCores(t, a, map[string]prismv1.CoreState{devs[2]: prismv1.CorePending})
	p = reconcileAs(t, op, policy.Name)
	c = getCephCluster(t, cluster)
	sets := deviceSets(t, c)
	vols := policyVolumes(t, policy.Name)
	if len(sets) != 3 || len(vols) != 4 {
		t.Fatalf("sets %v, volumes %v: want the admin's set and 2 of Prism's, 4 volumes", sortedNames(sets), sortedNames(vols))
	}
	if sets[rook.DeviceSetName(a, devs[2])] != nil {
		t.Error("the device whose core is Pending got a device set")
	}
	for i, dev := range devs[:2] {
		name := rook.DeviceSetName(a, dev)
		checkSetBindsItsVolumes(t, sets[name], vols, fmt.Sprintf("/dev/cas1-%d", i+1), dev)
	}
	if cond := rookCondition(p); cond == nil || cond.Reason != hybridstoragepolicy.ReasonWaitingForCacheCores ||
		!strings.Contains(cond.Message, a+": 1 capacity devices wait for their cache cores ("+devs[2]+": core is Pending)") ||
		!strings.Contains(cond.Message, "2 OSDs on caches as device sets") {
		t.Fatalf("RookConfigured = %+v", cond)
	}
	// The admin's set and fields are intact, and still first.
	foreign := sets["user-ebs"]
	if foreign["count"] != int64(3) || foreign["portable"] != true || foreign["tuneDeviceClass"] != true {
		t.Errorf("the admin's set changed: %v", foreign)
	}
	if all, _, _ := unstructured.NestedSlice(c.Object, "spec", "storage", "storageClassDeviceSets"); all[0].(map[string]any)["name"] != "user-ebs" {
		t.Error("the admin's set moved")
	}
	if v, _, _ := unstructured.NestedInt64(c.Object, "spec", "mon", "count"); v != 3 {
		t.Error("the admin's mon count was lost")
	}
	sc := &storagev1.StorageClass{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: rook.LocalStorageClass}, sc); err != nil ||
		sc.Provisioner != "kubernetes.io/no-provisioner" || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Fatalf("StorageClass %s: %+v %v", rook.LocalStorageClass, sc, err)
	}

	// Every core Ready: three sets; nothing changes on the next reconcile (no write at all).
	reportCores(t, a, nil)
	reconcileAs(t, op, policy.Name)
	c = getCephCluster(t, cluster)
	if n := len(deviceSets(t, c)); n != 4 {
		t.Fatalf("%d device sets, want the admin's and 3 of Prism's", n)
	}
	rv := c.GetResourceVersion()
	volRV := map[string]string{}
	for n, v := range policyVolumes(t, policy.Name) {
		volRV[n] = v.ResourceVersion
	}
	reconcileAs(t, op, policy.Name)
	if got := getCephCluster(t, cluster).GetResourceVersion(); got != rv {
		t.Errorf("an unchanged plan rewrote the CephCluster (%s -> %s)", rv, got)
	}
	for n, v := range policyVolumes(t, policy.Name) {
		if volRV[n] != v.ResourceVersion {
			t.Errorf("an unchanged plan rewrote volume %s", n)
		}
	}

	// Rook's claim binds the first device's volumes (an OSD exists); then both first cores
	// drop out of Ready. The claimed set stays with its volumes; the unclaimed one goes.
	claimed, unclaimed := rook.DeviceSetName(a, devs[0]), rook.DeviceSetName(a, devs[1])
	bind(t, rook.VolumeName(claimed, rook.RoleData), cluster.GetNamespace())
	reportCores(t, a, map[string]prismv1.CoreState{devs[0]: prismv1.CoreInactive, devs[1]: prismv1.CorePending})
	p = reconcileAs(t, op, policy.Name)
	sets, vols = deviceSets(t, getCephCluster(t, cluster)), policyVolumes(t, policy.Name)
	if sets[claimed] == nil || sets[unclaimed] != nil {
		t.Fatalf("sets %v: want %s kept (claimed) and %s gone", sortedNames(sets), claimed, unclaimed)
	}
	if _, ok := vols[rook.VolumeName(unclaimed, rook.RoleData)]; ok {
		t.Errorf("the unclaimed volumes of a dropped set are still there: %v", sortedNames(vols))
	}
	if _, ok := vols[rook.VolumeName(claimed, rook.RoleMetadata)]; !ok {
		t.Errorf("the claimed set lost its metadata volume: %v", sortedNames(vols))
	}
	if cond := rookCondition(p); cond == nil || !strings.Contains(cond.Message, "device set "+claimed+" of "+a+" kept: a claim holds its volumes") {
		t.Fatalf("RookConfigured = %+v", cond)
	}

	// Deleting the policy removes Prism's unclaimed sets and volumes and the storage.nodes
	// entries; the claimed set and its volumes stay, and so does everything of the admin's.
	if err := env.Client.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcileAs(t, op, policy.Name)
	c = getCephCluster(t, cluster)
	sets, vols = deviceSets(t, c), policyVolumes(t, policy.Name)
	if len(sets) != 2 || sets["user-ebs"] == nil || sets[claimed] == nil {
		t.Fatalf("after deleting the policy the sets are %v", sortedNames(sets))
	}
	if len(vols) != 2 {
		t.Fatalf("after deleting the policy the volumes are %v, want the claimed set's two", sortedNames(vols))
	}
	if got := storageNodes(t, c); len(got) != 1 || got["hdd-node-1"] == nil {
		t.Fatalf("after deleting the policy storage.nodes is %v", keys(got))
	}
}

// checkSetBindsItsVolumes checks, on what the API server stored, that the set's two claim
// templates select exactly the device's two volumes, which can bind them.
func checkSetBindsItsVolumes(t *testing.T, set map[string]any, vols map[string]corev1.PersistentVolume, exported, device string) {
	t.Helper()
	if set == nil {
		t.Fatalf("no device set for %s", device)
	}
	if set["count"] != int64(1) || set["portable"] != false {
		t.Errorf("set %v", set)
	}
	templates := set["volumeClaimTemplates"].([]any)
	want := map[string]string{rook.RoleData: exported, rook.RoleMetadata: ""}
	for _, tmpl := range templates {
		m := tmpl.(map[string]any)
		role, _, _ := unstructured.NestedString(m, "metadata", "name")
		match, _, _ := unstructured.NestedStringMap(m, "spec", "selector", "matchLabels")
		class, _, _ := unstructured.NestedString(m, "spec", "storageClassName")
		mode, _, _ := unstructured.NestedString(m, "spec", "volumeMode")
		var selected []corev1.PersistentVolume
		for _, v := range vols {
			if labels.SelectorFromSet(match).Matches(labels.Set(v.Labels)) {
				selected = append(selected, v)
			}
		}
		if len(selected) != 1 {
			t.Fatalf("template %s of %s selects %d volumes", role, device, len(selected))
		}
		v := selected[0]
		if v.Spec.StorageClassName != class || string(*v.Spec.VolumeMode) != mode || v.Annotations[rook.AnnotationDevice] == "" {
			t.Errorf("template %s cannot bind %s: class %s mode %s", role, v.Name, class, mode)
		}
		if path, ok := want[role]; !ok || (path != "" && v.Spec.Local.Path != path) || (role == rook.RoleData && v.Annotations[rook.AnnotationDevice] != device) {
			t.Errorf("template %s of %s binds %s on %s", role, device, v.Name, v.Spec.Local.Path)
		}
		if role == rook.RoleMetadata && !strings.Contains(v.Spec.Local.Path, "-part") {
			t.Errorf("metadata volume %s is on %s, want a DB slot partition", v.Name, v.Spec.Local.Path)
		}
	}
	if ann, _, _ := unstructured.NestedString(templates[0].(map[string]any), "metadata", "annotations", "crushDeviceClass"); ann != "qlc" {
		t.Errorf("data template crushDeviceClass = %q", ann)
	}
}

// bind does what the volume binder does when Rook's claim gets the volume: it sets claimRef.
func bind(t *testing.T, volume, namespace string) {
	t.Helper()
	v := &corev1.PersistentVolume{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: volume}, v); err != nil {
		t.Fatal(err)
	}
	v.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: namespace, Name: "set-data-0-abcde"}
	if err := env.Client.Update(context.Background(), v); err != nil {
		t.Fatal(err)
	}
}

// A policy without a cache never takes the admin's device sets over.
func TestPolicyWithoutCacheLeavesDeviceSetsAlone(t *testing.T) {
	ctx := context.Background()
	label := unique("rooknocache")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	cluster := newClusterWithForeignSet(t)
	policy := createPolicy(t, label, cluster, "")
	reconcile(t, policy.Name)
	markProvisioned(t, nodes["optane-qlc-a"].name)
	reconcile(t, policy.Name)
	c := getCephCluster(t, cluster)
	if _, ok := storageNodes(t, c)[nodes["optane-qlc-a"].name]; !ok {
		t.Fatal("node a's OSD entries were not applied")
	}
	for _, mf := range c.GetManagedFields() {
		if mf.Manager == hybridstoragepolicy.FieldManager && strings.Contains(string(mf.FieldsV1.Raw), "storageClassDeviceSets") {
			t.Errorf("Prism took over spec.storage.storageClassDeviceSets: %s", mf.FieldsV1.Raw)
		}
	}
	if err := env.Client.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcile(t, policy.Name)
}

func sortedNames[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// Turning the cache on for a node whose OSDs Prism already put in storage.nodes: the entry
// stays (OSDs may run on the raw disks) and no device set doubles them, until an admin
// removes the entry; then the node's OSDs come from claims.
func TestCacheTurnedOnUnderExistingOSDsKeepsTheirEntry(t *testing.T) {
	ctx := context.Background()
	op := operatorClient(t)
	label := unique("rookturnon")
	nodes := startNodes(t, env.Client, label)
	publishAll(t, nodes)
	cluster := newCephCluster(t)
	policy := createPolicy(t, label, cluster, "")
	reconcileAs(t, op, policy.Name)
	a := nodes["optane-qlc-a"].name
	markProvisioned(t, a)
	reconcileAs(t, op, policy.Name)
	if _, ok := storageNodes(t, getCephCluster(t, cluster))[a]; !ok {
		t.Fatal("without a cache node a's OSDs must be in storage.nodes")
	}

	// The cache is turned on: the plan gains cache partitions; once provisioned, the node
	// runs a cache and every core is Ready — but its entry stays and no set appears.
	if err := env.Client.Get(ctx, client.ObjectKey{Name: policy.Name}, policy); err != nil {
		t.Fatal(err)
	}
	policy.Spec.Cache.Mode = prismv1.CacheWriteBack
	if err := env.Client.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcileAs(t, op, policy.Name)
	if len(cachedDevices(t, a)) != 3 {
		t.Fatal("the new plan puts node a's QLC drives behind a cache")
	}
	markProvisioned(t, a)
	reportCores(t, a, nil)
	p := reconcileAs(t, op, policy.Name)
	c := getCephCluster(t, cluster)
	if _, ok := storageNodes(t, c)[a]; !ok {
		t.Fatal("node a's storage.nodes entry was dropped under its OSDs")
	}
	if sets := deviceSets(t, c); len(sets) != 0 {
		t.Fatalf("device sets %v would double node a's OSDs", sortedNames(sets))
	}
	if cond := rookCondition(p); cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, a+": its OSDs stay in storage.nodes on the raw devices") {
		t.Fatalf("RookConfigured = %+v", cond)
	}

	// The admin removes the node's entry (after removing its OSDs): its OSDs now come from claims.
	nodesList, _, _ := unstructured.NestedSlice(c.Object, "spec", "storage", "nodes")
	var rest []any
	for _, n := range nodesList {
		if n.(map[string]any)["name"] != a {
			rest = append(rest, n)
		}
	}
	if err := unstructured.SetNestedSlice(c.Object, rest, "spec", "storage", "nodes"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(ctx, c, client.FieldOwner("admin")); err != nil {
		t.Fatal(err)
	}
	reconcileAs(t, op, policy.Name)
	c = getCephCluster(t, cluster)
	if _, ok := storageNodes(t, c)[a]; ok {
		t.Fatal("Prism put node a's entry back")
	}
	if sets := deviceSets(t, c); len(sets) != 3 {
		t.Fatalf("device sets %v, want node a's 3", sortedNames(sets))
	}
	if err := env.Client.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcileAs(t, op, policy.Name)
	if sets := deviceSets(t, getCephCluster(t, cluster)); len(sets) != 0 {
		t.Fatalf("deleting the policy left device sets %v", sortedNames(sets))
	}
	if vols := policyVolumes(t, policy.Name); len(vols) != 0 {
		t.Fatalf("deleting the policy left volumes %v", sortedNames(vols))
	}
}
