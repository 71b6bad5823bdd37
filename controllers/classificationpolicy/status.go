package classificationpolicy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/advisor"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/kube"
)

// Condition reasons.
const (
	ReasonCompiled         = "Compiled"
	ReasonInvalid          = "Invalid"
	ReasonNotCompiled      = "NotCompiled"
	ReasonNoNodes          = "NoNodes"
	ReasonAllNodesLoaded   = "AllNodesLoaded"
	ReasonNodesNotLoaded   = "NodesNotLoaded"
	ReasonReconcileError   = "ReconcileError"
	ReasonNoWriteBackCache = "NoWriteBackCache"
	ReasonObserving        = "Observing"
	ReasonTooLittleData    = "TooLittleData"
	ReasonAdvised          = "Advised"
)

// maxWarnings is the API's limit on status.warnings.
const maxWarnings = 64

// computeStatus derives the policy status from what this reconcile found. Pure: the same
// inputs give the same status.
func computeStatus(s *scope, window time.Duration, errs []error) prismv1.ClassificationPolicyStatus {
	p, gen := s.policy, s.policy.Generation
	st := prismv1.ClassificationPolicyStatus{
		Conditions:         append([]metav1.Condition(nil), p.Status.Conditions...),
		ObservedGeneration: gen,
		Nodes:              int32(len(s.nodes)),
	}
	if w := ioclass.Warnings(&p.Spec); len(w) > 0 {
		st.Warnings = w[:min(len(w), maxWarnings)]
	}
	if s.compileErr != nil {
		set(&st, prismv1.ConditionCompiled, false, ReasonInvalid, s.compileErr.Error(), gen)
		set(&st, prismv1.ConditionLoaded, false, ReasonNotCompiled, "the classes do not compile: nodes keep running the classes they have", gen)
		set(&st, prismv1.ConditionAdvised, false, ReasonNotCompiled, "the classes do not compile", gen)
		return st
	}
	advised := adviceStatus(s, &st, window)
	// The file the nodes load depends on the recommendations just decided.
	withStatus := p.DeepCopy()
	withStatus.Status = st
	nc, err := advisor.NodeConfig(withStatus)
	if err != nil { // cannot happen: the spec compiled above
		set(&st, prismv1.ConditionCompiled, false, ReasonInvalid, err.Error(), gen)
		return st
	}
	csv := nc.Config.CSV()
	st.CompiledHash, st.CompiledClasses, st.CompiledBytes = advisor.CSVHash(csv), int32(len(nc.Config.Classes)), int32(len(csv))
	compiled := fmt.Sprintf("%d classes compile to a %d-byte IO class file, %s", st.CompiledClasses, st.CompiledBytes, short(st.CompiledHash))
	if st.Advice != nil {
		st.Advice.Applied = nc.Applied
		if nc.Applied {
			compiled += ", with the advisor's recommendations applied"
		}
	}
	set(&st, prismv1.ConditionCompiled, true, ReasonCompiled, compiled, gen)
	loadedCondition(s, &st, nc.Config, errs, gen)
	if advised != nil {
		advised.Message = appendApply(advised.Message, p, nc)
		set(&st, prismv1.ConditionAdvised, advised.Status == metav1.ConditionTrue, advised.Reason, advised.Message, gen)
	}
	return st
}

func loadedCondition(s *scope, st *prismv1.ClassificationPolicyStatus, cfg ioclass.Config, errs []error, gen int64) {
	switch {
	case !s.listed:
		set(st, prismv1.ConditionLoaded, false, ReasonReconcileError, kerrors.NewAggregate(errs).Error(), gen)
		return
	case len(s.nodes) == 0:
		set(st, prismv1.ConditionLoaded, false, ReasonNoNodes, "no StorageNode's cache plan names this policy", gen)
		return
	}
	loaded, problems := loadSummary(s.nodes, cfg, st.CompiledHash)
	st.LoadedNodes = int32(loaded)
	msg := fmt.Sprintf("%d of %d nodes report every cache Running with the classes of %s", loaded, len(s.nodes), short(st.CompiledHash))
	if len(problems) == 0 {
		set(st, prismv1.ConditionLoaded, true, ReasonAllNodesLoaded, msg, gen)
		return
	}
	set(st, prismv1.ConditionLoaded, false, ReasonNodesNotLoaded, msg+"; "+kube.Summarise(problems), gen)
}

// adviceStatus fills status.advice and status.recommendations and returns the Advised
// condition to set, or nil to keep the one recorded (recommendations carried over from
// before an operator restart, for the same generation).
func adviceStatus(s *scope, st *prismv1.ClassificationPolicyStatus, window time.Duration) *metav1.Condition {
	cond := func(ok bool, reason, msg string) *metav1.Condition {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		return &metav1.Condition{Status: status, Reason: reason, Message: msg}
	}
	p := s.policy
	// carry keeps the recorded advice when it was computed for this generation.
	carry := func() bool {
		prev := p.Status.Advice
		if prev == nil || prev.SpecGeneration != p.Generation {
			return false
		}
		st.Advice, st.Recommendations = prev.DeepCopy(), slices.Clone(p.Status.Recommendations)
		return true
	}
	switch {
	case !s.listed:
		// A failed list says nothing about the caches: keep what the status holds.
		carry()
		return nil
	case len(s.nodes) == 0:
		return cond(false, ReasonNoNodes, "no StorageNode's cache plan names this policy")
	}
	if modes := otherModes(s.nodes); len(modes) == len(s.nodes) {
		return cond(false, ReasonNoWriteBackCache, fmt.Sprintf("the caches of the %d nodes run %s: every write reaches the capacity devices, "+
			"so no class choice keeps writes off them (the advisor needs WriteBack or WriteOnly)", len(s.nodes), strings.Join(uniq(modes), ", ")))
	}
	if s.advice == nil {
		if carry() {
			return nil
		}
		msg := fmt.Sprintf("waiting for the caches' statistics; the first recommendations come after a window of %s", window)
		if !s.since.IsZero() {
			msg = fmt.Sprintf("observing %s since %s; the first recommendations come after a window of %s",
				plural(s.observing, "cache"), s.since.UTC().Format(time.RFC3339), window)
		}
		return cond(false, ReasonObserving, msg)
	}
	w, res := s.window, s.advice
	st.Advice = &prismv1.AdvisorStatus{
		WindowStart: ptrTime(w.Start), WindowEnd: ptrTime(w.End),
		Nodes: int32(windowNodes(w)), Caches: int32(len(w.Caches)), SkippedCaches: int32(len(w.Skipped)),
		WrittenBytes: res.Written, SpecGeneration: p.Generation,
	}
	if res.MeasuredOK {
		st.Advice.MeasuredWriteReduction = decimal(res.Measured)
	}
	span := fmt.Sprintf("the window %s–%s over %s on %s", w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339),
		plural(len(w.Caches), "cache"), plural(windowNodes(w), "node"))
	if len(w.Skipped) > 0 {
		span += " (skipped " + kube.Summarise(w.Skipped) + ")"
	}
	if res.Refusal != "" {
		return cond(false, ReasonTooLittleData, span+": "+res.Refusal)
	}
	st.Advice.ModelledWriteReduction, st.Advice.ExpectedWriteReduction = decimal(res.Modelled), decimal(res.Expected)
	st.Recommendations = res.Recommendations
	msg := fmt.Sprintf("%s from %s; modelled α_cache %s as the nodes run now, %s with them", countActions(res.Recommendations), span,
		decimal(res.Modelled), decimal(res.Expected))
	if res.MeasuredOK {
		msg += "; measured α_cache " + decimal(res.Measured)
	}
	return cond(true, ReasonAdvised, msg)
}

// appendApply says whether the nodes load the recommendations.
func appendApply(msg string, p *prismv1.ClassificationPolicy, nc advisor.NodeClasses) string {
	switch {
	case nc.NotApplied != "":
		return msg + "; " + nc.NotApplied
	case nc.Applied:
		return msg + "; the nodes load them (spec.advisor.apply: Automatic)"
	case p.Spec.Advisor == nil || p.Spec.Advisor.Apply != prismv1.AdvisorApplyAutomatic:
		return msg + "; applying them is up to you (spec.advisor.apply: Never)"
	}
	return msg
}

// otherModes lists the cache modes of the nodes whose caches do not write back.
func otherModes(nodes []prismv1.StorageNode) []string {
	var out []string
	for i := range nodes {
		if m := nodes[i].Spec.Plan.Cache.Mode; !advisor.WritesBack(m) {
			out = append(out, string(m))
		}
	}
	return out
}

func countActions(recs []prismv1.ClassRecommendation) string {
	n := map[prismv1.RecommendationAction]int{}
	for _, r := range recs {
		n[r.Action]++
	}
	var parts []string
	for _, a := range []prismv1.RecommendationAction{prismv1.RecommendPin, prismv1.RecommendSetAllocation, prismv1.RecommendUnpin, prismv1.RecommendDemote, prismv1.RecommendKeep} {
		if n[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[a], a))
		}
	}
	return fmt.Sprintf("%d recommendations (%s)", len(recs), strings.Join(parts, ", "))
}

// windowNodes counts the nodes of a window's caches (keys are "node/fast device").
func windowNodes(w *advisor.Window) int {
	seen := map[string]bool{}
	for _, c := range w.Caches {
		node, _, _ := strings.Cut(c.Key, "/")
		seen[node] = true
	}
	return len(seen)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func uniq(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// ptrTime keeps whole seconds, as the API server stores them, so an unchanged window does
// not look changed and patch the status on every reconcile.
func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t.Truncate(time.Second))
	return &mt
}

func decimal(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func set(st *prismv1.ClassificationPolicyStatus, condType string, ok bool, reason, msg string, gen int64) {
	kube.SetCondition(&st.Conditions, condType, ok, reason, msg, gen)
}
