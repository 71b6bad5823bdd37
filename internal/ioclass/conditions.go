package ioclass

import "github.com/prism-storage/prism/api/v1alpha1"

// condKind is one condition of the kernel classifier.
type condKind uint8

const (
	condDone condKind = iota + 1
	condMetadata
	condDirect
	condIOClass
	condFileSize
	condDirectory
	condCoreID
	condExtension
	condFileNamePrefix
	condLBA
	condPID
	condProcessName
	condFileOffset
	condRequestSize
	condIODirection
	condWLTH
)

// operandKind is what follows "keyword:" in a rule.
type operandKind uint8

const (
	operandNone      operandKind = iota // done, metadata, direct
	operandNumeric                      // [op:]u64
	operandString                       // 1-255 characters
	operandDirectory                    // a path, resolved by the kernel
	operandDirection                    // read | write
)

type condInfo struct {
	keyword string
	operand operandKind
	// fsLevel conditions test the file an IO belongs to; a raw block device
	// (BlueStore) has none.
	fsLevel bool
}

// conditions lists the kernel's condition keywords (classifier.c handler
// table; wlth exists only when built with CAS_WLTH_SUPPORT, this model
// assumes it does).
var conditions = map[condKind]condInfo{
	condDone:           {"done", operandNone, false},
	condMetadata:       {"metadata", operandNone, true},
	condDirect:         {"direct", operandNone, false},
	condIOClass:        {"io_class", operandNumeric, false},
	condFileSize:       {"file_size", operandNumeric, true},
	condDirectory:      {"directory", operandDirectory, true},
	condCoreID:         {"core_id", operandNumeric, false},
	condExtension:      {"extension", operandString, true},
	condFileNamePrefix: {"file_name_prefix", operandString, true},
	condLBA:            {"lba", operandNumeric, false},
	condPID:            {"pid", operandNumeric, false},
	condProcessName:    {"process_name", operandString, false},
	condFileOffset:     {"file_offset", operandNumeric, true},
	condRequestSize:    {"request_size", operandNumeric, false},
	condIODirection:    {"io_direction", operandDirection, false},
	condWLTH:           {"wlth", operandNumeric, false},
}

// keywords maps a rule keyword back to its condition.
var keywords = func() map[string]condKind {
	m := make(map[string]condKind, len(conditions))
	for k, info := range conditions {
		m[info.keyword] = k
	}
	return m
}()

// apiConditions maps the CRD's condition types to kernel conditions.
var apiConditions = map[v1alpha1.IOConditionType]condKind{
	v1alpha1.ConditionRequestSize:    condRequestSize,
	v1alpha1.ConditionIODirection:    condIODirection,
	v1alpha1.ConditionProcessName:    condProcessName,
	v1alpha1.ConditionLBA:            condLBA,
	v1alpha1.ConditionCoreID:         condCoreID,
	v1alpha1.ConditionWriteLifeHint:  condWLTH,
	v1alpha1.ConditionDirect:         condDirect,
	v1alpha1.ConditionPID:            condPID,
	v1alpha1.ConditionMetadata:       condMetadata,
	v1alpha1.ConditionDirectory:      condDirectory,
	v1alpha1.ConditionFileSize:       condFileSize,
	v1alpha1.ConditionExtension:      condExtension,
	v1alpha1.ConditionFileNamePrefix: condFileNamePrefix,
	v1alpha1.ConditionFileOffset:     condFileOffset,
	v1alpha1.ConditionIOClass:        condIOClass,
}

// apiConditionOrder lists the CRD types in the CRD's enum order, for messages.
var apiConditionOrder = []v1alpha1.IOConditionType{
	v1alpha1.ConditionRequestSize, v1alpha1.ConditionIODirection, v1alpha1.ConditionProcessName,
	v1alpha1.ConditionLBA, v1alpha1.ConditionCoreID, v1alpha1.ConditionWriteLifeHint,
	v1alpha1.ConditionDirect, v1alpha1.ConditionPID, v1alpha1.ConditionMetadata,
	v1alpha1.ConditionDirectory, v1alpha1.ConditionFileSize, v1alpha1.ConditionExtension,
	v1alpha1.ConditionFileNamePrefix, v1alpha1.ConditionFileOffset, v1alpha1.ConditionIOClass,
}

// numOp is a numeric comparison.
type numOp uint8

const (
	opEq numOp = iota
	opNe
	opLt
	opGt
	opLe
	opGe
)

var opNames = [...]string{opEq: "eq", opNe: "ne", opLt: "lt", opGt: "gt", opLe: "le", opGe: "ge"}

func parseOp(s string) (numOp, bool) {
	for op, name := range opNames {
		if s == name {
			return numOp(op), true
		}
	}
	return 0, false
}

var apiComparisons = map[v1alpha1.Comparison]numOp{
	v1alpha1.CompareEq: opEq, v1alpha1.CompareNe: opNe, v1alpha1.CompareLt: opLt,
	v1alpha1.CompareGt: opGt, v1alpha1.CompareLe: opLe, v1alpha1.CompareGe: opGe,
}

var apiComparisonOrder = []v1alpha1.Comparison{
	v1alpha1.CompareEq, v1alpha1.CompareNe, v1alpha1.CompareLt,
	v1alpha1.CompareGt, v1alpha1.CompareLe, v1alpha1.CompareGe,
}

func (op numOp) compare(v, operand uint64) bool {
	switch op {
	case opEq:
		return v == operand
	case opNe:
		return v != operand
	case opLt:
		return v < operand
	case opGt:
		return v > operand
	case opLe:
		return v <= operand
	case opGe:
		return v >= operand
	}
	return false
}
