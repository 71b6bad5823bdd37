package hybridstoragepolicy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/decide"
)

func complete(node string) prismv1.NodeSelection {
	return prismv1.NodeSelection{Node: node, Fast: []prismv1.SelectedDevice{{Name: "f"}}, Capacity: []prismv1.SelectedDevice{{Name: "c"}}}
}

func incomplete(node, msg string) prismv1.NodeSelection {
	return prismv1.NodeSelection{Node: node, Message: msg}
}

func TestComputeStatus(t *testing.T) {
	applied := rookOutcome{reason: ReasonRookApplied, message: "2 nodes' OSD entries", ok: true}
	waiting := rookOutcome{reason: ReasonWaitingForPartitions, message: "waiting for the agents to create the DB partitions on b"}
	cases := []struct {
		name                string
		mode                prismv1.PolicyMode
		selections          []prismv1.NodeSelection
		problems            []string
		rook                rookOutcome
		errs                []error
		selected, ready     int32
		readyStatus         metav1.ConditionStatus
		readyReason         string
		readyMessage        string
		nodesSelectedReason string
	}{
		{"no nodes", prismv1.ModeApply, nil, nil, rookOutcome{}, nil, 0, 0, metav1.ConditionFalse, ReasonNoNodesMatched, "matches no node", ReasonNoNodesMatched},
		{"applied", prismv1.ModeApply, []prismv1.NodeSelection{complete("a"), complete("b")}, nil, applied, nil, 2, 2, metav1.ConditionTrue, ReasonProvisioned, "every one of 2 nodes is partitioned", ReasonNodesSelected},
		{"waiting for partitions", prismv1.ModeApply, []prismv1.NodeSelection{complete("a"), complete("b")}, nil, waiting, nil, 2, 2, metav1.ConditionFalse, ReasonProvisioning, "partitions on b", ReasonNodesSelected},
		{"dry run", prismv1.ModeDryRun, []prismv1.NodeSelection{complete("a"), complete("b")}, nil, rookOutcome{reason: ReasonRookDryRun}, nil, 2, 2, metav1.ConditionTrue, ReasonSelectionComplete, "dry run: every one of 2 nodes", ReasonNodesSelected},
		{"plan refused", prismv1.ModeApply, []prismv1.NodeSelection{complete("a")}, []string{"a: /dev/x (349 GiB) is too small"}, rookOutcome{reason: ReasonRookPlanRefused}, nil, 1, 1, metav1.ConditionFalse, ReasonPlanRefused, "too small", ReasonNodesSelected},
		{"one incomplete", prismv1.ModeApply, []prismv1.NodeSelection{complete("a"), incomplete("c", "no device matched")}, nil, applied, nil, 2, 1, metav1.ConditionFalse, ReasonNodesIncomplete, "c: no device matched", ReasonNodesSelected},
		{"errors win", prismv1.ModeApply, []prismv1.NodeSelection{complete("a")}, nil, applied, []error{errors.New("claiming node a: boom")}, 1, 1, metav1.ConditionFalse, ReasonReconcileError, "boom", ReasonNodesSelected},
		{"many incomplete are summarised", prismv1.ModeApply, []prismv1.NodeSelection{
			incomplete("n1", "x"), incomplete("n2", "x"), incomplete("n3", "x"), incomplete("n4", "x"), incomplete("n5", "x"), incomplete("n6", "x"), incomplete("n7", "x"),
		}, nil, rookOutcome{}, nil, 7, 0, metav1.ConditionFalse, ReasonNodesIncomplete, "and 2 more nodes", ReasonNodesSelected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &prismv1.HybridStoragePolicy{ObjectMeta: metav1.ObjectMeta{Generation: 7}, Spec: prismv1.HybridStoragePolicySpec{Mode: tc.mode}}
			st := computeStatus(p, statusInput{planned: true, observed: true, selections: tc.selections, planProblems: tc.problems, rook: tc.rook, err: errors.Join(tc.errs...)})
			if st.SelectedNodes != tc.selected || st.ReadyNodes != tc.ready || st.ObservedGeneration != 7 {
				t.Errorf("selected/ready/gen = %d/%d/%d", st.SelectedNodes, st.ReadyNodes, st.ObservedGeneration)
			}
			ready := meta.FindStatusCondition(st.Conditions, prismv1.ConditionReady)
			if ready == nil || ready.Status != tc.readyStatus || ready.Reason != tc.readyReason || !strings.Contains(ready.Message, tc.readyMessage) || ready.ObservedGeneration != 7 {
				t.Errorf("Ready = %+v", ready)
			}
			if ns := meta.FindStatusCondition(st.Conditions, prismv1.ConditionNodesSelected); ns == nil || ns.Reason != tc.nodesSelectedReason {
				t.Errorf("NodesSelected = %+v", ns)
			}
		})
	}
}

func TestComputeStatusKeepsTransitionTimeWhenUnchanged(t *testing.T) {
	p := &prismv1.HybridStoragePolicy{}
	first := computeStatus(p, statusInput{planned: true, observed: true, selections: []prismv1.NodeSelection{complete("a")}})
	old := metav1.NewTime(first.Conditions[0].LastTransitionTime.Add(-3600e9))
	for i := range first.Conditions {
		first.Conditions[i].LastTransitionTime = old
	}
	p.Status = first
	second := computeStatus(p, statusInput{planned: true, observed: true, selections: []prismv1.NodeSelection{complete("a")}})
	for _, c := range second.Conditions {
		if !c.LastTransitionTime.Equal(&old) {
			t.Errorf("%s transition time moved although its status did not change", c.Type)
		}
	}
}

func TestComputeStatusBoundsNodeDetail(t *testing.T) {
	var sels []prismv1.NodeSelection
	for i := 0; i < 1000; i++ {
		sels = append(sels, complete(fmt.Sprintf("n%04d", i)))
	}
	sels[10] = incomplete("n0010", "no fast device")
	sels[500].Warnings = []string{"slots below 1 %"}
	st := computeStatus(&prismv1.HybridStoragePolicy{}, statusInput{planned: true, observed: true, selections: sels})
	if st.SelectedNodes != 1000 || len(st.Nodes) != 2 || st.OmittedNodes != 998 || st.Nodes[0].Node != "n0010" || st.Nodes[1].Node != "n0500" {
		t.Fatalf("selected %d, listed %d, omitted %d", st.SelectedNodes, len(st.Nodes), st.OmittedNodes)
	}
	if few := computeStatus(&prismv1.HybridStoragePolicy{}, statusInput{planned: true, observed: true, selections: sels[:100]}); len(few.Nodes) != 100 || few.OmittedNodes != 0 {
		t.Fatalf("100 nodes must all be listed: %d listed", len(few.Nodes))
	}
}

// A reconcile that failed before its selection was complete keeps the last good counts and
// node details, and names the failure; it never reports "matches no node".
func TestComputeStatusAfterAFailedObservation(t *testing.T) {
	applied := rookOutcome{reason: ReasonRookApplied, message: "2 nodes' OSD entries", ok: true}
	previous := &prismv1.HybridStoragePolicy{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: prismv1.HybridStoragePolicySpec{Mode: prismv1.ModeApply}}
	previous.Status = computeStatus(previous, statusInput{planned: true, observed: true, selections: []prismv1.NodeSelection{complete("a"), complete("b")}, rook: applied})
	cases := []struct {
		name                       string
		in                         statusInput
		readyReason, readyMessage  string
		selectedReason, selectedIn string
	}{
		{"list failed", statusInput{err: errors.New("listing nodes: etcd timeout")},
			ReasonReconcileError, "could not observe the cluster, so no node was claimed or released and no Rook entry withdrawn: listing nodes: etcd timeout",
			ReasonNodesSelected, "2 of 2"},
		{"invalid selector", statusInput{invalidSelector: "spec.nodeSelector.matchExpressions[0].values: Required value", err: errors.New("x")},
			ReasonInvalidNodeSelector, "spec.nodeSelector.matchExpressions[0].values: Required value; no node was claimed, released or withdrawn",
			ReasonInvalidNodeSelector, "matchExpressions[0].values"},
		{"classification read failed after the lists", statusInput{observed: true, err: errors.New(`reading ClassificationPolicy "c": timeout`)},
			ReasonReconcileError, `reading ClassificationPolicy "c": timeout`,
			ReasonNodesSelected, "2 of 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := previous.DeepCopy()
			p.Generation = 4
			st := computeStatus(p, tc.in)
			if st.SelectedNodes != 2 || st.ReadyNodes != 2 || len(st.Nodes) != 2 || st.ObservedGeneration != 4 {
				t.Errorf("selected/ready/listed/gen = %d/%d/%d/%d, want the last good 2/2/2 and generation 4", st.SelectedNodes, st.ReadyNodes, len(st.Nodes), st.ObservedGeneration)
			}
			ready := meta.FindStatusCondition(st.Conditions, prismv1.ConditionReady)
			if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != tc.readyReason || !strings.Contains(ready.Message, tc.readyMessage) {
				t.Errorf("Ready = %+v", ready)
			}
			ns := meta.FindStatusCondition(st.Conditions, prismv1.ConditionNodesSelected)
			if ns == nil || ns.Reason != tc.selectedReason || !strings.Contains(ns.Message, tc.selectedIn) {
				t.Errorf("NodesSelected = %+v", ns)
			}
			if rc := meta.FindStatusCondition(st.Conditions, prismv1.ConditionRookConfigured); rc == nil || rc.Reason != ReasonRookApplied {
				t.Errorf("RookConfigured must stay as last reported: %+v", rc)
			}
		})
	}
}

func TestComputeStatusNamesReleasedNodes(t *testing.T) {
	p := &prismv1.HybridStoragePolicy{Spec: prismv1.HybridStoragePolicySpec{Mode: prismv1.ModeApply}}
	st := computeStatus(p, statusInput{planned: true, observed: true, selections: []prismv1.NodeSelection{complete("a")},
		released: []release{{node: "b", reason: decide.ReleaseNotMatched}}})
	ns := meta.FindStatusCondition(st.Conditions, prismv1.ConditionNodesSelected)
	if ns == nil || !strings.Contains(ns.Message, "released b ("+decide.ReleaseNotMatched+")") {
		t.Fatalf("NodesSelected = %+v", ns)
	}
}
