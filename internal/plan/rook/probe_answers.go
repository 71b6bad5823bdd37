package rook

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// What a probe pod answered, and which probes to start and remove.

// maxPodMessages is the kubelet's limit on all the termination messages of one pod together,
// shared equally by its containers, and maxContainerMessage the limit of one container's
// (k8s.io/kubernetes v1.36 pkg/kubelet/container/runtime.go): a probe with four containers
// keeps 3072 bytes of each answer. A longer answer is cut and no longer parses.
const (
	maxPodMessages      = 12 * 1024
	maxContainerMessage = 4 * 1024
)

// ProbeMessageLimit is how many bytes of each container's answer a pod with n containers keeps.
func ProbeMessageLimit(n int) int {
	if n < 1 {
		return maxContainerMessage
	}
	return min(maxContainerMessage, maxPodMessages/n)
}

// imageErrors are the waiting reasons that end a probe before it runs: the image (the
// CephCluster's own) cannot be pulled, or the pod's config (the key's Secret, the mon
// ConfigMap) cannot be made.
var imageErrors = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"ErrImageNeverPull": true, "CreateContainerConfigError": true, "CreateContainerError": true}

// ProbeAnswers reads a probe pod: done is false while it may still answer. A finished pod
// answers each question with the JSON its container left; Err says, for each question that
// has none, why (the container's exit and message, the kubelet's deadline, an image that
// cannot be pulled, a pod never finished).
func ProbeAnswers(p *corev1.Pod, now time.Time) (a CephAnswers, done bool) {
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range p.Status.ContainerStatuses {
		statuses[s.Name] = s
	}
	limit := ProbeMessageLimit(len(p.Spec.Containers))
	var why []string
	finished := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	for _, name := range ProbeContainers {
		s, ok := statuses[name]
		var out []byte
		switch {
		case ok && s.State.Terminated != nil:
			t := s.State.Terminated
			a.At = later(a.At, t.FinishedAt.Time)
			if json.Valid([]byte(t.Message)) {
				out = []byte(t.Message)
				break
			}
			why = append(why, terminatedWhy(name, t, limit))
		case ok && s.State.Waiting != nil && imageErrors[s.State.Waiting.Reason]:
			finished = true
			why = append(why, fmt.Sprintf("%s: %s: %s", name, s.State.Waiting.Reason, s.State.Waiting.Message))
		case finished:
			why = append(why, fmt.Sprintf("%s: did not finish", name))
		default:
			why = append(why, fmt.Sprintf("%s: not finished", name))
		}
		setAnswer(&a, name, out)
	}
	if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" {
		why = append([]string{fmt.Sprintf("pod %s: %s", p.Status.Reason, p.Status.Message)}, why...)
	}
	if !finished && now.Sub(p.CreationTimestamp.Time) >= ProbeStuck {
		finished = true
		why = append([]string{fmt.Sprintf("pod %s %s after %s (%s)", p.Name, p.Status.Phase, ProbeStuck, podWaiting(p))}, why...)
	}
	if !finished {
		return CephAnswers{}, false
	}
	if a.At.IsZero() {
		a.At = p.CreationTimestamp.Time
	}
	a.Err = strings.Join(why, "; ")
	return a, true
}

func terminatedWhy(name string, t *corev1.ContainerStateTerminated, limit int) string {
	msg := strings.TrimSpace(t.Message)
	switch {
	case len(t.Message) >= limit:
		return fmt.Sprintf("%s: the answer is longer than the %d bytes the kubelet keeps of it (exit %d)", name, limit, t.ExitCode)
	case msg == "" && t.Reason != "":
		return fmt.Sprintf("%s: exit %d (%s)", name, t.ExitCode, t.Reason)
	case msg == "":
		return fmt.Sprintf("%s: exit %d without an answer", name, t.ExitCode)
	}
	return fmt.Sprintf("%s: exit %d: %s", name, t.ExitCode, msg)
}

// podWaiting is why a pod that never finished waits, as its status says.
func podWaiting(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Reason != "" {
			return fmt.Sprintf("%s: %s %s", c.Type, c.Reason, c.Message)
		}
	}
	return "no reason reported"
}

func setAnswer(a *CephAnswers, name string, out []byte) {
	switch name {
	case ProbeHealth:
		a.Health = out
	case ProbePGStat:
		a.PGStat = out
	case ProbeDevices:
		a.Devices = out
	case ProbeSafeToDestroy:
		a.SafeToDestroy = out
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// ProbeChanges is what to do with one policy's probe pods.
type ProbeChanges struct {
	// Answers are the newest finished probe's answers of each node.
	Answers map[string]CephAnswers
	// Create are the nodes to start a probe for; Delete the pods to remove.
	Create []string
	Delete []*corev1.Pod
	// Failed are the answers with an Err of the pods deleted now, by node: each failed probe
	// is reported once, when it is replaced or removed.
	Failed map[string]CephAnswers
}

// PlanProbes decides from a policy's probe pods (pods) and the nodes that need Ceph's answers
// (ask: the nodes with held replacements): a node asked about keeps its newest finished probe
// until ProbeMaxAge, then it is replaced; a probe still running is waited for; every other
// pod goes (older probes of a node, probes of nodes no longer asked about). Pure.
func PlanProbes(pods []*corev1.Pod, ask []string, now time.Time) ProbeChanges {
	ch := ProbeChanges{Answers: map[string]CephAnswers{}, Failed: map[string]CephAnswers{}}
	byNode := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			byNode[ProbeNodeOf(p)] = append(byNode[ProbeNodeOf(p)], p)
		}
	}
	asked := map[string]bool{}
	for _, n := range ask {
		asked[n] = true
	}
	nodes := make([]string, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		list := byNode[n]
		// Newest first.
		sort.SliceStable(list, func(i, j int) bool { return list[j].CreationTimestamp.Before(&list[i].CreationTimestamp) })
		newest, rest := list[0], list[1:]
		a, done := ProbeAnswers(newest, now)
		if done {
			ch.Answers[n] = a
		}
		switch {
		case !asked[n]:
			rest = list
		case done && now.Sub(a.At) >= ProbeMaxAge:
			rest = list
			ch.Create = append(ch.Create, n)
		}
		for _, p := range rest {
			ch.Delete = append(ch.Delete, p)
			if p == newest && done && a.Err != "" {
				ch.Failed[n] = a
			}
		}
	}
	for _, n := range ask {
		if len(byNode[n]) == 0 && !slices.Contains(ch.Create, n) {
			ch.Create = append(ch.Create, n)
		}
	}
	return ch
}

// ProbeNodes are the nodes whose Ceph answers the gate waits for: those with a held
// replacement (GateResult.Held reads "<node> <device>: why"), sorted.
func ProbeNodes(g GateResult) []string {
	var out []string
	for _, h := range g.Held {
		if node, _, ok := strings.Cut(h, " "); ok && !slices.Contains(out, node) {
			out = append(out, node)
		}
	}
	sort.Strings(out)
	return out
}
