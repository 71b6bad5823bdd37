package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetCondition(t *testing.T) {
	var conds []metav1.Condition
	SetCondition(&conds, "Ready", true, "Fine", "ok", 3)
	first := meta.FindStatusCondition(conds, "Ready")
	if first == nil || first.Status != metav1.ConditionTrue || first.Reason != "Fine" || first.ObservedGeneration != 3 {
		t.Fatalf("%+v", conds)
	}
	SetCondition(&conds, "Ready", false, "Broken", strings.Repeat("x", 40000), 4)
	c := meta.FindStatusCondition(conds, "Ready")
	if c.Status != metav1.ConditionFalse || len(c.Message) != 32768 || !strings.HasSuffix(c.Message, "...") || c.ObservedGeneration != 4 {
		t.Errorf("status %s, message of %d bytes", c.Status, len(c.Message))
	}
}

func TestSummarise(t *testing.T) {
	if got := Summarise([]string{"a", "b"}); got != "a; b" {
		t.Errorf("%q", got)
	}
	if got := Summarise([]string{"1", "2", "3", "4", "5", "6", "7"}); got != "1; 2; 3; 4; 5; and 2 more" {
		t.Errorf("%q", got)
	}
}
