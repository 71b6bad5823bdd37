package v1alpha1

// Tier is the role a device can play in a hybrid layout.
// +kubebuilder:validation:Enum=Fast;Capacity;Other
type Tier string

const (
	// TierFast is a high-endurance, low-latency device (3D XPoint/Optane, SLC, SCM):
	// it holds BlueStore DB/WAL slots and the cache.
	TierFast Tier = "Fast"
	// TierCapacity is a dense, low-endurance device (QLC) that holds bulk data.
	TierCapacity Tier = "Capacity"
	// TierOther is everything else (TLC, HDD, unknown models); selectors can still pick it.
	TierOther Tier = "Other"
)

// Condition types and reasons shared by the Prism kinds.
const (
	// ConditionReady summarises whether the object is fully reconciled.
	ConditionReady = "Ready"
	// ConditionInventoried says whether the node agent has published a fresh inventory.
	ConditionInventoried = "Inventoried"
	// ConditionNodesSelected says whether a policy matched nodes and devices.
	ConditionNodesSelected = "NodesSelected"
	// ConditionPlanned says whether a policy's layout could be planned on every node.
	ConditionPlanned = "Planned"
	// ConditionProvisioned says whether a node's planned partitions all exist.
	ConditionProvisioned = "Provisioned"
	// ConditionCached says whether a node's caches run as planned with every core ready.
	ConditionCached = "Cached"
	// ConditionRookConfigured says whether Prism's entries are in the target CephCluster.
	ConditionRookConfigured = "RookConfigured"
	// ConditionWearCountersRead says whether the agent's last poll read every device's wear
	// counters (SMART, log pages); False names the devices and sources it could not read.
	ConditionWearCountersRead = "WearCountersRead"
)
