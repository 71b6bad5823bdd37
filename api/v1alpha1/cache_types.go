package v1alpha1

// CleaningPolicyName is Open CAS's cleaning policy: how dirty lines go back to the core.
// +kubebuilder:validation:Enum=Nop;Alru;Acp
type CleaningPolicyName string

// Cleaning policies (casadm nop, alru, acp).
const (
	CleaningNop  CleaningPolicyName = "Nop"
	CleaningAlru CleaningPolicyName = "Alru"
	CleaningAcp  CleaningPolicyName = "Acp"
)

// CacheCleaning sets the cleaning policy and its parameters. Unset fields keep Open CAS's values.
// +kubebuilder:validation:XValidation:rule="!has(self.alru) || self.policy == 'Alru'",message="alru parameters need policy Alru"
// +kubebuilder:validation:XValidation:rule="!has(self.acp) || self.policy == 'Acp'",message="acp parameters need policy Acp"
type CacheCleaning struct {
	// policy is Nop (never clean: dirty data stays until a flush), Alru (clean idle lines,
	// Open CAS's default) or Acp (clean continuously, for steady write-back load).
	// +required
	Policy CleaningPolicyName `json:"policy"`
	// alru tunes the Alru policy.
	// +optional
	Alru *AlruCleaning `json:"alru,omitempty"`
	// acp tunes the Acp policy.
	// +optional
	Acp *AcpCleaning `json:"acp,omitempty"`
}

// AlruCleaning are casadm's cleaning-alru parameters.
type AlruCleaning struct {
	// wakeUpSeconds is the cleaner's sleep between runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	WakeUpSeconds *int32 `json:"wakeUpSeconds,omitempty"`
	// staleBufferSeconds is how long a line stays dirty before it may be cleaned.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	StaleBufferSeconds *int32 `json:"staleBufferSeconds,omitempty"`
	// flushMaxBuffers is how many dirty lines one run cleans.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	FlushMaxBuffers *int32 `json:"flushMaxBuffers,omitempty"`
	// activityThresholdMs is how long the cache must be idle before cleaning starts.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	ActivityThresholdMs *int32 `json:"activityThresholdMs,omitempty"`
}

// AcpCleaning are casadm's cleaning-acp parameters.
type AcpCleaning struct {
	// wakeUpMs is the cleaner's sleep between runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	WakeUpMs *int32 `json:"wakeUpMs,omitempty"`
	// flushMaxBuffers is how many dirty lines one run cleans.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	FlushMaxBuffers *int32 `json:"flushMaxBuffers,omitempty"`
}

// PromotionPolicyName is Open CAS's promotion policy: when a missed line enters the cache.
// +kubebuilder:validation:Enum=Always;Nhit
type PromotionPolicyName string

// Promotion policies (casadm always, nhit).
const (
	PromotionAlways PromotionPolicyName = "Always"
	PromotionNhit   PromotionPolicyName = "Nhit"
)

// CachePromotion sets the promotion policy.
// +kubebuilder:validation:XValidation:rule="!has(self.nhit) || self.policy == 'Nhit'",message="nhit parameters need policy Nhit"
type CachePromotion struct {
	// policy is Always (every miss is inserted) or Nhit (a line is inserted after
	// nhit.threshold accesses, so one-off reads do not evict hot lines).
	// +required
	Policy PromotionPolicyName `json:"policy"`
	// nhit tunes the Nhit policy.
	// +optional
	Nhit *NhitPromotion `json:"nhit,omitempty"`
}

// NhitPromotion are casadm's promotion-nhit parameters.
type NhitPromotion struct {
	// threshold is how many accesses promote a line.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000
	Threshold *int32 `json:"threshold,omitempty"`
	// triggerPercent is the cache occupancy from which the threshold applies.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	TriggerPercent *int32 `json:"triggerPercent,omitempty"`
}

// SequentialCutoffPolicy says when sequential streams bypass the cache.
// +kubebuilder:validation:Enum=Always;Full;Never
type SequentialCutoffPolicy string

// Sequential cut-off policies (casadm always, full, never).
const (
	SequentialCutoffAlways SequentialCutoffPolicy = "Always"
	SequentialCutoffFull   SequentialCutoffPolicy = "Full"
	SequentialCutoffNever  SequentialCutoffPolicy = "Never"
)

// SequentialCutoff sends sequential streams longer than the threshold straight to the core.
type SequentialCutoff struct {
	// policy is Always (cut off at the threshold), Full (only once the cache is full) or Never.
	// +required
	Policy SequentialCutoffPolicy `json:"policy"`
	// thresholdKiB is the stream length after which the cut-off applies.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4194181
	ThresholdKiB *int32 `json:"thresholdKiB,omitempty"`
}

// DirtyDataPolicy says whether Prism may drop dirty data it cannot flush.
// +kubebuilder:validation:Enum=Preserve;AllowLoss
type DirtyDataPolicy string

// Dirty data policies.
const (
	// DirtyDataPreserve never drops dirty data: a core whose device is gone stays in the cache
	// (and in opencas.conf) until it comes back, and a cache with such a core is not stopped.
	DirtyDataPreserve DirtyDataPolicy = "Preserve"
	// DirtyDataAllowLoss lets Prism remove an inactive core that still holds dirty data.
	DirtyDataAllowLoss DirtyDataPolicy = "AllowLoss"
)

// CacheSettings are the cache parameters every cache of a policy gets.
type CacheSettings struct {
	// cleaning sets the cleaning policy (write-back and write-only caches).
	// +optional
	Cleaning *CacheCleaning `json:"cleaning,omitempty"`
	// promotion sets the promotion policy.
	// +optional
	Promotion *CachePromotion `json:"promotion,omitempty"`
	// sequentialCutoff sets the sequential cut-off of every core.
	// +optional
	SequentialCutoff *SequentialCutoff `json:"sequentialCutoff,omitempty"`
	// dirtyData says whether Prism may drop dirty data that cannot be flushed.
	// +optional
	// +kubebuilder:default=Preserve
	DirtyData DirtyDataPolicy `json:"dirtyData,omitempty"`
}

// NodeCachePlan is the cache every fast device of the node runs on its cache partition, in
// front of the capacity devices whose DB slots it holds. It is absent when the cache is off.
// +kubebuilder:validation:XValidation:rule="self.mode != 'None'",message="a cache plan with mode None: leave plan.cache out instead",fieldPath=".mode"
// +kubebuilder:validation:XValidation:rule="!has(self.cleaning) || self.mode in ['WriteBack', 'WriteOnly']",messageExpression="'cleaning applies only to WriteBack and WriteOnly caches, not to ' + self.mode",fieldPath=".cleaning"
// +kubebuilder:validation:XValidation:rule="!has(self.dirtyData) || self.dirtyData == 'Preserve' || self.mode in ['WriteBack', 'WriteOnly']",messageExpression="'dirtyData AllowLoss applies only to WriteBack and WriteOnly caches, not to ' + self.mode",fieldPath=".dirtyData"
// +kubebuilder:validation:XValidation:rule="self.lineSizeKiB == oldSelf.lineSizeKiB",messageExpression="'lineSizeKiB is fixed at %d while the caches run: the plan drops its cache first'.format([oldSelf.lineSizeKiB])",fieldPath=".lineSizeKiB"
type NodeCachePlan struct {
	// mode is the cache mode.
	// +required
	Mode CacheMode `json:"mode"`
	// lineSizeKiB is the cache line size, fixed when a cache starts.
	// +required
	// +kubebuilder:validation:Enum=4;8;16;32;64
	LineSizeKiB int32 `json:"lineSizeKiB"`
	// The cleaning, promotion, sequential cut-off and dirty-data settings.
	CacheSettings `json:",inline"`
	// classificationPolicyName is the ClassificationPolicy the IO classes come from.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ClassificationPolicyName string `json:"classificationPolicyName,omitempty"`
	// ioClassCSV is that policy compiled to Open CAS's IO class file (casadm -C -C -f); empty
	// leaves the caches' classes as they are.
	// +optional
	// +kubebuilder:validation:MaxLength=40000
	IOClassCSV string `json:"ioClassCSV,omitempty"`
}

// CacheState says where one fast device's cache stands.
// +kubebuilder:validation:Enum=Running;Pending;Incomplete;Failed;Refused;Stopped
type CacheState string

// Cache states.
const (
	// CacheRunning: the cache runs as planned with every core active.
	CacheRunning CacheState = "Running"
	// CachePending: steps remain (DryRun, a missing partition, or a step that failed and is retried).
	CachePending CacheState = "Pending"
	// CacheIncomplete: the cache runs but a core device is missing.
	CacheIncomplete CacheState = "Incomplete"
	// CacheFailed: the cache device failed. IO to the exported objects that needs it fails
	// (see the cores' CacheFailed state); Prism changes nothing on the cache.
	CacheFailed CacheState = "Failed"
	// CacheRefused: Prism will not start or change the cache (see message).
	CacheRefused CacheState = "Refused"
	// CacheStopped: no cache is wanted and none runs.
	CacheStopped CacheState = "Stopped"
)

// CoreState says where one capacity device stands as a cache core.
// +kubebuilder:validation:Enum=Ready;Pending;CacheFailed;Inactive;Refused;Removing
type CoreState string

// Core states (internal/node/opencas's).
const (
	CoreReady   CoreState = "Ready"
	CorePending CoreState = "Pending"
	// CoreCacheFailed: the core's cache device failed. On the real Open CAS module IO
	// that needs the device fails with EIO (writes the IO classes would cache, reads of
	// cached blocks); only IO the cache passes through anyway reaches the core. No OSD is
	// placed on it.
	CoreCacheFailed CoreState = "CacheFailed"
	CoreInactive    CoreState = "Inactive"
	CoreRefused     CoreState = "Refused"
	CoreRemoving    CoreState = "Removing"
)

// CacheCoreStatus is one capacity device as a cache core.
// +kubebuilder:validation:XValidation:rule="self.state != 'Ready' || has(self.exportedObject)",message="a Ready core names its exportedObject: the operator gives it to Rook as the OSD's device",fieldPath=".exportedObject"
type CacheCoreStatus struct {
	// device is the capacity device's stable path.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Device string `json:"device"`
	// coreID is its casadm core id.
	// +optional
	CoreID int32 `json:"coreID,omitempty"`
	// exportedObject is the cached block device (/dev/cas<cache>-<core>) the OSD is created on.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ExportedObject string `json:"exportedObject,omitempty"`
	// state is where the core stands.
	// +required
	State CoreState `json:"state"`
	// message explains any state but Ready.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// IOClassUsage is one IO class's share of a cache, from casadm's statistics (4 KiB blocks
// converted to bytes).
type IOClassUsage struct {
	// id is the IO class id.
	// +required
	ID int32 `json:"id"`
	// name is the class name (its rule).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Name string `json:"name,omitempty"`
	// occupancyBytes is the cache space the class holds.
	// +optional
	OccupancyBytes int64 `json:"occupancyBytes,omitempty"`
	// dirtyBytes is the class's data not yet written to the core.
	// +optional
	DirtyBytes int64 `json:"dirtyBytes,omitempty"`
	// writtenBytes are the class's writes to the exported objects since the cache started.
	// +optional
	WrittenBytes int64 `json:"writtenBytes,omitempty"`
	// writeInvalidation is β = writtenBytes ÷ occupancyBytes: how many times over the class
	// rewrote the space it holds (decimal string; empty when it holds none).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	WriteInvalidation string `json:"writeInvalidation,omitempty"`
}

// CacheStatus is one fast device's cache as the agent observed it. A Ready core's exported
// object is /dev/cas<cacheID>-<coreID>, as Open CAS names it: one that is not would put the
// OSD on another core's disk.
// +kubebuilder:validation:XValidation:rule="!has(self.cacheID) || self.cacheID == 0 || !has(self.cores) || !self.cores.exists(k, k.state == 'Ready' && has(k.exportedObject) && k.exportedObject != '/dev/cas%d-%d'.format([self.cacheID, has(k.coreID) ? k.coreID : 0]))",messageExpression="'cores[%d].exportedObject %s is not /dev/cas%d-%d: Open CAS exports a Ready core under its cache and core ids'.format([self.cores.transformList(i, k, k.state == 'Ready' && has(k.exportedObject) && k.exportedObject != '/dev/cas%d-%d'.format([self.cacheID, has(k.coreID) ? k.coreID : 0]), i)[0], self.cores.filter(k, k.state == 'Ready' && has(k.exportedObject) && k.exportedObject != '/dev/cas%d-%d'.format([self.cacheID, has(k.coreID) ? k.coreID : 0]))[0].exportedObject, self.cacheID, self.cores.filter(k, k.state == 'Ready' && has(k.exportedObject) && k.exportedObject != '/dev/cas%d-%d'.format([self.cacheID, has(k.coreID) ? k.coreID : 0])).map(k, has(k.coreID) ? k.coreID : 0)[0]])",fieldPath=".cores"
type CacheStatus struct {
	// fastDevice is the fast device's stable path.
	// +required
	// +kubebuilder:validation:MaxLength=512
	FastDevice string `json:"fastDevice"`
	// cacheID is the casadm cache id (0 before the cache starts).
	// +optional
	CacheID int32 `json:"cacheID,omitempty"`
	// state is where the cache stands.
	// +required
	State CacheState `json:"state"`
	// message explains any state but Running, or lists refusals.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
	// cores are the capacity devices behind this cache, sorted by device, each once.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:XValidation:rule="self.all(i, k, i == 0 || self[i-1].device < k.device)",messageExpression="'cores[%d]: cores must be sorted by device, each once'.format([self.transformList(i, k, i > 0 && self[i-1].device >= k.device, i)[0]])"
	Cores []CacheCoreStatus `json:"cores,omitempty"`
	// exportedWrittenBytes are the writes to this cache's exported objects (what the OSDs wrote).
	// +optional
	ExportedWrittenBytes int64 `json:"exportedWrittenBytes,omitempty"`
	// coreWrittenBytes are the writes that reached the capacity devices (through, around or
	// cleaned back).
	// +optional
	CoreWrittenBytes int64 `json:"coreWrittenBytes,omitempty"`
	// writeReduction is α_cache = 1 − coreWrittenBytes ÷ exportedWrittenBytes: the share of the OSDs'
	// writes this cache kept off the capacity devices (decimal string; empty before any write).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	WriteReduction string `json:"writeReduction,omitempty"`
	// ioClasses are the per-class statistics.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=33
	IOClasses []IOClassUsage `json:"ioClasses,omitempty"`
}
