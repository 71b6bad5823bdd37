package rook

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
)

var probeOwner = metav1.OwnerReference{APIVersion: "prism.storage.io/v1alpha1", Kind: "HybridStoragePolicy", Name: "policy-7", UID: "uid-7"}

func TestCrushHost(t *testing.T) {
	for _, tc := range []struct{ node, hostname, want string }{
		{"n1", "", "n1"},
		{"n1", "n1.example.com", "n1-example-com"},
		{"ip-10-0-0-1.ec2.internal", "", "ip-10-0-0-1-ec2-internal"},
	} {
		if got := CrushHost(tc.node, tc.hostname); got != tc.want {
			t.Errorf("CrushHost(%q, %q) = %q, want %q", tc.node, tc.hostname, got, tc.want)
		}
	}
}

// TestProbePod: the pod asks about its node through environment variables only, as a non-root
// user with a read-only root and no token, reads the key from Rook's Secret and the mons from
// Rook's ConfigMap, and is labelled and owned so the operator finds and cleans it.
func TestProbePod(t *testing.T) {
	long := strings.Repeat("n", 70) + ".example.com"
	p := ProbePod(ProbeTarget{Policy: "policy-7", Owner: probeOwner, Namespace: "rook-ceph", Image: "quay.io/ceph/ceph:v19.2.3", Node: long, Hostname: "h.example.com"})

	if p.Namespace != "rook-ceph" || p.GenerateName != "prism-probe-" || !slices.Equal(p.OwnerReferences, []metav1.OwnerReference{probeOwner}) {
		t.Errorf("metadata: %s/%s owners %v", p.Namespace, p.GenerateName, p.OwnerReferences)
	}
	if p.Labels[LabelProbePolicy] != "policy-7" || p.Labels[LabelProbeNode] != LabelValue(long) || len(p.Labels[LabelProbeNode]) > 63 || ProbeNodeOf(p) != long {
		t.Errorf("labels %v, node %q", p.Labels, ProbeNodeOf(p))
	}
	s := p.Spec
	if s.RestartPolicy != corev1.RestartPolicyNever || s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != 120 ||
		s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken || s.SecurityContext.RunAsNonRoot == nil || !*s.SecurityContext.RunAsNonRoot ||
		*s.SecurityContext.RunAsUser != 167 || *s.SecurityContext.FSGroup != 167 {
		t.Errorf("pod spec: %+v", s)
	}
	if a := s.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil ||
		len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		!slices.Equal(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.MatchExpressions[0].Values, []string{"h.example.com"}) ||
		a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.MatchExpressions[0].Key != "kubernetes.io/hostname" {
		t.Errorf("affinity: want a preference for the probed node's hostname, got %+v", s.Affinity)
	}
	if len(s.Volumes) != 1 || s.Volumes[0].Secret == nil || s.Volumes[0].Secret.SecretName != "rook-ceph-client-prism-probe" ||
		!slices.Equal(s.Volumes[0].Secret.Items, []corev1.KeyToPath{{Key: "userKey", Path: "key"}}) {
		t.Errorf("key volume: %+v", s.Volumes)
	}
	var names []string
	for _, c := range s.Containers {
		names = append(names, c.Name)
		if c.Image != "quay.io/ceph/ceph:v19.2.3" || !slices.Equal(c.Command, []string{"/bin/sh", "-c", ProbeScript, "prism-probe", c.Name}) {
			t.Errorf("%s: image %s command %q", c.Name, c.Image, c.Command)
		}
		if c.TerminationMessagePolicy != corev1.TerminationMessageReadFile || c.TerminationMessagePath != "/dev/termination-log" {
			t.Errorf("%s: termination message %s %s", c.Name, c.TerminationMessagePath, c.TerminationMessagePolicy)
		}
		sc := c.SecurityContext
		if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("%s: security context %+v", c.Name, sc)
		}
		if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
			t.Errorf("%s: resources %+v", c.Name, c.Resources)
		}
		env := map[string]corev1.EnvVar{}
		for _, e := range c.Env {
			env[e.Name] = e
		}
		if env["PRISM_NODE"].Value != long || env["PRISM_CRUSH_HOST"].Value != "h-example-com" || env["PRISM_KEYFILE"].Value != "/etc/prism-probe/key" ||
			env["PRISM_TERMINATION_LOG"].Value != c.TerminationMessagePath {
			t.Errorf("%s: env %+v", c.Name, c.Env)
		}
		if ref := env["PRISM_MON_ENDPOINTS"].ValueFrom; ref == nil || ref.ConfigMapKeyRef == nil || ref.ConfigMapKeyRef.Name != "rook-ceph-mon-endpoints" || ref.ConfigMapKeyRef.Key != "data" {
			t.Errorf("%s: mon endpoints from %+v", c.Name, ref)
		}
	}
	if !slices.Equal(names, ProbeContainers) {
		t.Errorf("containers %v", names)
	}
	// The node's name reaches the pod only as a value: the script is the same for every node.
	if strings.Contains(ProbeScript, "example.com") {
		t.Error("the script names a node")
	}
}

func TestProbeCephClient(t *testing.T) {
	u := ProbeCephClient("rook-ceph", probeOwner)
	caps, _, _ := unstructuredMap(u.Object, "spec", "caps")
	if u.GetKind() != "CephClient" || u.GetAPIVersion() != "ceph.rook.io/v1" || u.GetNamespace() != "rook-ceph" || u.GetName() != "prism-probe" ||
		len(caps) != 2 || caps["mon"] != "allow r" || caps["mgr"] != "allow r" || !slices.Equal(u.GetOwnerReferences(), []metav1.OwnerReference{probeOwner}) {
		t.Errorf("CephClient %v", u.Object)
	}
}

func unstructuredMap(obj map[string]any, path ...string) (map[string]any, bool, error) {
	m := obj
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil, false, nil
		}
		m = next
	}
	return m, true, nil
}

// TestProbePodIsRestricted: the probe passes Pod Security "restricted" (the API server's own
// checks), so a Rook namespace at that level admits it.
func TestProbePodIsRestricted(t *testing.T) {
	p := ProbePod(ProbeTarget{Policy: "policy-7", Owner: probeOwner, Namespace: "rook-ceph", Image: "quay.io/ceph/ceph:v19.2.3", Node: "n1"})
	ev, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ev.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &p.ObjectMeta, &p.Spec) {
		if !r.Allowed {
			t.Errorf("not restricted: %s: %s", r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
}
