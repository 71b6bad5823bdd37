package v1alpha1

// Limits shared by the CRD schema and the planner. Kubebuilder markers cannot name a Go
// constant, so each marker or CEL rule repeats the value; internal/apivalidation's
// TestCRDLimitsAreTheGoConstants fails when a generated CRD and a constant disagree.
const (
	// MiB is the partition alignment: every planned partition starts and ends on a MiB.
	MiB int64 = 1 << 20
	// MinDBSlotBytes is the smallest DB slot Prism creates (spec.db.size minimum, StorageNode
	// slotSizeBytes minimum): RocksDB's write-ahead log alone preallocates up to 4 x 256 MiB
	// memtables' worth (Ceph's bluestore_rocksdb_options), and a WAL that does not fit lands
	// on the slow device.
	MinDBSlotBytes int64 = 2 << 30
	// MinDBSlotSize is MinDBSlotBytes as the quantity the CRD's CEL rule compares with.
	MinDBSlotSize = "2Gi"
	// MaxDBSlotBytes is the largest DB slot (spec.db.size, slotSizeBytes maximum).
	MaxDBSlotBytes int64 = 64 << 40
	// MaxDBSlotSize is MaxDBSlotBytes as a quantity.
	MaxDBSlotSize = "64Ti"
	// MaxDeviceSizeBytes bounds the device sizes a selector's size range names and a planned
	// partition's offset and size, so that sums of two never overflow int64.
	MaxDeviceSizeBytes int64 = 1 << 60
	// MaxDeviceSize is MaxDeviceSizeBytes as a quantity.
	MaxDeviceSize = "1Ei"
	// StablePathPattern is what a device path in a spec must look like: a udev by-id or
	// by-path link, one path element of udev's characters (\ starts udev's \x escapes), not
	// starting with a dot, so "..", "." and "/" cannot make it name another file.
	StablePathPattern = `^/dev/disk/by-(id|path)/[A-Za-z0-9_#+:=@\\-][A-Za-z0-9_#+:=@.\\-]*$`
)
