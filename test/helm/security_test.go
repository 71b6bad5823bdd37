package helm

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// podTemplate converts a rendered workload's pod template.
func podTemplate(t *testing.T, workload *unstructured.Unstructured) corev1.PodTemplateSpec {
	t.Helper()
	raw, _, _ := unstructured.NestedMap(workload.Object, "spec", "template")
	var pt corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &pt); err != nil {
		t.Fatal(err)
	}
	return pt
}

// forbidden evaluates a pod with Pod Security Admission's own checks at level (latest version)
// and returns each failed check as "reason: detail", sorted.
func forbidden(t *testing.T, pt corev1.PodTemplateSpec, level psaapi.Level) []string {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range ev.EvaluatePod(psaapi.LevelVersion{Level: level, Version: psaapi.LatestVersion()}, &pt.ObjectMeta, &pt.Spec) {
		if !r.Allowed {
			out = append(out, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	sort.Strings(out)
	return out
}

// TestOperatorPodIsRestricted: the operator's pod passes the Pod Security "restricted" level
// (k8s.io/pod-security-admission's checks, as the API server runs them), with and without
// the endurance page.
func TestOperatorPodIsRestricted(t *testing.T) {
	for _, values := range []string{"", "operator: {prometheusURL: http://prometheus.monitoring:9090}"} {
		pt := podTemplate(t, renderValues(t, values, plainCaps, nil).must(t, "Deployment", "prism-operator"))
		if f := forbidden(t, pt, psaapi.LevelRestricted); len(f) > 0 {
			t.Errorf("values %q: the operator pod is not restricted:\n%s", values, strings.Join(f, "\n"))
		}
	}
}

// TestAgentPrivilegesAreTheDocumentedOnes pins what the agent's pod is given beyond Pod
// Security "baseline" to what docs/security.md explains: a privileged container, the host's
// PID namespace and the host paths below; /sys, /dev, /run/udev and the Ceph sockets
// read-only. Anything added (hostNetwork, a writable /dev, another host path) fails here.
func TestAgentPrivilegesAreTheDocumentedOnes(t *testing.T) {
	for _, tc := range []struct {
		values   string
		hostPath []string
	}{
		{"", []string{"/dev ro", "/run/udev ro", "/sys ro", "/var/lib/prism rw", "/var/lib/rook/exporter ro"}},
		{"agent: {openCAS: {enabled: true}, cephSocketDir: ''}", []string{"/dev ro", "/etc/opencas rw", "/run/udev ro", "/sys ro", "/var/lib/prism rw"}},
	} {
		pt := podTemplate(t, renderValues(t, tc.values, plainCaps, nil).must(t, "DaemonSet", "prism-agent"))
		var reasons []string
		for _, f := range forbidden(t, pt, psaapi.LevelBaseline) {
			reasons = append(reasons, strings.SplitN(f, ":", 2)[0])
		}
		if got := strings.Join(reasons, ", "); got != "host namespaces, hostPath volumes, privileged" {
			t.Errorf("values %q: the agent is beyond baseline for %s, want host namespaces, hostPath volumes, privileged", tc.values, got)
		}
		spec := pt.Spec
		if !spec.HostPID || spec.HostNetwork || spec.HostIPC || len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
			t.Errorf("values %q: hostPID %t hostNetwork %t hostIPC %t, %d containers %d init containers", tc.values,
				spec.HostPID, spec.HostNetwork, spec.HostIPC, len(spec.Containers), len(spec.InitContainers))
		}
		readOnly := map[string]bool{}
		for _, m := range spec.Containers[0].VolumeMounts {
			readOnly[m.Name] = m.ReadOnly
		}
		var paths []string
		for _, v := range spec.Volumes {
			if v.HostPath == nil {
				continue
			}
			mode := "rw"
			if readOnly[v.Name] {
				mode = "ro"
			}
			paths = append(paths, v.HostPath.Path+" "+mode)
		}
		sort.Strings(paths)
		if !slices.Equal(paths, tc.hostPath) {
			t.Errorf("values %q: host paths %q, want %q", tc.values, paths, tc.hostPath)
		}
		sc := spec.Containers[0].SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("values %q: the agent's root file system is writable", tc.values)
		}
		for _, m := range spec.Containers[0].VolumeMounts {
			if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
				t.Errorf("values %q: mount %s propagates (%s): the agent mounts nothing", tc.values, m.Name, *m.MountPropagation)
			}
		}
	}
}

func networkPolicy(t *testing.T, rel release, name string) networkingv1.NetworkPolicy {
	t.Helper()
	var np networkingv1.NetworkPolicy
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rel.must(t, "NetworkPolicy", name).Object, &np); err != nil {
		t.Fatal(err)
	}
	return np
}

// TestNetworkPolicy: off by default; on, each policy selects its pods and opens only ports
// those pods name (the operator's probes, metrics and, with a Prometheus URL, the endurance
// page; the agents' metrics), to the configured peers.
func TestNetworkPolicy(t *testing.T) {
	if nps := defaultRelease(t).ofKind("NetworkPolicy"); len(nps) != 0 {
		t.Errorf("NetworkPolicies rendered by default: %d", len(nps))
	}
	const peer = "{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}"
	for _, tc := range []struct {
		values   string
		operator string
	}{
		{"networkPolicy: {enabled: true, metricsFrom: [" + peer + "]}", "probes from any; metrics from 1 peers"},
		{"networkPolicy: {enabled: true, metricsFrom: [" + peer + "]}\noperator: {prometheusURL: http://prometheus.monitoring:9090}",
			"probes from any; metrics from 1 peers; endurance from any"},
	} {
		rel := renderValues(t, tc.values, plainCaps, nil)
		for _, w := range []struct{ kind, name, want string }{
			{"Deployment", "prism-operator", tc.operator},
			{"DaemonSet", "prism-agent", "metrics from 1 peers"},
		} {
			np := networkPolicy(t, rel, w.name)
			pt := podTemplate(t, rel.must(t, w.kind, w.name))
			for k, v := range np.Spec.PodSelector.MatchLabels {
				if pt.Labels[k] != v {
					t.Errorf("%s: the policy's selector %s=%s does not select the pods (%v)", w.name, k, v, pt.Labels)
				}
			}
			if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
				t.Errorf("%s: policy types %v", w.name, np.Spec.PolicyTypes)
			}
			ports := map[string]bool{}
			for _, p := range pt.Spec.Containers[0].Ports {
				ports[p.Name] = true
			}
			var rules []string
			for _, r := range np.Spec.Ingress {
				if len(r.Ports) != 1 || r.Ports[0].Port == nil || !ports[r.Ports[0].Port.StrVal] {
					t.Errorf("%s: rule %+v opens a port the pod does not name (%v)", w.name, r.Ports, ports)
					continue
				}
				from := "any"
				if len(r.From) > 0 {
					from = strconv.Itoa(len(r.From)) + " peers"
				}
				rules = append(rules, r.Ports[0].Port.StrVal+" from "+from)
			}
			if got := strings.Join(rules, "; "); got != w.want {
				t.Errorf("values %q: %s ingress %q, want %q", tc.values, w.name, got, w.want)
			}
		}
	}
}
