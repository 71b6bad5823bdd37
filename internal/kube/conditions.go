package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxConditionMessage is the API's limit on metav1.Condition.Message.
const maxConditionMessage = 32768

// SetCondition sets condition typ to True or False for generation gen, keeping its
// transition time when the status does not change, and cuts a message the API would refuse.
func SetCondition(conds *[]metav1.Condition, typ string, ok bool, reason, msg string, gen int64) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	if len(msg) > maxConditionMessage {
		msg = msg[:maxConditionMessage-3] + "..."
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen})
}

// Summarise joins the first five items and counts the rest, so a condition message stays
// short for thousands of nodes.
func Summarise(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:5], "; ") + fmt.Sprintf("; and %d more", len(items)-5)
}
