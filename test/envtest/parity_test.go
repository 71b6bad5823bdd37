package envtest

import (
	"errors"
	"regexp"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/prism-storage/prism/internal/apivalidation"
)

// TestOfflineValidationAgreesWithTheAPIServer runs every invalid and valid case of the
// suites through the real API server and through internal/apivalidation (what kubectl prism
// plan and ioclass run) and requires the same verdict and the same field paths.
func TestOfflineValidationAgreesWithTheAPIServer(t *testing.T) {
	v, err := apivalidation.New()
	if err != nil {
		t.Fatal(err)
	}
	var cases []invalidCase
	for _, doc := range []string{validPolicy, validClasses, validNode, validPlan} {
		cases = append(cases, invalidCase{name: "valid " + strings.Fields(doc[strings.Index(doc, "kind:"):])[1], base: doc})
	}
	cases = append(cases, validEdgeCases()...)
	cases = append(cases, statusListValidCases()...)
	valid := len(cases)
	cases = append(cases, basicInvalidCases()...)
	cases = append(cases, classificationInvalidCases()...)
	cases = append(cases, classificationMoreInvalidCases()...)
	cases = append(cases, policyInvalidCases()...)
	cases = append(cases, planInvalidCases()...)
	cases = append(cases, statusListInvalidCases()...)
	agree := 0
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := parse(t, tc.base, tc.edit)
			obj.SetName(unique("parity"))
			copied, err := obj.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			offlineObj, err := apivalidation.Decode(copied)
			if err != nil {
				t.Fatal(err)
			}
			offline := v.Check(offlineObj)
			online := create(obj)
			on, off := apiServerFields(t, online), fields(offline)
			if (online == nil) != (len(offline) == 0) || strings.Join(on, " ") != strings.Join(off, " ") {
				t.Fatalf("verdicts differ:\nAPI server: %v\noffline:    %v", online, offline)
			}
			if i >= valid && !contains(off, tc.want[0]) {
				t.Fatalf("offline does not name %s: %v", tc.want[0], offline)
			}
			agree++
		})
	}
	t.Logf("%d of %d cases (%d valid, %d invalid) get the same verdict and field paths online and offline", agree, len(cases), valid, len(cases)-valid)
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// apiServerFields are the field paths an API server error names, sorted, without the
// "rules were not checked" note.
func apiServerFields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var out []string
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			if c.Field != "" && c.Field != "<nil>" {
				out = append(out, c.Field)
			}
		}
	}
	for _, m := range unknownField.FindAllStringSubmatch(err.Error(), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("the API server's error names no field: %v", err)
	}
	return uniqueSorted(out)
}

func fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		if e.Field != "" && e.Field != "<nil>" {
			out = append(out, e.Field)
		}
	}
	return uniqueSorted(out)
}

func uniqueSorted(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, x := range s {
		if i == 0 || s[i-1] != x {
			out = append(out, x)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
