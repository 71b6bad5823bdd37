package apivalidation

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/plan"
)

// HybridStoragePolicy applies the checks the operator makes on a policy the API server
// accepted: the node selector as metav1.LabelSelectorAsSelector reads it, and the size ranges
// as the planner parses them. With the CRD's rules these never fail; they are here so that an
// offline tool reports what the operator would, should the two ever drift (the parity test
// in test/envtest fails then).
func HybridStoragePolicy(spec *prismv1.HybridStoragePolicySpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if _, err := metav1.LabelSelectorAsSelector(spec.NodeSelector.LabelSelector()); err != nil {
		errs = append(errs, field.Invalid(p.Child("nodeSelector"), nil, err.Error()))
	}
	for name, s := range map[string]string{"fastDevices": spec.FastDevices.Size, "capacityDevices": spec.CapacityDevices.Size} {
		if _, err := plan.ParseSizeRange(s); err != nil {
			errs = append(errs, field.Invalid(p.Child(name, "size"), s, err.Error()))
		}
	}
	return errs
}

// ClassificationPolicy applies the operator's check on a ClassificationPolicy: it compiles to
// an Open CAS IO class file.
func ClassificationPolicy(spec *prismv1.ClassificationPolicySpec) field.ErrorList {
	_, err := ioclass.Compile(spec)
	if err == nil {
		return nil
	}
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	var errs field.ErrorList
	for _, e := range agg.Errors() {
		var fe *field.Error
		if errors.As(e, &fe) {
			errs = append(errs, fe)
		} else {
			errs = append(errs, field.Invalid(field.NewPath("spec"), nil, fmt.Sprint(e)))
		}
	}
	return errs
}

// Check is what a Prism object must pass to be acted on: Validate (the API server's verdict)
// and, when that accepts it, the operator's semantic checks. obj is defaulted in place.
func (v *Validator) Check(obj map[string]any) field.ErrorList {
	if errs := v.Validate(obj); len(errs) > 0 {
		return errs
	}
	switch obj["kind"] {
	case "HybridStoragePolicy":
		p := &prismv1.HybridStoragePolicy{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, p); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		return HybridStoragePolicy(&p.Spec)
	case "ClassificationPolicy":
		p := &prismv1.ClassificationPolicy{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, p); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		return ClassificationPolicy(&p.Spec)
	}
	return nil
}
