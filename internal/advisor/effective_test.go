package advisor

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/test/support/ioclasstest"
)

func policyWithAdvice(apply v1alpha1.AdvisorApply, adviceGen int64) *v1alpha1.ClassificationPolicy {
	p := ioclasstest.FiveClasses()
	p.Generation = 3
	p.Spec.Advisor = &v1alpha1.AdvisorSpec{Apply: apply}
	prio, kept, unclassified := int32(255), int32(200), int32(22)
	p.Status.Advice = &v1alpha1.AdvisorStatus{SpecGeneration: adviceGen, WindowStart: &metav1.Time{}}
	p.Status.Recommendations = []v1alpha1.ClassRecommendation{
		{ClassID: 10, Action: v1alpha1.RecommendPin, Pinned: true, Allocation: "0.05"},
		{ClassID: 11, Action: v1alpha1.RecommendDemote, EvictionPriority: &prio, Allocation: "0.10"},
		{ClassID: 0, Action: v1alpha1.RecommendKeep, EvictionPriority: &unclassified, Allocation: "1"},
		// Keep holds an earlier recommendation in force: its target is the class as the nodes ran it.
		{ClassID: 2, Action: v1alpha1.RecommendKeep, EvictionPriority: &kept, Allocation: "0"},
		{ClassID: 1, Pinned: true, Allocation: "1"},                                 // no action: ignored
		{ClassID: 31, Action: v1alpha1.RecommendPin, Pinned: true, Allocation: "1"}, // not in the spec
	}
	return p
}

func TestNodeConfigAppliesOnlyWhenOptedInAndCurrent(t *testing.T) {
	written, err := ioclass.Compile(&ioclasstest.FiveClasses().Spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		apply   v1alpha1.AdvisorApply
		gen     int64
		applied bool
	}{
		{"Never", v1alpha1.AdvisorApplyNever, 3, false},
		{"Automatic, advice for an older spec", v1alpha1.AdvisorApplyAutomatic, 2, false},
		{"Automatic, current advice", v1alpha1.AdvisorApplyAutomatic, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := NodeConfig(policyWithAdvice(tc.apply, tc.gen))
			if err != nil || nc.Applied != tc.applied || nc.NotApplied != "" {
				t.Fatalf("applied %v (%q), err %v", nc.Applied, nc.NotApplied, err)
			}
			csv := nc.Config.CSV()
			if !tc.applied {
				if csv != written.CSV() {
					t.Errorf("CSV differs from the spec as written:\n%s", csv)
				}
				return
			}
			// Class 10 pinned (empty priority) at 0.05, class 11 evicted first at 0.10, class 2
			// kept at priority 200; rules, class 0 and class 1 as written; class 31 ignored.
			for _, line := range []string{
				"10,process_name:bstore_kv_final|process_name:bstore_kv_sync&io_direction:write&done,,0.05\n",
				"11,io_direction:write&request_size:le:65536&done,255,0.10\n",
				"0,unclassified,22,1\n",
				"1,io_direction:write&request_size:ge:1048576&done,255,0\n",
				"2,io_direction:read&request_size:ge:1048576&done,200,0\n",
			} {
				if !strings.Contains(csv, line) {
					t.Errorf("CSV lacks %q:\n%s", line, csv)
				}
			}
			if strings.Contains(csv, "\n31,") {
				t.Errorf("a recommendation for a class the spec lacks was applied:\n%s", csv)
			}
		})
	}
}

func TestApplyLeavesTheSpecAlone(t *testing.T) {
	p := policyWithAdvice(v1alpha1.AdvisorApplyAutomatic, 3)
	before := p.Spec.DeepCopy()
	out := Apply(p.Spec, p.Status.Recommendations)
	if !out.Classes[3].Pinned || out.Classes[3].EvictionPriority != nil || out.Classes[3].Allocation != "0.05" {
		t.Errorf("class 10 not pinned: %+v", out.Classes[3])
	}
	if p.Spec.Classes[3].Pinned || p.Spec.Classes[3].Allocation != before.Classes[3].Allocation {
		t.Error("Apply changed its input")
	}
}

func TestCurrentIsWhatTheNodesRun(t *testing.T) {
	for _, tc := range []struct {
		apply  v1alpha1.AdvisorApply
		gen    int64
		pinned bool
	}{{v1alpha1.AdvisorApplyNever, 3, false}, {v1alpha1.AdvisorApplyAutomatic, 2, false}, {v1alpha1.AdvisorApplyAutomatic, 3, true}} {
		var class10 Class
		for _, c := range Current(policyWithAdvice(tc.apply, tc.gen)) {
			if c.ID == 10 {
				class10 = c
			}
		}
		if class10.Pinned != tc.pinned || (tc.pinned && class10.Allocation != 5) || (!tc.pinned && class10.Allocation != 100) {
			t.Errorf("%s, advice for generation %d: class 10 %+v", tc.apply, tc.gen, class10)
		}
	}
}

func TestNodeConfigReportsASpecThatDoesNotCompile(t *testing.T) {
	p := policyWithAdvice(v1alpha1.AdvisorApplyAutomatic, 3)
	p.Spec.Classes[1].Allocation = "2"
	if _, err := NodeConfig(p); err == nil || !strings.Contains(err.Error(), "spec.classes[1].allocation") {
		t.Fatalf("err %v", err)
	}
}

func TestNodeConfigFallsBackWhenRecommendationsDoNotCompile(t *testing.T) {
	p := policyWithAdvice(v1alpha1.AdvisorApplyAutomatic, 3)
	p.Status.Recommendations[0].Allocation = "0.125" // casadm reads 4 characters at most
	nc, err := NodeConfig(p)
	if err != nil || nc.Applied || !strings.Contains(nc.NotApplied, "recommendations not applied") || !strings.Contains(nc.NotApplied, "allocation") {
		t.Fatalf("applied %v %q err %v", nc.Applied, nc.NotApplied, err)
	}
	if c, _ := nc.Config.Class(10); c.Allocation != "1" || c.Pinned() {
		t.Errorf("class 10 not as written: %+v", c)
	}
}

func TestCSVHash(t *testing.T) {
	// sha256("") is a well-known constant.
	if got := CSVHash(""); got != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("CSVHash(\"\") = %s", got)
	}
	if len(CSVHash("x")) != 71 {
		t.Error("hash length must fit the API's 71 characters")
	}
}
