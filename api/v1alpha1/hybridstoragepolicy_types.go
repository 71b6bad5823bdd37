package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PolicyMode says whether a policy changes anything.
// +kubebuilder:validation:Enum=Apply;DryRun
type PolicyMode string

const (
	// ModeApply provisions the plan on the nodes and in Rook.
	ModeApply PolicyMode = "Apply"
	// ModeDryRun computes and publishes the plan and touches nothing.
	ModeDryRun PolicyMode = "DryRun"
)

// InferredTierUse says whether a selector matches devices by their inferred tier.
// +kubebuilder:validation:Enum=Ignore;Accept
type InferredTierUse string

const (
	// InferredTiersIgnore matches tiers from the drive database only (the default).
	InferredTiersIgnore InferredTierUse = "Ignore"
	// InferredTiersAccept also matches a device of tier Other by its inferred tier.
	InferredTiersAccept InferredTierUse = "Accept"
)

// DeviceSelector picks devices for one tier, in the spirit of cephadm's drive groups.
// All set filters must match. paths cannot be combined with the other filters. A list that
// is given must not be empty: an empty list would read as "no filter" to the planner.
// +kubebuilder:validation:XValidation:rule="!has(self.paths) || !has(self.inferredTiers)",message="inferredTiers changes how tiers match and cannot be combined with paths"
// +kubebuilder:validation:XValidation:rule="!has(self.paths) || (!has(self.tiers) && !has(self.models) && !has(self.vendors) && !has(self.size) && !has(self.rotational))",message="paths selects devices explicitly and cannot be combined with tiers, models, vendors, size or rotational"
// Atomic for server-side apply, as Kubernetes marks its own LabelSelector: an apply replaces
// the whole struct, so {} (no filter, the default) replaces what an earlier apply set.
// +structType=atomic
type DeviceSelector struct {
	// tiers limits selection to devices the agent put in these tiers.
	// Defaults to [Fast] for fastDevices and [Capacity] for capacityDevices when no other filter is set.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	Tiers []Tier `json:"tiers,omitempty"`
	// inferredTiers says whether tiers (and the default tier) also match a device the drive
	// database does not know, by the tier the agent inferred from its evidence (PCI IDs, write
	// granularity, rated endurance). Ignore, the default, keeps decision 0003: only database
	// tiers count. Accept opts in (decision 0022).
	// +optional
	InferredTiers InferredTierUse `json:"inferredTiers,omitempty"`
	// models are glob patterns (*, ?) matched case-insensitively against the device model.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.all(p, !p.matches('[\\\\[\\\\]\\\\\\\\]'))",messageExpression="'models[%d] %s is not a supported glob pattern: only * and ? are wildcards; [, ] and backslash are not allowed'.format([self.transformList(i, p, p.matches('[\\\\[\\\\]\\\\\\\\]'), i)[0], self.filter(p, p.matches('[\\\\[\\\\]\\\\\\\\]'))[0]])"
	Models []string `json:"models,omitempty"`
	// vendors are glob patterns matched case-insensitively against the device vendor.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.all(p, !p.matches('[\\\\[\\\\]\\\\\\\\]'))",messageExpression="'vendors[%d] %s is not a supported glob pattern: only * and ? are wildcards; [, ] and backslash are not allowed'.format([self.transformList(i, p, p.matches('[\\\\[\\\\]\\\\\\\\]'), i)[0], self.filter(p, p.matches('[\\\\[\\\\]\\\\\\\\]'))[0]])"
	Vendors []string `json:"vendors,omitempty"`
	// size is a range LOW:HIGH of Kubernetes quantities ("1Ti:", ":500Gi", "3T:8T"); a single quantity means exactly that size.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^:]*(:[^:]*)?$') && self != ':' && self.split(':').all(p, p == '' || isQuantity(p))",message="size must be LOW:HIGH, LOW:, :HIGH or one size, each a quantity such as 500Gi or 4T"
	// +kubebuilder:validation:XValidation:rule="!self.split(':').all(p, p == '' || isQuantity(p)) || self.split(':').all(p, p == '' || (quantity(p).compareTo(quantity('0')) >= 0 && quantity(p).compareTo(quantity('1Ei')) <= 0))",messageExpression="'size bounds must be between 0 and 1Ei: ' + self"
	// +kubebuilder:validation:XValidation:rule="!self.split(':').all(p, p == '' || isQuantity(p)) || self.endsWith(':') || quantity(self.split(':')[self.split(':').size() - 1]).compareTo(quantity('0')) > 0",messageExpression="(self.contains(':') ? 'HIGH' : 'a single size') + ' must be above 0 (0 would mean no bound): ' + self"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[^:]+:[^:]+$') || !self.split(':').all(p, isQuantity(p)) || quantity(self.split(':')[0]).compareTo(quantity(self.split(':')[1])) <= 0",messageExpression="'size range LOW:HIGH must have LOW <= HIGH: ' + self"
	Size string `json:"size,omitempty"`
	// rotational limits selection to spinning (true) or solid-state (false) devices.
	// +optional
	Rotational *bool `json:"rotational,omitempty"`
	// paths selects exactly these devices by stable path (/dev/disk/by-id/...).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:Pattern=`^/dev/disk/by-(id|path)/[A-Za-z0-9_#+:=@\\-][A-Za-z0-9_#+:=@.\\-]*$`
	// +kubebuilder:validation:items:MaxLength=512
	Paths []string `json:"paths,omitempty"`
	// limit caps how many devices are selected per node (in stable-path order).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=512
	Limit *int32 `json:"limit,omitempty"`
}

// DBSizing sizes the BlueStore DB/WAL slot that each capacity device gets on a fast device.
// +kubebuilder:validation:XValidation:rule="!(has(self.size) && has(self.percentOfData))",message="set either size or percentOfData, not both"
// Atomic for server-side apply, as Kubernetes marks its own LabelSelector: an apply replaces
// the whole struct, so {} (no filter, the default) replaces what an earlier apply set.
// +structType=atomic
type DBSizing struct {
	// size is an absolute slot size (e.g. 60Gi).
	// +optional
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? quantity(self).compareTo(quantity('2Gi')) >= 0 && quantity(self).compareTo(quantity('64Ti')) <= 0 : self >= 2147483648 && self <= 70368744177664",messageExpression="'size must be between 2Gi and 64Ti: %s'.format([self])"
	Size *resource.Quantity `json:"size,omitempty"`
	// percentOfData sizes the slot as a percentage of the data device (Ceph advises 1 to 4).
	// Used when size is not set; defaults to 2.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	PercentOfData *int32 `json:"percentOfData,omitempty"`
	// spareSlots reserves this many extra slots per fast device for disks added later.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	SpareSlots int32 `json:"spareSlots,omitempty"`
	// maxDataDevicesPerFastDevice caps how many capacity devices share one fast device: when the
	// fast device fails, every OSD behind it fails (blast radius). 0 means no cap.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	MaxDataDevicesPerFastDevice int32 `json:"maxDataDevicesPerFastDevice,omitempty"`
}

// OSDSettings tune the OSDs Rook creates on the capacity devices.
type OSDSettings struct {
	// deviceClass is the CRUSH device class of the OSDs (Rook's deviceClass), so pools can target them.
	// +optional
	// +kubebuilder:default=qlc
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9_-]+$`
	DeviceClass string `json:"deviceClass,omitempty"`
	// minAllocSize sets bluestore_min_alloc_size for the OSDs at creation: Auto matches the capacity
	// devices' internal write unit (all must agree), Default leaves Ceph's value.
	// +optional
	// +kubebuilder:default=Auto
	// +kubebuilder:validation:Enum=Auto;Default
	MinAllocSize MinAllocSizeMode `json:"minAllocSize,omitempty"`
	// ignoreHealthChecks are Ceph health check codes that never hold back the re-creation of an
	// OSD whose fast device was replaced, as `ceph health mute` would (decision 0046): checks an
	// admin knows say nothing about data. Codes that say data is unavailable, damaged or full
	// (PG_AVAILABILITY, PG_DAMAGED, OBJECT_UNFOUND, OSD_FULL, ...) hold even when listed.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[A-Z][A-Z0-9_]*$`
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.exists(c, c in ['PG_AVAILABILITY', 'PG_DAMAGED', 'PG_RECOVERY_FULL', 'PG_BACKFILL_FULL', 'PG_DEGRADED_FULL', 'OBJECT_UNFOUND', 'OSD_SCRUB_ERRORS', 'OSD_TOO_MANY_REPAIRS', 'OSD_FULL', 'OSD_BACKFILLFULL', 'POOL_FULL', 'OSD_OUT_OF_ORDER_FULL'])",messageExpression="self.filter(c, c in ['PG_AVAILABILITY', 'PG_DAMAGED', 'PG_RECOVERY_FULL', 'PG_BACKFILL_FULL', 'PG_DEGRADED_FULL', 'OBJECT_UNFOUND', 'OSD_SCRUB_ERRORS', 'OSD_TOO_MANY_REPAIRS', 'OSD_FULL', 'OSD_BACKFILLFULL', 'POOL_FULL', 'OSD_OUT_OF_ORDER_FULL'])[0] + ' says data is unavailable, damaged or full: it always holds a re-created OSD back and cannot be ignored'"
	IgnoreHealthChecks []string `json:"ignoreHealthChecks,omitempty"`
}

// MinAllocSizeMode says how Prism sets bluestore_min_alloc_size.
type MinAllocSizeMode string

// Min alloc size modes.
const (
	MinAllocSizeAuto    MinAllocSizeMode = "Auto"
	MinAllocSizeDefault MinAllocSizeMode = "Default"
)

// CacheMode is the Open CAS cache mode for the cache partition.
// +kubebuilder:validation:Enum=None;WriteThrough;WriteBack;WriteAround;PassThrough;WriteOnly
type CacheMode string

// Cache modes (Open CAS wt, wb, wa, pt, wo).
const (
	CacheNone         CacheMode = "None"
	CacheWriteThrough CacheMode = "WriteThrough"
	CacheWriteBack    CacheMode = "WriteBack"
	CacheWriteAround  CacheMode = "WriteAround"
	CachePassThrough  CacheMode = "PassThrough"
	CacheWriteOnly    CacheMode = "WriteOnly"
)

// CacheSpec configures the block cache that the rest of each fast device provides to the capacity devices.
// Settings that mean nothing for the chosen mode are refused rather than ignored.
// +kubebuilder:validation:XValidation:rule="self.mode != 'None' || !has(self.classificationPolicyName)",message="classificationPolicyName needs a cache: set mode to something other than None",fieldPath=".classificationPolicyName"
// +kubebuilder:validation:XValidation:rule="!has(self.cleaning) || self.mode in ['WriteBack', 'WriteOnly']",messageExpression="'cleaning applies only to WriteBack and WriteOnly caches (the only modes that hold dirty data), not to ' + self.mode",fieldPath=".cleaning"
// +kubebuilder:validation:XValidation:rule="!has(self.dirtyData) || self.dirtyData == 'Preserve' || self.mode in ['WriteBack', 'WriteOnly']",messageExpression="'dirtyData AllowLoss applies only to WriteBack and WriteOnly caches (the only modes that hold dirty data), not to ' + self.mode",fieldPath=".dirtyData"
// +kubebuilder:validation:XValidation:rule="self.mode != 'None' || (!has(self.promotion) && !has(self.sequentialCutoff))",message="promotion and sequentialCutoff need a cache: set mode to something other than None"
// +kubebuilder:validation:XValidation:rule="self.mode == 'None' || oldSelf.mode == 'None' || self.lineSizeKiB == oldSelf.lineSizeKiB",messageExpression="'lineSizeKiB is fixed at %d while caches run: set mode None first (the caches are flushed and stopped), then change it'.format([oldSelf.lineSizeKiB])",fieldPath=".lineSizeKiB"
type CacheSpec struct {
	// mode is the cache mode; None leaves the rest of the fast device unused.
	// +optional
	// +kubebuilder:default=None
	Mode CacheMode `json:"mode,omitempty"`
	// lineSizeKiB is the cache line size, fixed when the cache starts.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Enum=4;8;16;32;64
	LineSizeKiB int32 `json:"lineSizeKiB,omitempty"`
	// classificationPolicyName names the ClassificationPolicy whose IO classes the cache loads.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ClassificationPolicyName string `json:"classificationPolicyName,omitempty"`
	// The cleaning, promotion, sequential cut-off and dirty-data settings.
	CacheSettings `json:",inline"`
}

// ObjectRef names a namespaced object.
type ObjectRef struct {
	// namespace of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`
	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// WipeGrant lets Prism wipe one device that holds data. Nothing else is ever wiped.
type WipeGrant struct {
	// node is the node the device is on.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Node string `json:"node"`
	// path is the device's stable path.
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/dev/disk/by-(id|path)/[A-Za-z0-9_#+:=@\\-][A-Za-z0-9_#+:=@.\\-]*$`
	Path string `json:"path"`
}

// HybridStoragePolicySpec is the cluster-wide intent: which nodes and devices pair fast and capacity tiers.
// +kubebuilder:validation:XValidation:rule="!has(self.fastDevices) || !has(self.fastDevices.paths) || !has(self.capacityDevices) || !has(self.capacityDevices.paths) || !self.capacityDevices.paths.exists(p, p in self.fastDevices.paths)",messageExpression="'capacityDevices.paths[%d] %s is also in fastDevices.paths: a device belongs to one tier'.format([self.capacityDevices.paths.transformList(i, p, p in self.fastDevices.paths, i)[0], self.capacityDevices.paths.filter(p, p in self.fastDevices.paths)[0]])",fieldPath=".capacityDevices.paths"
type HybridStoragePolicySpec struct {
	// mode is Apply to provision, or DryRun to only compute and publish the plan.
	// +required
	Mode PolicyMode `json:"mode"`
	// nodeSelector selects Kubernetes nodes by label; {} selects every node that has a StorageNode.
	// +required
	NodeSelector NodeSelector `json:"nodeSelector"`
	// fastDevices picks the fast tier on each node.
	// +optional
	FastDevices DeviceSelector `json:"fastDevices,omitempty"`
	// capacityDevices picks the capacity (QLC) tier on each node.
	// +optional
	CapacityDevices DeviceSelector `json:"capacityDevices,omitempty"`
	// db sizes the BlueStore DB/WAL slots.
	// +optional
	DB DBSizing `json:"db,omitempty"`
	// cache configures the block cache on the rest of the fast devices.
	// +optional
	Cache CacheSpec `json:"cache,omitempty"`
	// osd tunes the OSDs created on the capacity devices.
	// +optional
	OSD OSDSettings `json:"osd,omitempty"`
	// cephCluster is the Rook CephCluster whose storage section Prism manages. It cannot
	// change: Prism's entries would stay in the old cluster. Delete the policy (its entries
	// are removed) and create one for the other cluster.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cephCluster cannot change: delete the policy (Prism removes its entries from the CephCluster) and create one for the other cluster"
	CephCluster ObjectRef `json:"cephCluster"`
	// allowWipe lists fast devices holding data that Prism may wipe before it partitions them. It does not cover capacity devices, which Prism hands to Rook as they are (clear those yourself). Every other non-empty device is left alone.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	AllowWipe []WipeGrant `json:"allowWipe,omitempty"`
}

// SelectedDevice is a device a policy chose.
type SelectedDevice struct {
	// name is the kernel name.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`
	// stablePath is the device's /dev/disk/by-id path.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	StablePath string `json:"stablePath,omitempty"`
	// model is the device model.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Model string `json:"model,omitempty"`
	// sizeBytes is the device capacity.
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`
	// allowWipe is true when the device was chosen only because the policy's allowWipe grants
	// it: it is not proven empty (a fast device Prism wipes before partitioning it; a capacity
	// device whose first or last MiB holds bytes no known format explains, which Rook's
	// prepare overwrites). False for a device proven empty or carrying the node's own plan.
	// +optional
	AllowWipe bool `json:"allowWipe,omitempty"`
	// dbSlot is, for a capacity device, the partition planned for its BlueStore DB.
	// +optional
	// +kubebuilder:validation:MaxLength=520
	DBSlot string `json:"dbSlot,omitempty"`
}

// RejectedDevice is a device a policy did not choose, with the reason.
type RejectedDevice struct {
	// name is the kernel name.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`
	// reason says why the device was not chosen.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason"`
}

// NodeSelection is what a policy chose on one node.
type NodeSelection struct {
	// node is the node name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Node string `json:"node"`
	// fast are the devices chosen for the fast tier.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Fast []SelectedDevice `json:"fast,omitempty"`
	// capacity are the devices chosen for the capacity tier.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Capacity []SelectedDevice `json:"capacity,omitempty"`
	// rejected are the node's other devices, each with the reason it was not chosen.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Rejected []RejectedDevice `json:"rejected,omitempty"`
	// message summarises problems on this node (no inventory, no fast device, plan refused...).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
	// warnings are planning concerns that do not block (a DB slot below 1 % of its data device).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	Warnings []string `json:"warnings,omitempty"`
}

// HybridStoragePolicyStatus is what the operator observed and decided.
type HybridStoragePolicyStatus struct {
	// conditions describe selection and provisioning progress.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// selectedNodes counts nodes the selector matched.
	// +optional
	SelectedNodes int32 `json:"selectedNodes,omitempty"`
	// readyNodes counts selected nodes with at least one fast and one capacity device chosen.
	// +optional
	ReadyNodes int32 `json:"readyNodes,omitempty"`
	// nodes is the per-node selection, sorted by node name. Above 100 selected nodes only the
	// nodes with a problem or warning are listed (at most 100), so the object stays small; every
	// node's plan is in its StorageNode.
	// +optional
	// +listType=map
	// +listMapKey=node
	// +kubebuilder:validation:MaxItems=100
	Nodes []NodeSelection `json:"nodes,omitempty"`
	// omittedNodes counts selected nodes not listed in nodes.
	// +optional
	OmittedNodes int32 `json:"omittedNodes,omitempty"`
}

// HybridStoragePolicy pairs fast, high-endurance devices with dense QLC devices on selected nodes.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=hsp,categories=prism
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.selectedNodes`
// +kubebuilder:printcolumn:name="Ready Nodes",type=integer,JSONPath=`.status.readyNodes`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HybridStoragePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the user's intent.
	// +required
	Spec HybridStoragePolicySpec `json:"spec"`
	// status is what the operator observed and decided.
	// +optional
	Status HybridStoragePolicyStatus `json:"status,omitempty"`
}

// HybridStoragePolicyList is a list of HybridStoragePolicies.
// +kubebuilder:object:root=true
type HybridStoragePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HybridStoragePolicy `json:"items"`
}

func init() {
	register(&HybridStoragePolicy{}, &HybridStoragePolicyList{})
}
