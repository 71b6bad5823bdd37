package envtest

import (
	"strings"
	"testing"
)

// cond is an IO condition.
func cond(typ, value string) map[string]any {
	c := map[string]any{"type": typ}
	if value != "" {
		c["value"] = value
	}
	return c
}

// classificationInvalidCases add to the ClassificationPolicy cases of basicInvalidCases: each
// breaks one field of validClasses and the API server must name that field and say why.
func classificationInvalidCases() []invalidCase {
	type c = invalidCase
	return withBase(validClasses, []c{
		{"34 classes", "", func(m map[string]any) {
			var classes []any
			for i := 0; i < 34; i++ {
				classes = append(classes, map[string]any{"id": i, "name": "c" + strings.Repeat("x", i), "evictionPriority": 1, "allocation": "1"})
			}
			spec(m)["classes"] = classes
		}, []string{"spec.classes", "must have at most 33 items"}},
		{"no class", "", func(m map[string]any) { spec(m)["classes"] = []any{} }, []string{"spec.classes", "at least 1 items"}},
		{"negative class id", "", func(m map[string]any) { class(m, 1)["id"] = -1 }, []string{"spec.classes[1].id", "greater than or equal to 0"}},
		{"class name not a DNS label", "", func(m map[string]any) { class(m, 1)["name"] = "Small_Writes" }, []string{"spec.classes[1].name", "should match"}},
		{"neither priority nor pinned", "", func(m map[string]any) { delete(class(m, 1), "pinned") }, []string{"spec.classes[1]", "exactly one of evictionPriority or pinned"}},
		{"class 0 with done", "", func(m map[string]any) { class(m, 0)["done"] = true }, []string{"spec.classes[0]", "class 0 takes every IO no other class matched"}},
		{"negative allocation", "", func(m map[string]any) { class(m, 1)["allocation"] = "-0.1" }, []string{"spec.classes[1].allocation", "should match"}},
		{"unknown condition type", "", func(m map[string]any) { condition(m, 1, 0)["type"] = "FileOwner" }, []string{"spec.classes[1].allOf[0].anyOf[0].type", "Unsupported value"}},
		{"unknown comparison", "", func(m map[string]any) { condition(m, 1, 0)["comparison"] = "Approx" }, []string{"spec.classes[1].allOf[0].anyOf[0].comparison", "Unsupported value"}},
		{"empty value", "", func(m map[string]any) { condition(m, 1, 0)["value"] = "" }, []string{"spec.classes[1].allOf[0].anyOf[0].value", "at least 1 chars long"}},
		{"numeric value of 21 digits", "", func(m map[string]any) { condition(m, 1, 0)["value"] = strings.Repeat("9", 21) }, []string{"spec.classes[1].allOf[0].anyOf[0]", "decimal integer within 0 to 18446744073709551615"}},
		{"IOClass value above 32", "", func(m map[string]any) {
			class(m, 1)["allOf"].([]any)[0].(map[string]any)["anyOf"] = []any{cond("IOClass", "33")}
		}, []string{"spec.classes[1].allOf[0].anyOf[0]", "class id within 0-32"}},
		{"Direct with a value", "", func(m map[string]any) {
			class(m, 1)["allOf"].([]any)[0].(map[string]any)["anyOf"] = []any{cond("Direct", "yes")}
		}, []string{"spec.classes[1].allOf[0].anyOf[0]", "Direct and Metadata take no value"}},
		{"extension with a comma", "", func(m map[string]any) {
			class(m, 1)["allOf"].([]any)[0].(map[string]any)["anyOf"] = []any{cond("Extension", "log,txt")}
		}, []string{"spec.classes[1].allOf[0].anyOf[0]", "without &, |, comma or double quote"}},
		{"nine terms", "", func(m map[string]any) {
			var terms []any
			for i := 0; i < 9; i++ {
				terms = append(terms, map[string]any{"anyOf": []any{cond("IODirection", "write")}})
			}
			class(m, 1)["allOf"] = terms
		}, []string{"spec.classes[1].allOf", "must have at most 8 items"}},
		{"nine alternatives", "", func(m map[string]any) {
			var alts []any
			for i := 0; i < 9; i++ {
				alts = append(alts, cond("PID", "1"))
			}
			class(m, 1)["allOf"].([]any)[0].(map[string]any)["anyOf"] = alts
		}, []string{"spec.classes[1].allOf[0].anyOf", "must have at most 8 items"}},
		{"unknown advisor apply mode", "", func(m map[string]any) { spec(m)["advisor"] = map[string]any{"apply": "Sometimes"} }, []string{"spec.advisor.apply", "Unsupported value", `"Never", "Automatic"`}},
		// The controller's own status is validated too: casadm reads 4 characters of allocation.
		{"recommended allocation of five characters", "", func(m map[string]any) {
			m["status"] = map[string]any{"recommendations": []any{map[string]any{"classID": 1, "action": "Pin", "pinned": true, "allocation": "0.125"}}}
		}, []string{"status.recommendations[0].allocation", "may not be more than 4"}},
		{"unknown recommendation action", "", func(m map[string]any) {
			m["status"] = map[string]any{"recommendations": []any{map[string]any{"classID": 1, "action": "Evict"}}}
		}, []string{"status.recommendations[0].action", "Unsupported value"}},
	})
}

func TestInvalidClassificationPoliciesAreRejected(t *testing.T) {
	runInvalid(t, classificationInvalidCases())
}

// withBase sets base on cases written without one.
func withBase(base string, cases []invalidCase) []invalidCase {
	for i := range cases {
		if cases[i].base == "" {
			cases[i].base = base
		}
	}
	return cases
}

func TestValidAdvisorSpecIsAccepted(t *testing.T) {
	for _, apply := range []string{"Never", "Automatic"} {
		obj := parse(t, validClasses, func(m map[string]any) { spec(m)["advisor"] = map[string]any{"apply": apply} })
		obj.SetName(unique("advisor"))
		if err := create(obj); err != nil {
			t.Errorf("apply %s rejected: %v", apply, err)
		}
	}
}
