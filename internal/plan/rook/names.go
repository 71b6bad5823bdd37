package rook

// The names of Prism's local volumes for Rook PVC-based OSDs; volumes.go builds the objects.

// LocalStorageClass is the class of Prism's local volumes: no provisioner, and binding waits
// for the OSD prepare pod, as Kubernetes requires for local volumes.
const LocalStorageClass = "prism-local"

// Labels and annotations on Prism's local volumes.
const (
	// LabelPolicy names (LabelValue) the policy whose volumes these are: the record of which
	// device sets a policy manages.
	LabelPolicy = "prism.storage.io/policy"
	// LabelNode names (LabelValue) the node.
	LabelNode = "prism.storage.io/node"
	// LabelDeviceSet is the storageClassDeviceSet that claims the volume.
	LabelDeviceSet = "prism.storage.io/device-set"
	// LabelRole is data or metadata, as Rook names its claim templates.
	LabelRole = "prism.storage.io/role"
	// LabelVolume is the volume's own name: the claim template selects exactly one volume.
	LabelVolume = "prism.storage.io/volume"
	// AnnotationNode is the full node name.
	AnnotationNode = "prism.storage.io/node"
	// AnnotationDevice is the stable path of the device behind the volume.
	AnnotationDevice = "prism.storage.io/device"
	// RoleData and RoleMetadata are Rook's claim template names for BlueStore's block and block.db.
	RoleData     = "data"
	RoleMetadata = "metadata"
)

// VolumeName is the name of one of a device set's two local volumes.
func VolumeName(set, role string) string { return set + "-" + role }
