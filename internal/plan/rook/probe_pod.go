package rook

import (
	_ "embed"
	"encoding/json"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The probe pod: one container per question, each running the Ceph CLI of the CephCluster's
// image and leaving Ceph's JSON in its termination message, where the operator reads it
// without any exec or log permission.

// Labels and annotations of probe pods.
const (
	// LabelProbePolicy names (LabelValue) the policy whose probe this is.
	LabelProbePolicy = "prism.storage.io/probe-policy"
	// LabelProbeNode names (LabelValue) the node it asks about; AnnotationProbeNode in full.
	LabelProbeNode      = "prism.storage.io/probe-node"
	AnnotationProbeNode = "prism.storage.io/probe-node"
)

// Probe timing: a probe runs at most ProbeDeadline (activeDeadlineSeconds, enforced by the
// kubelet); its answers are asked again once ProbeMaxAge old; a pod no kubelet finished
// (unscheduled, its node gone) is given up after ProbeStuck.
const (
	ProbeDeadline = 2 * time.Minute
	ProbeMaxAge   = time.Minute
	ProbeStuck    = ProbeDeadline + time.Minute
)

// The probe's containers, one per answer, in CephAnswers' order.
const (
	ProbeHealth        = "health"
	ProbePGStat        = "pg-stat"
	ProbeDevices       = "devices"
	ProbeSafeToDestroy = "safe-to-destroy"
	ProbeDestroyed     = "destroyed"
)

// ProbeContainers are the container names of a probe pod.
var ProbeContainers = []string{ProbeHealth, ProbePGStat, ProbeDevices, ProbeSafeToDestroy, ProbeDestroyed}

const (
	// probeUID is the ceph user of Ceph's container images: it reads the key (fsGroup).
	probeUID = 167
	// probeKeyDir is where the Secret's key is mounted, as the file "key".
	probeKeyDir = "/etc/prism-probe"
	// terminationLog is the containers' termination message file.
	terminationLog = "/dev/termination-log"
	// probeDevicesEnv names the drives the devices question keeps Ceph's elements for.
	probeDevicesEnv = "PRISM_DEVICES"
)

// ProbeScript is what each probe container runs: `sh -c ProbeScript prism-probe <container>`.
// Everything it is told comes through environment variables, never through the script's text:
// PRISM_MON_ENDPOINTS (Rook's mon ConfigMap), PRISM_NODE (the Kubernetes node, as Ceph's OSD
// metadata names it: Rook sets NODE_NAME), PRISM_CRUSH_HOST (the node's CRUSH host bucket),
// PRISM_DEVICES (a JSON list of the kernel names and /dev paths whose elements of `ceph device
// ls-by-host` the devices question keeps, decision 0057), PRISM_KEYFILE and
// PRISM_TERMINATION_LOG. The health, devices and destroyed questions keep only what the gate
// reads of Ceph's answer with python3, which every image with the Ceph CLI has (the `ceph`
// command is a Python script); decisions 0057, 0058.
//
//go:embed probe.sh
var ProbeScript string

// ProbeTarget is one probe to build.
type ProbeTarget struct {
	// Policy is the policy's name; Owner its owner reference.
	Policy string
	Owner  metav1.OwnerReference
	// Namespace and Image are the CephCluster's namespace and spec.cephVersion.image.
	Namespace, Image string
	// Node is the Kubernetes node; Hostname its kubernetes.io/hostname label ("": Node).
	Node, Hostname string
	// Devices are the names (ProbeDrive.Names) of the drives the gate judges next: the devices
	// question keeps only Ceph's elements located at one of them.
	Devices []string
}

// CrushHost is the CRUSH host bucket Rook puts a node's OSDs under: its hostname label with
// dots turned into dashes (rook v1.20.4 pkg/daemon/ceph/client/crush.go NormalizeCrushName).
func CrushHost(node, hostname string) string {
	if hostname == "" {
		hostname = node
	}
	return strings.ReplaceAll(hostname, ".", "-")
}

// ProbePod is the probe pod of one node: it runs anywhere (it only talks to the mons and the
// mgr), preferably on the node it asks about, whose OSDs run the same image (so no pull of
// Ceph's large image eats into the deadline), as the ceph user, with a read-only root, no
// service account token, and the probe client's key as its only secret.
func ProbePod(t ProbeTarget) *corev1.Pod {
	hostname := t.Hostname
	if hostname == "" {
		hostname = t.Node
	}
	// Never null: the script reads a list, and ProbeAnswers an absent variable as Ceph's whole list.
	devices, _ := json.Marshal(append([]string{}, t.Devices...))
	env := []corev1.EnvVar{
		{Name: "PRISM_MON_ENDPOINTS", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: MonEndpointsConfigMap}, Key: monEndpointsKey}}},
		{Name: "PRISM_NODE", Value: t.Node},
		{Name: "PRISM_CRUSH_HOST", Value: CrushHost(t.Node, t.Hostname)},
		{Name: probeDevicesEnv, Value: string(devices)},
		{Name: "PRISM_KEYFILE", Value: probeKeyDir + "/key"},
		{Name: "PRISM_TERMINATION_LOG", Value: terminationLog},
	}
	var containers []corev1.Container
	for _, name := range ProbeContainers {
		containers = append(containers, corev1.Container{
			Name:                     name,
			Image:                    t.Image,
			Command:                  []string{"/bin/sh", "-c", ProbeScript, "prism-probe", name},
			Env:                      env,
			VolumeMounts:             []corev1.VolumeMount{{Name: "key", MountPath: probeKeyDir, ReadOnly: true}},
			TerminationMessagePath:   terminationLog,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy:          corev1.PullIfNotPresent,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			SecurityContext: &corev1.SecurityContext{
				ReadOnlyRootFilesystem:   new(true),
				AllowPrivilegeEscalation: new(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		})
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: ProbeClient + "-",
			Namespace:    t.Namespace,
			Labels: map[string]string{
				"app.kubernetes.io/name": ProbeClient, "app.kubernetes.io/managed-by": "prism",
				LabelProbePolicy: LabelValue(t.Policy), LabelProbeNode: LabelValue(t.Node),
			},
			Annotations:     map[string]string{AnnotationProbeNode: t.Node},
			OwnerReferences: []metav1.OwnerReference{t.Owner},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:        new(int64(ProbeDeadline / time.Second)),
			AutomountServiceAccountToken: new(false),
			EnableServiceLinks:           new(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: new(true), RunAsUser: new(int64(probeUID)), RunAsGroup: new(int64(probeUID)),
				FSGroup: new(int64(probeUID)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Volumes: []corev1.Volume{{Name: "key", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: ProbeSecret, DefaultMode: new(int32(0o440)),
				Items: []corev1.KeyToPath{{Key: probeSecretKey, Path: "key"}},
			}}}},
			Containers: containers,
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{hostname}}}},
			}}}},
		},
	}
}

// ProbeNodeOf is the node a probe pod asks about ("" for a pod that is not a probe).
func ProbeNodeOf(p *corev1.Pod) string { return p.Annotations[AnnotationProbeNode] }
