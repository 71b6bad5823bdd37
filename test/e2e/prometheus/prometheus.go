// Package prometheus is the e2e suite's Prometheus (test/e2e/prometheus_test.go): Debian's
// binary (hack/e2e/prometheus-image.sh) in a namespace of its own, scraping the agent pods the
// suite names as the chart's PodMonitor does (HTTPS, a bearer token allowed to get /metrics, the
// agent's node labels kept and up{} given the pod's node), with its own ServiceAccount bound to
// the chart's ClusterRole prism-metrics-reader (docs/security.md, "Endpoints"). The objects are
// built here, apart from the cluster, so that `make test` checks them (promtool reads the
// configuration and the targets).
package prometheus

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// Namespace holds the Prometheus and nothing else.
	Namespace = "prism-e2e-prometheus"
	// Name of its ServiceAccount, Deployment, Service, ConfigMap and cluster-wide bindings.
	Name = "prometheus"
	// ClusterIP is the Service's fixed address: the guest runs no cluster DNS, and the chart,
	// installed before Prometheus is deployed, names it in operator.prometheusURL. It lies in
	// the lowest 256 addresses of the guest's 10.96.0.0/16, which the API server allocates
	// dynamically only when the rest is full.
	ClusterIP = "10.96.0.90"
	// Port Prometheus serves its API on.
	Port = 9090
	// ScrapeInterval: 4 samples a minute, as few as the dashboards' rate windows (1 min) take.
	ScrapeInterval = "15s"
	// Job is the agents' job, as the demo names it.
	Job = "prism-agent"
	// tokenFile is the pod's own ServiceAccount token, the identity it scrapes with.
	tokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	// configDir holds the ConfigMap: the configuration and the targets.
	configDir   = "/etc/prometheus"
	targetsFile = configDir + "/targets.json"
)

// URL is the address the operator and the suite reach Prometheus at.
var URL = fmt.Sprintf("http://%s:%d", ClusterIP, Port)

// Target is one agent pod to scrape: its pod IP and metrics port, its node and name.
type Target struct{ Address, Node, Pod string }

// Config is the Prometheus' configuration. Debian's build has no Kubernetes service discovery
// (its promtool rejects kubernetes_sd_configs), so the agents come from a file the suite writes
// (Targets), which Prometheus reads again when the ConfigMap's volume changes.
func Config() string {
	return fmt.Sprintf(`global: {scrape_interval: %[1]s, scrape_timeout: 10s, evaluation_interval: %[1]s}
scrape_configs:
- job_name: %[2]s
  scheme: https
  # The agents' certificates are self-signed (metrics.certSecret unset), as the PodMonitor's
  # insecureSkipVerify expects.
  tls_config: {insecure_skip_verify: true}
  authorization: {credentials_file: %[3]s}
  # The agent labels every series with its node; keep them as exported (honorLabels).
  honor_labels: true
  file_sd_configs:
  - files: [%[4]s]
    refresh_interval: 30s
`, ScrapeInterval, Job, tokenFile, targetsFile)
}

// Targets is the file_sd file for ts: up{} and the scrape's own series carry the node too, as
// the chart's PodMonitor relabels them.
func Targets(ts []Target) (string, error) {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := make([]group, 0, len(ts))
	for _, t := range ts {
		if t.Address == "" || t.Node == "" || t.Pod == "" {
			return "", fmt.Errorf("target %+v: want an address, a node and a pod", t)
		}
		groups = append(groups, group{Targets: []string{t.Address}, Labels: map[string]string{"node": t.Node, "pod": t.Pod}})
	}
	b, err := json.Marshal(groups)
	return string(b), err
}

// Args are the Prometheus' flags: a short retention, and a memory of one block at most.
func Args() []string {
	return []string{
		"--config.file=" + configDir + "/prometheus.yml",
		"--storage.tsdb.path=/prometheus",
		"--storage.tsdb.retention.time=3h",
		"--storage.tsdb.retention.size=512MB",
		fmt.Sprintf("--web.listen-address=:%d", Port),
	}
}

// Objects are everything to create, in order, for a Prometheus on node (by name, where its
// image was imported) running image and scraping targets (ConfigMap holds them).
func Objects(node, image string, targets []Target) ([]client.Object, error) {
	labels := map[string]string{"app.kubernetes.io/name": Name, "app.kubernetes.io/part-of": "prism-e2e"}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels}
	}
	cm, err := ConfigMap(targets)
	if err != nil {
		return nil, err
	}
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce":         "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest",
		}}},
		&corev1.ServiceAccount{ObjectMeta: meta(Name)},
		// The right to read /metrics: the chart's own ClusterRole, as docs/security.md says to
		// bind it to a Prometheus that scrapes with its own identity.
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prism-e2e-prometheus-metrics", Labels: labels},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "prism-metrics-reader"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: Name, Namespace: Namespace}}},
		cm,
		deployment(meta(Name), labels, node, image),
		&corev1.Service{ObjectMeta: meta(Name), Spec: corev1.ServiceSpec{
			ClusterIP: ClusterIP, Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: Port, TargetPort: intstr.FromString("http")}},
		}},
	}, nil
}

// ConfigMap holds the configuration and the targets; the suite updates it when the agents change.
func ConfigMap(targets []Target) (*corev1.ConfigMap, error) {
	t, err := Targets(targets)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: map[string]string{"app.kubernetes.io/name": Name, "app.kubernetes.io/part-of": "prism-e2e"}},
		Data:       map[string]string{"prometheus.yml": Config(), "targets.json": t},
	}, nil
}

func deployment(meta metav1.ObjectMeta, labels map[string]string, node, image string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
		Replicas: new(int32(1)),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		// One TSDB at a time: the old pod ends before the new one starts.
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				ServiceAccountName: Name,
				NodeName:           node,
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot: new(true), RunAsUser: new(int64(65534)), RunAsGroup: new(int64(65534)), FSGroup: new(int64(65534)),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Containers: []corev1.Container{{
					Name: Name, Image: image, ImagePullPolicy: corev1.PullNever, Args: Args(),
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: Port}},
					ReadinessProbe: &corev1.Probe{
						ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/-/ready", Port: intstr.FromString("http")}},
						PeriodSeconds: 10, TimeoutSeconds: 5, FailureThreshold: 3,
					},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
					},
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: new(false), ReadOnlyRootFilesystem: new(true),
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
					VolumeMounts: []corev1.VolumeMount{
						{Name: "config", MountPath: configDir, ReadOnly: true},
						{Name: "data", MountPath: "/prometheus"},
					},
				}},
				Volumes: []corev1.Volume{
					{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: meta.Name}}}},
					{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: new(resource.MustParse("1Gi"))}}},
				},
			},
		},
	}}
}
