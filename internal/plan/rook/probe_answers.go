package rook

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// What a probe pod answered, and which probes to start and remove.

// maxPodMessages is the kubelet's limit on all the termination messages of one pod together,
// shared equally by its containers, and maxContainerMessage the limit of one container's
// (k8s.io/kubernetes v1.36 pkg/kubelet/container/runtime.go): a probe with five containers
// keeps 2457 bytes of each answer. A longer answer is cut and no longer parses.
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
	if of, err := probeDevicesOf(p); err != nil {
		a.Devices = nil
		why = append(why, fmt.Sprintf("%s: %v", ProbeDevices, err))
	} else {
		a.DevicesOf = of
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

// probeDevicesOf are the names the pod's devices question kept Ceph's elements for (its
// PRISM_DEVICES), nil when it has no such variable (it kept the whole list).
func probeDevicesOf(p *corev1.Pod) ([]string, error) {
	for _, c := range p.Spec.Containers {
		if c.Name != ProbeDevices {
			continue
		}
		for _, e := range c.Env {
			if e.Name != probeDevicesEnv {
				continue
			}
			names := []string{}
			if err := json.Unmarshal([]byte(e.Value), &names); err != nil || names == nil {
				return nil, fmt.Errorf("%s %q is not a JSON list of device names", probeDevicesEnv, e.Value)
			}
			return names, nil
		}
	}
	return nil, nil
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
	case ProbeDestroyed:
		a.Destroyed = out
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// ProbeDrivesMax is how many drives one probe asks Ceph about: `ceph device ls-by-host`
// keeps one element per drive (173 bytes for a drive with a model_serial id and a by-path
// path, decision 0057), so eight of them, even in a long shape of 292 bytes (2337), fit the
// 2457 bytes the kubelet keeps of an answer.
const ProbeDrivesMax = 8

// ProbeAsk is a probe to start: the node, and the names of the drives it asks about
// (ProbeTarget.Devices).
type ProbeAsk struct {
	Node    string
	Devices []string
}

// ProbeChanges is what to do with one policy's probe pods.
type ProbeChanges struct {
	// Answers are the newest finished probe's answers of each node.
	Answers map[string]CephAnswers
	// Create are the probes to start; Delete the pods to remove.
	Create []ProbeAsk
	Delete []*corev1.Pod
	// Failed are the answers with an Err of the pods deleted now, by node: each failed probe
	// is reported once, when it is replaced or removed.
	Failed map[string]CephAnswers
}

// PlanProbes decides from a policy's probe pods (pods) and the drives that need Ceph's answers
// (ask: GateResult.Awaiting, the held drives by node): a node asked about keeps its newest
// finished probe until ProbeMaxAge, or until none of its held drives is among those the probe
// asked about, then it is replaced by one asking about the next ones (ProbeDrives); a probe
// still running is waited for; every other pod goes (older probes of a node, probes of nodes
// no longer asked about). Pure.
func PlanProbes(pods []*corev1.Pod, ask map[string][]ProbeDrive, now time.Time) ProbeChanges {
	ch := ProbeChanges{Answers: map[string]CephAnswers{}, Failed: map[string]CephAnswers{}}
	byNode := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			byNode[ProbeNodeOf(p)] = append(byNode[ProbeNodeOf(p)], p)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(byNode)) {
		list := byNode[n]
		// Newest first.
		sort.SliceStable(list, func(i, j int) bool { return list[j].CreationTimestamp.Before(&list[i].CreationTimestamp) })
		newest, rest := list[0], list[1:]
		a, done := ProbeAnswers(newest, now)
		if done {
			ch.Answers[n] = a
		}
		held, asked := ask[n]
		switch {
		case !asked:
			rest = list
		case done && (now.Sub(a.At) >= ProbeMaxAge || !slices.ContainsFunc(held, func(d ProbeDrive) bool { return askedAbout(a.DevicesOf, d) })):
			rest = list
			ch.Create = append(ch.Create, ProbeAsk{Node: n, Devices: ProbeDrives(held, a.DevicesOf)})
		}
		for _, p := range rest {
			ch.Delete = append(ch.Delete, p)
			if p == newest && done && a.Err != "" {
				ch.Failed[n] = a
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(ask)) {
		if len(byNode[n]) == 0 {
			ch.Create = append(ch.Create, ProbeAsk{Node: n, Devices: ProbeDrives(ask[n], nil)})
		}
	}
	return ch
}

// ProbeDrives are the names the next probe of a node asks about: its held drives in the gate's
// order, at most ProbeDrivesMax of them, starting after the last one the previous probe asked
// about (prev: that probe's DevicesOf, nil for none or Ceph's whole list; the last one is where
// its window ends, which may wrap around), so that each held drive is asked about in turn.
func ProbeDrives(held []ProbeDrive, prev []string) []string {
	start := 0
	if len(held) > ProbeDrivesMax && prev != nil {
		for i, d := range held {
			if askedAbout(prev, d) && !askedAbout(prev, held[(i+1)%len(held)]) {
				start = i + 1
			}
		}
	}
	names := []string{}
	for i := range min(len(held), ProbeDrivesMax) {
		for _, name := range held[(start+i)%len(held)].Names() {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}
