package hybridstoragepolicy

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestReleasesOf(t *testing.T) {
	sn := func(name string) *prismv1.StorageNode {
		return &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	claimed := []*prismv1.StorageNode{sn("a"), sn("b"), sn("gone")}
	candidates := []candidate{{node: "a", storage: sn("a")}, {node: "b", storage: sn("b")}, {node: "c"}}
	cases := []struct {
		name        string
		mode        prismv1.PolicyMode
		planRefused bool
		candidates  []candidate
		want        []release
	}{
		{"matched nodes stay; an unmatched one goes", prismv1.ModeApply, false, candidates, []release{{"gone", releaseNotMatched}}},
		{"a refused plan keeps every node", prismv1.ModeApply, true, candidates, nil},
		{"dry run lets every node go", prismv1.ModeDryRun, true, candidates, []release{{"a", releaseDryRun}, {"b", releaseDryRun}, {"gone", releaseDryRun}}},
		{"a node without its StorageNode in the candidates is not matched", prismv1.ModeApply, false, []candidate{{node: "a", storage: sn("a")}, {node: "b"}},
			[]release{{"b", releaseNotMatched}, {"gone", releaseNotMatched}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := releasesOf(tc.mode, tc.planRefused, tc.candidates, claimed); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeSelectorNamesTheField(t *testing.T) {
	cases := []struct {
		name string
		ls   metav1.LabelSelector
		want string
	}{
		{"In without values", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpIn}}},
			"spec.nodeSelector.matchExpressions[0].values: Required value"},
		{"Exists with values", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpExists}, {Key: "k", Operator: metav1.LabelSelectorOpExists, Values: []string{"v"}}}},
			"spec.nodeSelector.matchExpressions[1].values: Forbidden"},
		{"unknown operator", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}},
			"spec.nodeSelector.matchExpressions[0].operator: Invalid value"},
		{"bad label value", metav1.LabelSelector{MatchLabels: map[string]string{"k": "not a value"}},
			"spec.nodeSelector.matchLabels: Invalid value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nodeSelector(&tc.ls)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if sel, err := nodeSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"prism.storage.io/role": "storage"}}); err != nil || sel.String() != "prism.storage.io/role=storage" {
		t.Fatalf("valid selector: %v %v", sel, err)
	}
}
