package ioclass

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// allocationPattern is the CRD's pattern: 0 to 1 in at most 4 characters. It
// is stricter than casadm (which also takes "1e0" or "0x1"), so whatever the
// API accepts, casadm accepts with the same meaning.
var allocationPattern = regexp.MustCompile(`^(0(\.[0-9]{0,2})?|1(\.0{0,2})?|\.[0-9]{1,3})$`)

// Compile turns a policy into the Open CAS configuration. It enforces every
// limit casadm and the kernel enforce, plus the CRD's own rules, because
// policies can come from files that never met the API server. Errors name the
// field as the API server would (spec.classes[3].allOf[0].anyOf[1].value).
// A policy without class 0 gets Open CAS's default 0,unclassified,22,1.
func Compile(spec *v1alpha1.ClassificationPolicySpec) (Config, error) {
	root := field.NewPath("spec")
	if spec == nil {
		return Config{}, field.ErrorList{field.Required(root, "")}.ToAggregate()
	}
	classesPath := root.Child("classes")
	var errs field.ErrorList
	switch n := len(spec.Classes); {
	case n == 0:
		errs = append(errs, field.Required(classesPath, "at least one class"))
	case n > MaxClasses:
		errs = append(errs, field.TooMany(classesPath, n, MaxClasses))
	}
	var cfg Config
	ids := map[int32]bool{}
	names := map[string]bool{}
	for i := range spec.Classes {
		c := &spec.Classes[i]
		p := classesPath.Index(i)
		if ids[c.ID] {
			errs = append(errs, field.Duplicate(p.Child("id"), c.ID))
		}
		if names[c.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		ids[c.ID], names[c.Name] = true, true
		class, cerrs := compileClass(c, p)
		errs = append(errs, cerrs...)
		cfg.Classes = append(cfg.Classes, class)
	}
	if len(errs) > 0 {
		return Config{}, truncate(errs, root).ToAggregate()
	}
	if !ids[0] {
		cfg.Classes = append(cfg.Classes, Class{ID: 0, Rule: UnclassifiedName,
			Priority: intPtr(DefaultUnclassifiedPri), Allocation: DefaultUnclassifiedAll})
	}
	sortClasses(cfg.Classes)
	return cfg, nil
}

// maxErrors caps how many errors Compile reports: enough to fix a policy,
// few enough that a hopeless input does not produce megabytes of text.
const maxErrors = 32

func truncate(errs field.ErrorList, root *field.Path) field.ErrorList {
	if len(errs) <= maxErrors {
		return errs
	}
	return append(errs[:maxErrors:maxErrors], field.Forbidden(root, fmt.Sprintf("%d more errors not shown", len(errs)-maxErrors)))
}

func compileClass(c *v1alpha1.IOClass, p *field.Path) (Class, field.ErrorList) {
	var errs field.ErrorList
	out := Class{ID: int(c.ID), Allocation: c.Allocation}
	if c.EvictionPriority != nil {
		out.Priority = intPtr(int(*c.EvictionPriority))
	}
	if c.ID < 0 || c.ID > MaxClassID {
		errs = append(errs, field.Invalid(p.Child("id"), c.ID, fmt.Sprintf("must be within 0-%d (released Open CAS)", MaxClassID)))
	}
	for _, msg := range validation.IsDNS1123Label(c.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
	}
	errs = append(errs, checkEviction(c, p)...)
	if !allocationPattern.MatchString(c.Allocation) {
		errs = append(errs, field.Invalid(p.Child("allocation"), c.Allocation,
			"must be 0 to 1 in at most 4 characters, e.g. 1, 0.5, 0.25 or .125 (0 sends the class to pass-through)"))
	}
	if c.ID == 0 {
		if c.Name != UnclassifiedName {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, "class 0 must be named unclassified"))
		}
		if len(c.AllOf) > 0 {
			errs = append(errs, field.Forbidden(p.Child("allOf"), "class 0 takes every IO no other class matched and has no rule"))
		}
		if c.Done {
			errs = append(errs, field.Forbidden(p.Child("done"), "class 0 has no rule"))
		}
		out.Rule = UnclassifiedName
		return out, errs
	}
	rule, rerrs := compileRule(c, p)
	out.Rule = rule
	return out, append(errs, rerrs...)
}

func checkEviction(c *v1alpha1.IOClass, p *field.Path) field.ErrorList {
	switch {
	case c.Pinned && c.EvictionPriority != nil:
		return field.ErrorList{field.Forbidden(p.Child("evictionPriority"), "set exactly one of evictionPriority or pinned: true")}
	case !c.Pinned && c.EvictionPriority == nil:
		return field.ErrorList{field.Required(p.Child("evictionPriority"), "set exactly one of evictionPriority or pinned: true")}
	case c.EvictionPriority != nil && (*c.EvictionPriority < 0 || *c.EvictionPriority > MaxPriority):
		return field.ErrorList{field.Invalid(p.Child("evictionPriority"), *c.EvictionPriority, "must be within 0-255 (0 is evicted last)")}
	}
	return nil
}

// compileRule writes allOf as the kernel's CNF: '|' inside a term, '&'
// between terms, "&done" last. Never a trailing operator.
func compileRule(c *v1alpha1.IOClass, p *field.Path) (string, field.ErrorList) {
	var errs field.ErrorList
	allOf := p.Child("allOf")
	switch n := len(c.AllOf); {
	case n == 0:
		return "", field.ErrorList{field.Required(allOf, "every class other than 0 needs a rule")}
	case n > MaxTerms:
		errs = append(errs, field.TooMany(allOf, n, MaxTerms))
	}
	var b strings.Builder
	for j, term := range c.AllOf {
		tp := allOf.Index(j).Child("anyOf")
		switch n := len(term.AnyOf); {
		case n == 0:
			errs = append(errs, field.Required(tp, "at least one condition"))
		case n > MaxAlternatives:
			errs = append(errs, field.TooMany(tp, n, MaxAlternatives))
		}
		if j > 0 {
			b.WriteByte('&')
		}
		for k := range term.AnyOf {
			if k > 0 {
				b.WriteByte('|')
			}
			text, cerrs := compileCondition(&term.AnyOf[k], tp.Index(k))
			errs = append(errs, cerrs...)
			b.WriteString(text)
		}
	}
	if c.Done {
		b.WriteString("&done")
	}
	rule := b.String()
	if len(errs) == 0 && len(rule) > MaxRuleLen {
		errs = append(errs, field.Invalid(allOf, len(rule), fmt.Sprintf(
			"the compiled Open CAS rule would be %d characters, more than %d: shorten values or use fewer conditions", len(rule), MaxRuleLen)))
	}
	return rule, errs
}

// compileCondition writes one condition as keyword[:op]:value.
func compileCondition(c *v1alpha1.IOCondition, p *field.Path) (string, field.ErrorList) {
	kind, ok := apiConditions[c.Type]
	if !ok {
		return "", field.ErrorList{field.NotSupported(p.Child("type"), c.Type, apiConditionOrder)}
	}
	info := conditions[kind]
	var errs field.ErrorList
	if c.Comparison != "" && info.operand != operandNumeric {
		errs = append(errs, field.Forbidden(p.Child("comparison"),
			"comparison applies only to numeric conditions (RequestSize, LBA, CoreID, WriteLifeHint, PID, FileSize, FileOffset, IOClass)"))
	}
	if info.operand == operandNone {
		if c.Value != "" {
			errs = append(errs, field.Forbidden(p.Child("value"), "Direct and Metadata take no value"))
		}
		return info.keyword, errs
	}
	vp := p.Child("value")
	if c.Value == "" {
		return info.keyword, append(errs, field.Required(vp, "every condition type except Direct and Metadata needs a value"))
	}
	switch info.operand {
	case operandNumeric:
		text, err := compileNumeric(c, kind, p)
		if err != nil {
			errs = append(errs, err)
		}
		return info.keyword + ":" + text, errs
	case operandDirection:
		if c.Value != "read" && c.Value != "write" {
			errs = append(errs, field.NotSupported(vp, c.Value, []string{"read", "write"}))
		}
	default:
		if err := checkStringOperand(kind, c.Value, vp); err != nil {
			errs = append(errs, err)
		}
	}
	return info.keyword + ":" + c.Value, errs
}

// compileNumeric writes "op:value", always with the operator and the value
// in canonical decimal (no leading zeros).
func compileNumeric(c *v1alpha1.IOCondition, kind condKind, p *field.Path) (string, *field.Error) {
	op := opEq
	if c.Comparison != "" {
		var ok bool
		if op, ok = apiComparisons[c.Comparison]; !ok {
			return "", field.NotSupported(p.Child("comparison"), c.Comparison, apiComparisonOrder)
		}
	}
	vp := p.Child("value")
	if len(c.Value) > 20 || strings.Trim(c.Value, "0123456789") != "" {
		return "", field.Invalid(vp, c.Value, "value must be a non-negative decimal integer for numeric conditions")
	}
	v, err := strconv.ParseUint(c.Value, 10, 64)
	if err != nil {
		return "", field.Invalid(vp, c.Value, "must fit in 64 bits: the kernel reads a u64")
	}
	switch {
	case kind == condCoreID && v > MaxCoreID:
		return "", field.Invalid(vp, c.Value, "CoreID value must be within 0-4095")
	case kind == condIOClass && v > MaxClassID:
		return "", field.Invalid(vp, c.Value, "IOClass value must be a class id within 0-32")
	}
	return opNames[op] + ":" + strconv.FormatUint(v, 10), nil
}

// checkStringOperand enforces what the rule syntax, casadm's CSV reader and
// the kernel can carry: 1-255 printable ASCII characters without the rule's
// separators (&, |, :) or the CSV's (comma, double quote), and no space at
// either end (casadm strips spaces around CSV fields).
func checkStringOperand(kind condKind, v string, vp *field.Path) *field.Error {
	if len(v) > MaxStringOperand {
		return field.Invalid(vp, v, fmt.Sprintf("must be at most %d characters", MaxStringOperand))
	}
	for i := 0; i < len(v); i++ {
		// ':' is fine: the kernel splits a condition at its first ':' only and the string
		// operand runs to the next '&' or '|' (classifier.c _cas_cls_parse_condition), which
		// RocksDB's thread names need (rocksdb:low0).
		if ch := v[i]; ch < ' ' || ch > '~' || strings.IndexByte(`&|,"`, ch) >= 0 {
			return field.Invalid(vp, v, "string values must be printable ASCII without &, |, comma or double quote (the Open CAS rule syntax cannot express them)")
		}
	}
	if strings.TrimSpace(v) != v {
		return field.Invalid(vp, v, "must not start or end with a space: casadm strips spaces around CSV fields")
	}
	if kind == condProcessName && len(v) > MaxProcessName {
		return field.Invalid(vp, v, "ProcessName matches the kernel task name, which is at most 15 characters")
	}
	return nil
}
