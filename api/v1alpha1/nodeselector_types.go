package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeSelector is a label selector over Kubernetes nodes: metav1.LabelSelector's fields and
// meaning, with every key, operator and value validated by the API server (a selector the
// API server accepts is one metav1.LabelSelectorAsSelector accepts).
// Atomic for server-side apply, as Kubernetes marks its own LabelSelector: an apply replaces
// the whole struct, so {} (no filter, the default) replaces what an earlier apply set.
// +structType=atomic
type NodeSelector struct {
	// matchLabels selects nodes that carry every one of these labels (key: value).
	// +optional
	// +mapType=atomic
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') <= 253)",messageExpression="'key %s is not a label key: an optional DNS subdomain prefix of at most 253 characters and /, then a name of at most 63 alphanumerics, -, _ or . that starts and ends alphanumeric'.format([self.filter(k, !(k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && k.indexOf('/') <= 253))[0]])"
	MatchLabels map[string]LabelValue `json:"matchLabels,omitempty"`
	// matchExpressions are requirements on node labels; all must hold.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelValue is a label value: at most 63 alphanumerics, -, _ or . that start and end alphanumeric, or empty.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`
type LabelValue string

// NodeSelectorRequirement is one requirement of a NodeSelector, as in metav1.LabelSelectorRequirement.
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",messageExpression="self.operator in ['In', 'NotIn'] ? 'operator ' + self.operator + ' needs at least one value' : 'operator ' + self.operator + ' takes no values'",fieldPath=".values"
type NodeSelectorRequirement struct {
	// key is the label key.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self.indexOf('/') <= 253",message="the key's prefix must be at most 253 characters"
	Key string `json:"key"`
	// operator is In, NotIn, Exists or DoesNotExist.
	// +required
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator metav1.LabelSelectorOperator `json:"operator"`
	// values are the label values In and NotIn compare with; Exists and DoesNotExist take none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`
	Values []string `json:"values,omitempty"`
}

// LabelSelector returns the selector as metav1.LabelSelector.
func (s *NodeSelector) LabelSelector() *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	if s.MatchLabels != nil {
		out.MatchLabels = make(map[string]string, len(s.MatchLabels))
		for k, v := range s.MatchLabels {
			out.MatchLabels[k] = string(v)
		}
	}
	for _, e := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
	}
	return out
}
