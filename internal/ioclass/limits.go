package ioclass

// Limits of released Open CAS (up to v26.03.2, OCF_CONFIG_MAX_IO_CLASSES 33).
const (
	// MaxClassID is the highest IO class id (0-32).
	MaxClassID = 32
	// MaxClasses is the most classes one cache holds.
	MaxClasses = MaxClassID + 1
	// MaxRuleLen is the longest rule: the IO class name field is
	// OCF_IO_CLASS_NAME_MAX (1024) bytes including the NUL.
	MaxRuleLen = 1023
	// MaxStringOperand is the longest string operand the kernel accepts
	// (MAX_STRING_SPECIFIER_LEN 256 including the NUL).
	MaxStringOperand = 255
	// MaxCoreID is the highest core id (OCF_CORE_ID_MAX).
	MaxCoreID = 4095
	// MaxPriority is the lowest eviction priority (evicted first); 0 is
	// evicted last.
	MaxPriority = 255
	// MaxAllocationLen is how many characters casadm reads as allocation.
	MaxAllocationLen = 4
	// MaxProcessName is the longest kernel task name (TASK_COMM_LEN 16 with
	// the NUL); longer process_name operands can never match.
	MaxProcessName = 15
	// MaxTerms and MaxAlternatives bound a class's allOf and anyOf lists (CRD).
	MaxTerms        = 8
	MaxAlternatives = 8
)

// Class 0 takes every IO no rule matched; Open CAS names it "unclassified"
// and ships it with priority 22 and the whole cache.
const (
	UnclassifiedName       = "unclassified"
	DefaultUnclassifiedPri = 22
	DefaultUnclassifiedAll = "1"
)
