package advisor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
)

// CSVHash names an IO class file: "sha256:" and its hex SHA-256.
func CSVHash(csv string) string {
	sum := sha256.Sum256([]byte(csv))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Applies reports whether the nodes of p load its recommendations: the policy opts in
// (spec.advisor.apply Automatic) and the recommendations were computed for the current
// generation, so a spec edit is never overridden by advice about the previous spec.
func Applies(p *v1alpha1.ClassificationPolicy) bool {
	return p.Spec.Advisor != nil && p.Spec.Advisor.Apply == v1alpha1.AdvisorApplyAutomatic &&
		p.Status.Advice != nil && p.Status.Advice.SpecGeneration == p.Generation && len(p.Status.Recommendations) > 0
}

// Apply returns spec with each recommendation's target written into its class: pinned or
// an eviction priority, and the allocation. Keep's target is the class as the nodes ran it
// when the advice was made, so applying it keeps an earlier recommendation in force. Ids,
// names, rules and done are never touched, and a recommendation for a class the spec lacks,
// or without an action, is ignored.
func Apply(spec v1alpha1.ClassificationPolicySpec, recs []v1alpha1.ClassRecommendation) v1alpha1.ClassificationPolicySpec {
	out := *spec.DeepCopy()
	for _, r := range recs {
		if r.Action == "" {
			continue
		}
		for i := range out.Classes {
			c := &out.Classes[i]
			if c.ID != r.ClassID {
				continue
			}
			c.Pinned, c.EvictionPriority, c.Allocation = r.Pinned, nil, r.Allocation
			if !r.Pinned && r.EvictionPriority != nil {
				prio := *r.EvictionPriority
				c.EvictionPriority = &prio
			}
		}
	}
	return out
}

// NodeClasses is the IO class configuration the nodes of a policy load.
type NodeClasses struct {
	Config ioclass.Config
	// Applied says whether Config carries the recommendations.
	Applied bool
	// NotApplied says why recommendations that should apply did not (they failed to
	// compile, which the fuzz test says never happens); the spec as written is used.
	NotApplied string
}

// Current is the classes as the nodes of p run them, the advisor's starting point: the spec,
// with the recommendations in status applied when Applies(p) and they compile.
func Current(p *v1alpha1.ClassificationPolicy) []Class {
	if Applies(p) {
		spec := Apply(p.Spec, p.Status.Recommendations)
		if _, err := ioclass.Compile(&spec); err == nil {
			return ClassesOf(&spec)
		}
	}
	return ClassesOf(&p.Spec)
}

// NodeConfig is what the nodes of p load: the spec as written, or with the
// recommendations applied when Applies(p). It fails only when the spec does not compile.
func NodeConfig(p *v1alpha1.ClassificationPolicy) (NodeClasses, error) {
	var out NodeClasses
	if Applies(p) {
		spec := Apply(p.Spec, p.Status.Recommendations)
		cfg, err := ioclass.Compile(&spec)
		if err == nil {
			return NodeClasses{Config: cfg, Applied: true}, nil
		}
		out.NotApplied = fmt.Sprintf("recommendations not applied: %v", err)
	}
	cfg, err := ioclass.Compile(&p.Spec)
	if err != nil {
		return NodeClasses{}, err
	}
	out.Config = cfg
	return out, nil
}
