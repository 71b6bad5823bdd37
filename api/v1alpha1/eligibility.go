package v1alpha1

// Eligibility filter names: the agent publishes them in StorageNode status as the reason a
// device is not eligible.
const (
	FilterReadable      = "Readable"
	FilterNotReadOnly   = "NotReadOnly"
	FilterNotRemovable  = "NotRemovable"
	FilterMinimumSize   = "MinimumSize"
	FilterNoPartitions  = "NoPartitions"
	FilterNoHolders     = "NoHolders"
	FilterNoSignatures  = "NoSignatures"
	FilterHasStablePath = "HasStablePath"
)
