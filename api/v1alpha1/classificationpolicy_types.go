package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IOConditionType is one condition of the Open CAS IO classifier.
// +kubebuilder:validation:Enum=RequestSize;IODirection;ProcessName;LBA;CoreID;WriteLifeHint;Direct;PID;Metadata;Directory;FileSize;Extension;FileNamePrefix;FileOffset;IOClass
type IOConditionType string

// Condition types, with the Open CAS rule keyword each compiles to.
const (
	ConditionRequestSize    IOConditionType = "RequestSize"    // request_size (bytes)
	ConditionIODirection    IOConditionType = "IODirection"    // io_direction (read|write)
	ConditionProcessName    IOConditionType = "ProcessName"    // process_name (task comm)
	ConditionLBA            IOConditionType = "LBA"            // lba (512-byte sectors)
	ConditionCoreID         IOConditionType = "CoreID"         // core_id (0-4095)
	ConditionWriteLifeHint  IOConditionType = "WriteLifeHint"  // wlth
	ConditionDirect         IOConditionType = "Direct"         // direct (no operand)
	ConditionPID            IOConditionType = "PID"            // pid
	ConditionMetadata       IOConditionType = "Metadata"       // metadata (no operand; filesystems only)
	ConditionDirectory      IOConditionType = "Directory"      // directory (filesystems only)
	ConditionFileSize       IOConditionType = "FileSize"       // file_size (filesystems only)
	ConditionExtension      IOConditionType = "Extension"      // extension (filesystems only)
	ConditionFileNamePrefix IOConditionType = "FileNamePrefix" // file_name_prefix (filesystems only)
	ConditionFileOffset     IOConditionType = "FileOffset"     // file_offset (filesystems only)
	ConditionIOClass        IOConditionType = "IOClass"        // io_class (class assigned so far)
)

// Comparison compares a numeric condition's value.
// +kubebuilder:validation:Enum=Eq;Ne;Lt;Gt;Le;Ge
type Comparison string

// Comparisons (Open CAS eq, ne, lt, gt, le, ge).
const (
	CompareEq Comparison = "Eq"
	CompareNe Comparison = "Ne"
	CompareLt Comparison = "Lt"
	CompareGt Comparison = "Gt"
	CompareLe Comparison = "Le"
	CompareGe Comparison = "Ge"
)

// IOCondition is one test on an IO request.
// +kubebuilder:validation:XValidation:rule="self.type in ['Direct', 'Metadata'] ? !has(self.value) : has(self.value)",message="Direct and Metadata take no value; every other condition type needs a value"
// +kubebuilder:validation:XValidation:rule="!has(self.comparison) || self.type in ['RequestSize', 'LBA', 'CoreID', 'WriteLifeHint', 'PID', 'FileSize', 'FileOffset', 'IOClass']",message="comparison applies only to numeric conditions (RequestSize, LBA, CoreID, WriteLifeHint, PID, FileSize, FileOffset, IOClass)"
// +kubebuilder:validation:XValidation:rule="!has(self.value) || !(self.type in ['RequestSize', 'LBA', 'CoreID', 'WriteLifeHint', 'PID', 'FileSize', 'FileOffset', 'IOClass']) || (self.value.matches('^[0-9]{1,20}$') && (self.value.size() < 20 || self.value <= '18446744073709551615'))",messageExpression="self.type + ' value must be a decimal integer within 0 to 18446744073709551615 (2^64-1): ' + self.value"
// +kubebuilder:validation:XValidation:rule="self.type != 'CoreID' || !has(self.value) || !self.value.matches('^[0-9]{1,20}$') || (self.value.matches('^0*[0-9]{1,4}$') && int(self.value) <= 4095)",messageExpression="'CoreID value must be within 0-4095: ' + self.value"
// +kubebuilder:validation:XValidation:rule="self.type != 'IOClass' || !has(self.value) || !self.value.matches('^[0-9]{1,20}$') || (self.value.matches('^0*[0-9]{1,2}$') && int(self.value) <= 32)",messageExpression="'IOClass value must be a class id within 0-32: ' + self.value"
// +kubebuilder:validation:XValidation:rule="self.type != 'IODirection' || !has(self.value) || self.value in ['read', 'write']",message="IODirection value must be read or write"
// +kubebuilder:validation:XValidation:rule="!has(self.value) || !(self.type in ['ProcessName', 'Directory', 'Extension', 'FileNamePrefix']) || (self.value.matches('^[ -~]+$') && !self.value.matches('[&|,\"]'))",message="string values must be printable ASCII without &, |, comma or double quote (the Open CAS rule syntax cannot express them)"
// +kubebuilder:validation:XValidation:rule="self.type != 'ProcessName' || !has(self.value) || self.value.size() <= 15",message="ProcessName matches the kernel task name, which is at most 15 characters"
// +kubebuilder:validation:XValidation:rule="!has(self.value) || !(self.value.startsWith(' ') || self.value.endsWith(' '))",message="value must not start or end with a space (casadm strips it, which would change the rule)"
type IOCondition struct {
	// type is what the condition tests.
	// +required
	Type IOConditionType `json:"type"`
	// comparison applies to numeric conditions; defaults to Eq.
	// +optional
	Comparison Comparison `json:"comparison,omitempty"`
	// value is the operand: a decimal number, read/write, or a string (process name, directory, extension...).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Value string `json:"value,omitempty"`
}

// MatchTerm holds when any of its conditions holds (Open CAS `|`).
type MatchTerm struct {
	// anyOf are alternatives; at least one must match.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	AnyOf []IOCondition `json:"anyOf"`
}

// IOClass is one Open CAS IO class: a rule, an eviction priority (or pinned) and an allocation cap.
// +kubebuilder:validation:XValidation:rule="self.id != 0 || self.name == 'unclassified'",message="class 0 must be named unclassified"
// +kubebuilder:validation:XValidation:rule="self.id == 0 ? !has(self.allOf) && !(has(self.done) && self.done) : has(self.allOf)",message="class 0 takes every IO no other class matched and has no rule; every other class needs allOf"
// +kubebuilder:validation:XValidation:rule="(has(self.pinned) && self.pinned) != has(self.evictionPriority)",message="set exactly one of evictionPriority or pinned: true"
// +kubebuilder:validation:XValidation:rule="!has(self.allOf) || self.allOf.map(t, t.anyOf.map(c, {'RequestSize': 12, 'IODirection': 12, 'ProcessName': 12, 'LBA': 3, 'CoreID': 7, 'WriteLifeHint': 4, 'Direct': 6, 'PID': 3, 'Metadata': 8, 'Directory': 9, 'FileSize': 9, 'Extension': 9, 'FileNamePrefix': 16, 'FileOffset': 11, 'IOClass': 8}[c.type] + (c.type in ['RequestSize', 'LBA', 'CoreID', 'WriteLifeHint', 'PID', 'FileSize', 'FileOffset', 'IOClass'] ? 3 : 0) + (has(c.value) ? 1 + size(c.value) : 0) + 1).sum()).sum() + (has(self.done) && self.done ? 5 : 0) <= 1024",message="the compiled Open CAS rule would exceed 1023 characters: shorten values or use fewer conditions"
type IOClass struct {
	// id is the Open CAS class id; classes are evaluated in ascending id.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	ID int32 `json:"id"`
	// name is a label for humans and metrics (class 0 is always "unclassified").
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// allOf are terms that must all match (Open CAS `&`); each term matches when any of its conditions does.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	AllOf []MatchTerm `json:"allOf,omitempty"`
	// done stops classification when this class matches; without it a later (higher id) matching class wins.
	// +optional
	Done bool `json:"done,omitempty"`
	// evictionPriority orders eviction: 0 is evicted last, 255 first.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=255
	EvictionPriority *int32 `json:"evictionPriority,omitempty"`
	// pinned keeps the class's cache lines from being evicted by other classes.
	// +optional
	Pinned bool `json:"pinned,omitempty"`
	// allocation caps the class's share of the cache, 0 to 1 in at most 4 characters ("0.25"); 0 sends the class to pass-through.
	// +required
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{0,2})?|1(\.0{0,2})?|\.[0-9]{1,3})$`
	Allocation string `json:"allocation"`
}

// ClassificationPolicySpec lists the IO classes a cache loads.
// +kubebuilder:validation:XValidation:rule="self.classes.all(a, self.classes.exists_one(b, b.name == a.name))",messageExpression="'classes[%d].name %s is used by another class: class names must be unique'.format([self.classes.transformList(i, a, !self.classes.exists_one(b, b.name == a.name), i)[1], self.classes.filter(a, !self.classes.exists_one(b, b.name == a.name))[0].name])",fieldPath=".classes"
type ClassificationPolicySpec struct {
	// classes are the IO classes, at most 33 (ids 0-32 in released Open CAS).
	// +required
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=33
	Classes []IOClass `json:"classes"`
	// advisor says what the PRISM advisor may do with its recommendations.
	// +optional
	Advisor *AdvisorSpec `json:"advisor,omitempty"`
}

// AdvisorApply says whether the advisor's recommendations reach the nodes.
// +kubebuilder:validation:Enum=Never;Automatic
type AdvisorApply string

// Advisor apply modes.
const (
	// AdvisorApplyNever only reports recommendations in status; nodes load the classes as written.
	AdvisorApplyNever AdvisorApply = "Never"
	// AdvisorApplyAutomatic makes the CSV the nodes load carry the current recommendations
	// (pinning, eviction priority and allocation only; never a rule). The spec is not edited.
	AdvisorApplyAutomatic AdvisorApply = "Automatic"
)

// AdvisorSpec configures the PRISM advisor. Atomic for server-side apply: advisor: {} (the
// default, Never) replaces what an earlier apply set (a granular struct emptied this way was
// refused as "null").
// +structType=atomic
type AdvisorSpec struct {
	// apply is Never (recommend only, the default) or Automatic (nodes load the classes with
	// the recommendations applied; see docs/cache.md, section Advisor).
	// +optional
	// +kubebuilder:default=Never
	Apply AdvisorApply `json:"apply,omitempty"`
}

// Condition types of a ClassificationPolicy.
const (
	// ConditionCompiled says whether the classes compile to an Open CAS IO class file.
	ConditionCompiled = "Compiled"
	// ConditionLoaded says whether every node whose plan names the policy reports its caches
	// running with the policy's classes.
	ConditionLoaded = "Loaded"
	// ConditionAdvised says whether the advisor has recommendations from a complete window.
	ConditionAdvised = "Advised"
)

// RecommendationAction is what the advisor suggests for one class.
// +kubebuilder:validation:Enum=Pin;Unpin;SetAllocation;Demote;Keep
type RecommendationAction string

// Recommendation actions.
const (
	// RecommendPin pins the class with the recommended allocation.
	RecommendPin RecommendationAction = "Pin"
	// RecommendUnpin gives a pinned class an eviction priority again.
	RecommendUnpin RecommendationAction = "Unpin"
	// RecommendSetAllocation keeps a pinned class pinned with another allocation.
	RecommendSetAllocation RecommendationAction = "SetAllocation"
	// RecommendDemote makes a class that never rewrites its data evicted first, with a small allocation.
	RecommendDemote RecommendationAction = "Demote"
	// RecommendKeep leaves the class as the nodes run it.
	RecommendKeep RecommendationAction = "Keep"
)

// ClassRecommendation is the advisor's target for one class: the class as it would run after
// the action (pinned, or an eviction priority, and an allocation).
type ClassRecommendation struct {
	// classID is the IO class id.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	ClassID int32 `json:"classID"`
	// name is the class name in the spec.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`
	// action is the change from the classes as the nodes run them: the spec as written, or with
	// the previous recommendations when spec.advisor.apply is Automatic.
	// +required
	Action RecommendationAction `json:"action"`
	// pinned is the recommended pinning.
	// +optional
	Pinned bool `json:"pinned,omitempty"`
	// evictionPriority is the recommended eviction priority of an unpinned class.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=255
	EvictionPriority *int32 `json:"evictionPriority,omitempty"`
	// allocation is the recommended allocation, as the spec writes it.
	// +optional
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{0,2})?|1(\.0{0,2})?|\.[0-9]{1,3})$`
	Allocation string `json:"allocation,omitempty"`
	// writeInvalidation is the class's β over the window: bytes written ÷ mean bytes held
	// (decimal string; empty when it held no cache space).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	WriteInvalidation string `json:"writeInvalidation,omitempty"`
	// reason explains the recommendation with the window's numbers.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
}

// AdvisorStatus describes the window the recommendations come from.
type AdvisorStatus struct {
	// windowStart is when the window's first observation was taken.
	// +optional
	WindowStart *metav1.Time `json:"windowStart,omitempty"`
	// windowEnd is when the window's last observation was taken.
	// +optional
	WindowEnd *metav1.Time `json:"windowEnd,omitempty"`
	// nodes counts the nodes whose caches contributed to the window.
	// +optional
	Nodes int32 `json:"nodes,omitempty"`
	// caches counts the caches that contributed to the window.
	// +optional
	Caches int32 `json:"caches,omitempty"`
	// skippedCaches counts the caches left out of the window (restarted, reconfigured, no size).
	// +optional
	SkippedCaches int32 `json:"skippedCaches,omitempty"`
	// writtenBytes are the writes to the exported objects in the window, over every class.
	// +optional
	WrittenBytes int64 `json:"writtenBytes,omitempty"`
	// specGeneration is the policy generation the recommendations were computed against.
	// +optional
	SpecGeneration int64 `json:"specGeneration,omitempty"`
	// measuredWriteReduction is α_cache over the window from the caches' own counters: 1 − bytes
	// that reached the capacity devices ÷ bytes written to the exported objects.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	MeasuredWriteReduction string `json:"measuredWriteReduction,omitempty"`
	// modelledWriteReduction is the model's α_cache for the classes as the nodes run them (pinned classes only).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ModelledWriteReduction string `json:"modelledWriteReduction,omitempty"`
	// expectedWriteReduction is the model's α_cache with the recommendations applied.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ExpectedWriteReduction string `json:"expectedWriteReduction,omitempty"`
	// applied says whether the nodes' IO class file carries the recommendations
	// (spec.advisor.apply Automatic and recommendations computed for the current generation).
	// +optional
	Applied bool `json:"applied,omitempty"`
}

// ClassificationPolicyStatus reports what the policy compiles to.
type ClassificationPolicyStatus struct {
	// conditions say whether the policy compiled and where it is loaded.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// warnings are problems that do not block loading (a class that can never match on a raw BlueStore device).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	Warnings []string `json:"warnings,omitempty"`
	// compiledHash is "sha256:" and the hex SHA-256 of the IO class file the nodes should load
	// (with the recommendations when they are applied); empty when the policy does not compile.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	CompiledHash string `json:"compiledHash,omitempty"`
	// compiledClasses counts the classes in that file (class 0 included).
	// +optional
	CompiledClasses int32 `json:"compiledClasses,omitempty"`
	// compiledBytes is the size of that file.
	// +optional
	CompiledBytes int32 `json:"compiledBytes,omitempty"`
	// nodes counts the StorageNodes whose cache plan names this policy.
	// +optional
	Nodes int32 `json:"nodes,omitempty"`
	// loadedNodes counts those that report every cache running with the policy's classes.
	// +optional
	LoadedNodes int32 `json:"loadedNodes,omitempty"`
	// advice describes the window the recommendations come from.
	// +optional
	Advice *AdvisorStatus `json:"advice,omitempty"`
	// recommendations are the advisor's targets, one per class, highest β first.
	// +optional
	// +listType=map
	// +listMapKey=classID
	// +kubebuilder:validation:MaxItems=33
	Recommendations []ClassRecommendation `json:"recommendations,omitempty"`
}

// ClassificationPolicy is the PRISM classifier: Open CAS IO classes as a structured API.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cpol,categories=prism
// +kubebuilder:printcolumn:name="Compiled",type=string,JSONPath=`.status.conditions[?(@.type=="Compiled")].status`
// +kubebuilder:printcolumn:name="Classes",type=integer,JSONPath=`.status.compiledClasses`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`
// +kubebuilder:printcolumn:name="Loaded",type=integer,JSONPath=`.status.loadedNodes`
// +kubebuilder:printcolumn:name="Advised",type=string,JSONPath=`.status.conditions[?(@.type=="Advised")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClassificationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the IO classes.
	// +required
	Spec ClassificationPolicySpec `json:"spec"`
	// status reports compilation results.
	// +optional
	Status ClassificationPolicyStatus `json:"status,omitempty"`
}

// ClassificationPolicyList is a list of ClassificationPolicies.
// +kubebuilder:object:root=true
type ClassificationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClassificationPolicy `json:"items"`
}

func init() {
	register(&ClassificationPolicy{}, &ClassificationPolicyList{})
}
