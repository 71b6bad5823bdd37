package envtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
	"github.com/prism-storage/prism/internal/plan/rook"
	"github.com/prism-storage/prism/test/support/testenv"
)

// cephRecording is what the probe's containers answer in a state of Ceph 16 recorded by
// test/ceph TestRecordGateAnswers (internal/plan/rook/testdata/ceph16/<state>).
func cephRecording(t *testing.T, state string) map[string]string {
	t.Helper()
	files := map[string]string{rook.ProbeHealth: "health.json", rook.ProbePGStat: "pg-stat.json",
		rook.ProbeDevices: "device-ls-by-host.json", rook.ProbeSafeToDestroy: "safe-to-destroy.json"}
	out := map[string]string{}
	for name, file := range files {
		out[name] = readRepoFile(t, "internal/plan/rook/testdata/ceph16", state, file)
	}
	// The states were recorded before the destroyed question (decision 0058): its answer is the
	// probe's own on Ceph 16, osd.0 destroyed in the destroyed state and none in the others.
	out[rook.ProbeDestroyed] = readRepoFile(t, "internal/plan/rook/testdata/probe/ceph16", "destroyed.json")
	if state == "destroyed" {
		out[rook.ProbeDestroyed] = readRepoFile(t, "internal/plan/rook/testdata/probe/ceph16", "destroyed-destroyed.json")
	}
	return out
}

func readRepoFile(t *testing.T, elem ...string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(append([]string{testenv.RepoRoot()}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// probePods are the policy's probe pods in namespace ns.
func probePods(t *testing.T, ns, policy string) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{rook.LabelProbePolicy: policy}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// withDefaultServiceAccount makes namespace ns's default service account: the envtest has no
// controller-manager to make it, and pod admission requires it even when no token is mounted.
func withDefaultServiceAccount(t *testing.T, ns string) {
	t.Helper()
	if err := env.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// rookMadeProbeKey acts as Rook's CephClient controller: the probe's CephClient, which the
// operator applied, is Ready with its Secret made (the status rook v1.20.4 writes).
func rookMadeProbeKey(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	cc := &unstructured.Unstructured{}
	cc.SetGroupVersionKind(rook.CephClientGVK)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: rook.ProbeClient}, cc); err != nil {
		t.Fatalf("the operator applied no CephClient %s/%s: %v", ns, rook.ProbeClient, err)
	}
	cc.Object["status"] = map[string]any{"phase": "Ready", "info": map[string]any{"secretName": rook.ProbeSecret}}
	if err := env.Client.Status().Update(ctx, cc); err != nil {
		t.Fatal(err)
	}
}

// finishProbe acts as the kubelet: the probe's containers ended at `at` with these messages
// (a message that is not Ceph's JSON with exit 1).
func finishProbe(t *testing.T, p *corev1.Pod, at time.Time, messages map[string]string) {
	t.Helper()
	p.Status.Phase = corev1.PodSucceeded
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		code := int32(0)
		if !strings.HasPrefix(messages[c.Name], "{") && !strings.HasPrefix(messages[c.Name], "[") {
			code, p.Status.Phase = 1, corev1.PodFailed
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: messages[c.Name],
				StartedAt: metav1.NewTime(at.Add(-3 * time.Second)), FinishedAt: metav1.NewTime(at)}}})
	}
	if err := env.Client.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// TestHeldReplacementsAskCephThroughAProbe: while the gate holds node a's re-created OSDs, the
// operator (with its generated RBAC) keeps one probe pod for node a in the CephCluster's
// namespace, running the cluster's Ceph image as the read-only CephClient it applies; the test
// acts as the kubelet with answers recorded on Ceph 16. Fresh answers are kept, old ones asked
// again, a failed probe is reported with Ceph's reason, and once nothing is held no probe is
// left. A healthy cluster with nothing held never runs one.
func TestHeldReplacementsAskCephThroughAProbe(t *testing.T) {
	ctx := context.Background()
	// The old OSD purged, as the runbook says: Ceph lets its replacement go (decisions 0046, 0058).
	rec := cephRecording(t, "purged")
	// A probe whose key Ceph refuses (test/ceph TestCephProbeClient).
	wrongKey := readRepoFile(t, "internal/plan/rook/testdata/probe/ceph16/health-wrong-key.txt")
	label := unique("probe")
	nodes, cluster, policy := policyOnItsOwnCluster(t, label)
	ns := cluster.GetNamespace()
	now := time.Now().UTC().Truncate(time.Second)
	// The operator may run probes in the CephCluster's namespace only (a Role there, as the
	// chart's operator.cephNamespaces grants).
	r := &hybridstoragepolicy.Reconciler{Client: operatorClient(t), Recorder: operatorRecorder(t), Now: func() time.Time { return now },
		CephNamespaces: []string{"rook-ceph", ns}}
	run := func() {
		t.Helper()
		for i := 0; i < 2; i++ {
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: policy.Name}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	onePod := func(what string) corev1.Pod {
		t.Helper()
		pods := probePods(t, ns, policy.Name)
		if len(pods) != 1 {
			t.Fatalf("%s: %d probe pods, want 1", what, len(pods))
		}
		return pods[0]
	}
	a := nodes["optane-qlc-a"].name
	run()
	markProvisioned(t, a)
	run()
	if pods := probePods(t, ns, policy.Name); len(pods) != 0 {
		t.Fatalf("nothing held: %d probe pods", len(pods))
	}

	replaceFastDevice(t, a)
	run()
	markProvisioned(t, a)
	run()
	// Until Rook has made the probe's key, no probe: its Secret mount would fail until the
	// kubelet's deadline (the e2e guest, 2026-12-07).
	if pods := probePods(t, ns, policy.Name); len(pods) != 0 {
		t.Fatalf("replacements held, the CephClient not Ready in Rook's status: %d probe pods, want none", len(pods))
	}
	rookMadeProbeKey(t, ns)
	run()
	first := onePod("replacements held")
	if rook.ProbeNodeOf(&first) != a || first.Spec.Containers[0].Image != "quay.io/ceph/ceph:v19.2.3" ||
		len(first.OwnerReferences) != 1 || first.OwnerReferences[0].UID != policy.UID {
		t.Errorf("probe pod: node %q image %s owners %v", rook.ProbeNodeOf(&first), first.Spec.Containers[0].Image, first.OwnerReferences)
	}
	// It asks about the drives held (decision 0057): the first one named in the condition too.
	held := heldDevices(t, policy.Name)
	_, firstHeld, _ := strings.Cut(strings.Join(held, ""), "first: "+a+" ")
	firstHeld, _, _ = strings.Cut(firstHeld, ":")
	var asked []string
	for _, e := range first.Spec.Containers[2].Env {
		if e.Name == "PRISM_DEVICES" {
			if err := json.Unmarshal([]byte(e.Value), &asked); err != nil {
				t.Errorf("PRISM_DEVICES %q: %v", e.Value, err)
			}
		}
	}
	if first.Spec.Containers[2].Name != rook.ProbeDevices || firstHeld == "" || !slices.Contains(asked, firstHeld) {
		t.Errorf("the probe's %s container asks about %q; the first drive held is %q (%q)", first.Spec.Containers[2].Name, asked, firstHeld, held)
	}
	cc := &unstructured.Unstructured{}
	cc.SetGroupVersionKind(rook.CephClientGVK)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: rook.ProbeClient}, cc); err != nil {
		t.Fatal(err)
	}
	if caps, _, _ := unstructured.NestedStringMap(cc.Object, "spec", "caps"); len(caps) != 2 || caps["mon"] != "allow r" || caps["mgr"] != "allow r" {
		t.Errorf("CephClient caps %v", caps)
	}

	// The kubelet's part: the probe answers. Fresh answers are kept, not asked again.
	finishProbe(t, &first, now, rec)
	now = now.Add(30 * time.Second)
	run()
	if p := onePod("fresh answers"); p.Name != first.Name {
		t.Errorf("fresh answers: probe %s replaced by %s", first.Name, p.Name)
	}
	// A minute on, Ceph is asked again.
	now = now.Add(time.Minute)
	run()
	second := onePod("old answers")
	if second.Name == first.Name {
		t.Fatalf("old answers: probe %s kept", first.Name)
	}
	// The new probe fails: Ceph's reason reaches the admin when it is replaced.
	failing := map[string]string{}
	for k, v := range rec {
		failing[k] = v
	}
	failing[rook.ProbeHealth] = wrongKey
	finishProbe(t, &second, now, failing)
	now = now.Add(2 * time.Minute)
	run()
	if p := onePod("after a failed probe"); p.Name == second.Name {
		t.Errorf("a failed probe was kept")
	}
	wantEvent(t, policy.Name, hybridstoragepolicy.EventCephProbeFailed, "asking Ceph about node "+a+": health: exit 1: "+strings.TrimSpace(wrongKey))

	// Everything released, one at a time: Ceph answers each new probe, its health changing
	// after each release (status.ceph.lastChanged, the gate's settle). Then no probe is left.
	for i := 0; i < 20 && len(heldDevices(t, policy.Name)) > 0; i++ {
		now = now.Add(20 * time.Minute)
		setCephHealth(t, cluster, "HEALTH_OK", now.Add(-time.Minute))
		run()
		if pods := probePods(t, ns, policy.Name); len(pods) == 1 && pods[0].Status.Phase == corev1.PodPending {
			finishProbe(t, &pods[0], now, rec)
			run()
		}
	}
	if held := heldDevices(t, policy.Name); len(held) > 0 {
		t.Fatalf("still held: %v", held)
	}
	if pods := probePods(t, ns, policy.Name); len(pods) != 0 {
		t.Errorf("nothing held any more: %d probe pods left", len(pods))
	}
}

// TestProbesStayInTheCephNamespaces: a policy whose CephCluster is outside the namespaces the
// operator may probe in gets no probe, and the admin an Event naming the chart value, with no
// request the operator's RBAC would refuse (its cache lists pods in those namespaces only).
func TestProbesStayInTheCephNamespaces(t *testing.T) {
	ctx := context.Background()
	label := unique("probe-ns")
	nodes, cluster, policy := policyOnItsOwnCluster(t, label)
	ns := cluster.GetNamespace()
	now := time.Now().UTC().Truncate(time.Second)
	r := &hybridstoragepolicy.Reconciler{Client: operatorClient(t), Recorder: operatorRecorder(t), Now: func() time.Time { return now },
		CephNamespaces: []string{"rook-ceph"}}
	run := func() {
		t.Helper()
		for i := 0; i < 2; i++ {
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: policy.Name}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := nodes["optane-qlc-a"].name
	run()
	markProvisioned(t, a)
	run()
	replaceFastDevice(t, a)
	run()
	markProvisioned(t, a)
	run()
	if held := heldDevices(t, policy.Name); len(held) == 0 {
		t.Fatal("no replacement held: the test did not reach the probe")
	}
	if pods := probePods(t, ns, policy.Name); len(pods) != 0 {
		t.Errorf("%d probe pods in %s, outside the operator's Ceph namespaces", len(pods), ns)
	}
	wantEvent(t, policy.Name, hybridstoragepolicy.EventCephProbeFailed, "the operator may not ask Ceph in namespace "+ns+", where CephCluster "+cluster.GetName()+
		" is: add it to the chart's operator.cephNamespaces (--ceph-namespaces rook-ceph)")
}

// heldDevices is the RookConfigured message when it reports replacements held ("" entries: none).
func heldDevices(t *testing.T, policy string) []string {
	t.Helper()
	p := &prismv1.HybridStoragePolicy{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: policy}, p); err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == prismv1.ConditionRookConfigured && c.Reason == hybridstoragepolicy.ReasonReplacingOSDs && strings.Contains(c.Message, "one at a time") {
			return []string{c.Message}
		}
	}
	return nil
}

// installOperatorAdmission applies the chart's admission policy on the operator's pods, as a
// real install would.
func installOperatorAdmission(t *testing.T) {
	t.Helper()
	raw := readRepoFile(t, "charts/prism/files/operator-admission.yaml")
	for _, doc := range strings.Split(strings.ReplaceAll(raw, "{{ .Release.Namespace }}", "prism-system"), "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// TestOperatorMayCreateOnlyProbePods: with its RBAC (pods create in its Ceph namespaces) and the
// chart's admission policy, the operator's service account creates the probe rook.ProbePod
// builds, and no pod that is more than a probe.
func TestOperatorMayCreateOnlyProbePods(t *testing.T) {
	ctx := context.Background()
	installOperatorAdmission(t)
	op := operatorClient(t)
	ns := unique("probe-admission")
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	grantProbeNamespace(t, ns)
	probe := func() *corev1.Pod {
		return rook.ProbePod(rook.ProbeTarget{Policy: "p", Owner: metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u"},
			Namespace: ns, Image: "quay.io/ceph/ceph:v19.2.3", Node: "n1"})
	}
	escalations := map[string]func(p *corev1.Pod){
		"a host path": func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		},
		"a privileged container": func(p *corev1.Pod) {
			sc := p.Spec.Containers[0].SecurityContext
			sc.Privileged, sc.AllowPrivilegeEscalation = new(true), nil
		},
		"a service account token": func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = new(true) },
		"the host network":        func(p *corev1.Pod) { p.Spec.HostNetwork = true },
		"another service account": func(p *corev1.Pod) { p.Spec.ServiceAccountName = "rook-ceph-system" },
		"not a probe":             func(p *corev1.Pod) { p.Labels["app.kubernetes.io/name"] = "shell" },
		"root": func(p *corev1.Pod) {
			p.Spec.SecurityContext.RunAsNonRoot, p.Spec.SecurityContext.RunAsUser = nil, new(int64(0))
		},
	}
	// The policy compiles asynchronously after it is created: wait until it denies.
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		p := probe()
		escalations["a host path"](p)
		if err = op.Create(ctx, p); err != nil {
			break
		}
		_ = env.Client.Delete(ctx, p)
	}
	for what, escalate := range escalations {
		p := probe()
		escalate(p)
		if err := op.Create(ctx, p); err == nil || !strings.Contains(err.Error(), "prism-operator may create only its Ceph probe pods") {
			t.Errorf("the operator creating a probe with %s: got %v", what, err)
		}
	}
	if err := op.Create(ctx, probe()); err != nil {
		t.Errorf("the operator creating its probe: %v", err)
	}
}
