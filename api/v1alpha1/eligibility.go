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
	// FilterZeroHeadAndTail: the device's first and last MiB read zero, or a signature
	// explains what is there (NoSignatures then judges it).
	FilterZeroHeadAndTail = "ZeroHeadAndTail"
)

// PartialRecord says whether the device's inventory record is partial, and why: some read of
// it failed (an attribute, its udev record, its signatures, libblkid's probe), and the agent
// reported it all the same, the fields it could not read left empty or zero and the Readable
// filter saying which. Such a record proves nothing, neither that the device is empty nor that
// it changed.
func (d *Device) PartialRecord() (string, bool) {
	for _, r := range d.Eligibility.Reasons {
		if r.Filter == FilterReadable {
			return r.Message, true
		}
	}
	return "", false
}
