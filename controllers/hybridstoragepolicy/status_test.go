package hybridstoragepolicy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
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
			st := computeStatus(p, tc.selections, tc.problems, tc.rook, tc.errs)
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
	first := computeStatus(p, []prismv1.NodeSelection{complete("a")}, nil, rookOutcome{}, nil)
	old := metav1.NewTime(first.Conditions[0].LastTransitionTime.Add(-3600e9))
	for i := range first.Conditions {
		first.Conditions[i].LastTransitionTime = old
	}
	p.Status = first
	second := computeStatus(p, []prismv1.NodeSelection{complete("a")}, nil, rookOutcome{}, nil)
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
	st := computeStatus(&prismv1.HybridStoragePolicy{}, sels, nil, rookOutcome{}, nil)
	if st.SelectedNodes != 1000 || len(st.Nodes) != 2 || st.OmittedNodes != 998 || st.Nodes[0].Node != "n0010" || st.Nodes[1].Node != "n0500" {
		t.Fatalf("selected %d, listed %d, omitted %d", st.SelectedNodes, len(st.Nodes), st.OmittedNodes)
	}
	if few := computeStatus(&prismv1.HybridStoragePolicy{}, sels[:100], nil, rookOutcome{}, nil); len(few.Nodes) != 100 || few.OmittedNodes != 0 {
		t.Fatalf("100 nodes must all be listed: %d listed", len(few.Nodes))
	}
}
