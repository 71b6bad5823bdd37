package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageNodeSpec is the desired plan for one node, written only by the operator.
// +kubebuilder:validation:XValidation:rule="!has(self.plan) || (has(self.policyName) && has(self.mode))",message="a plan needs the policyName and mode of the policy that wrote it",fieldPath=".plan"
type StorageNodeSpec struct {
	// policyName is the HybridStoragePolicy that manages this node; empty when none does.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	PolicyName string `json:"policyName,omitempty"`
	// mode is the managing policy's mode: the agent changes the host only in Apply.
	// +optional
	Mode PolicyMode `json:"mode,omitempty"`
	// plan is what the agent realises on the node's fast devices. Absent: the agent touches nothing.
	// +optional
	Plan *NodePlan `json:"plan,omitempty"`
}

// NodePlan is the per-node layout: GPT partitions on each fast device, one BlueStore DB slot
// per capacity device (plus spares) and the rest as cache. It is atomic: the operator writes
// it whole as one decision, and no second writer may merge a part into it.
// +structType=atomic
// +kubebuilder:validation:XValidation:rule="!has(self.fastDevices) || self.fastDevices.all(i, f, !has(f.cacheID) || self.fastDevices.all(j, g, j == i || !has(g.cacheID) || g.cacheID != f.cacheID))",messageExpression="'fastDevices[%d].cacheID is used by another fast device of the node'.format([self.fastDevices.transformList(i, f, has(f.cacheID) && self.fastDevices.exists(j, g, j != i && has(g.cacheID) && g.cacheID == f.cacheID), i)[0]])",fieldPath=".fastDevices"
// +kubebuilder:validation:XValidation:rule="!has(self.fastDevices) || !has(oldSelf.fastDevices) || self.fastDevices.all(f, !oldSelf.fastDevices.exists(o, o.stablePath == f.stablePath && has(o.slots) && o.slotSizeBytes != f.slotSizeBytes))",messageExpression="'fastDevices[%d].slotSizeBytes cannot change once the device has slots: its partitions exist, and re-creating them means re-creating the OSDs (docs/runbooks/replace-fast-device.md)'.format([self.fastDevices.transformList(i, f, oldSelf.fastDevices.exists(o, o.stablePath == f.stablePath && has(o.slots) && o.slotSizeBytes != f.slotSizeBytes), i)[0]])",fieldPath=".fastDevices"
type NodePlan struct {
	// fastDevices lists each fast device and the partitions it carries.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(i, f, i == 0 || self[i-1].stablePath < f.stablePath)",messageExpression="'fastDevices[%d]: fast devices must be sorted by stablePath, each once'.format([self.transformList(i, f, i > 0 && self[i-1].stablePath >= f.stablePath, i)[0]])"
	FastDevices []FastDevicePlan `json:"fastDevices,omitempty"`
	// allowWipe lists the stable paths of devices on this node the policy allows Prism to wipe.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=512
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^/dev/disk/by-(id|path)/[A-Za-z0-9_#+:=@\\-][A-Za-z0-9_#+:=@.\\-]*$`
	AllowWipe []string `json:"allowWipe,omitempty"`
	// cache is the cache each fast device runs on its cache partition; absent when the policy's
	// cache mode is None (a running cache is then flushed and stopped).
	// +optional
	Cache *NodeCachePlan `json:"cache,omitempty"`
}

// FastDevicePlan is the GPT layout of one fast device: slot i is partition i+1 at
// 1 MiB + i x slotSizeBytes, and the cache partition follows the last slot.
// +kubebuilder:validation:XValidation:rule="!has(self.slots) || self.slots.all(s, s.partition.sizeBytes == self.slotSizeBytes)",messageExpression="'slots[%d].partition.sizeBytes must equal slotSizeBytes (%d)'.format([self.slots.transformList(i, s, s.partition.sizeBytes != self.slotSizeBytes, i)[0], self.slotSizeBytes])",fieldPath=".slots"
// +kubebuilder:validation:XValidation:rule="!has(self.slots) || self.slots.all(s, s.partition.startBytes == 1048576 + s.index * self.slotSizeBytes)",messageExpression="'slots[%d].partition.startBytes must be 1 MiB + index x slotSizeBytes: slots never overlap and never move'.format([self.slots.transformList(i, s, s.partition.startBytes != 1048576 + s.index * self.slotSizeBytes, i)[0]])",fieldPath=".slots"
// +kubebuilder:validation:XValidation:rule="!has(self.slots) || self.slots.all(s, !has(s.dataDevice) || s.dataDevice != self.stablePath)",message="a slot's dataDevice cannot be the fast device itself",fieldPath=".slots"
// +kubebuilder:validation:XValidation:rule="!has(self.cache) || !has(self.slots) || self.slots.all(s, s.partition.startBytes + s.partition.sizeBytes <= self.cache.startBytes && s.partition.number < self.cache.number)",message="the cache partition must follow the last slot, with a higher partition number",fieldPath=".cache"
// +kubebuilder:validation:XValidation:rule="!has(self.cache) || self.cache.label == 'prism-cache'",message="the cache partition's label must be prism-cache",fieldPath=".cache.label"
type FastDevicePlan struct {
	// stablePath is the fast device's /dev/disk/by-id path.
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/dev/disk/by-(id|path)/[A-Za-z0-9_#+:=@\\-][A-Za-z0-9_#+:=@.\\-]*$`
	StablePath string `json:"stablePath"`
	// identity is the fast device's identity (without diskSeq) when it was first planned: the
	// agent writes only a device that reports the same, whatever its by-id name.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.diskSeq)",message="a plan's identity carries no diskSeq, which changes at every boot"
	Identity *DeviceIdentity `json:"identity,omitempty"`
	// slotSizeBytes is the size of every DB slot on this device; fixed once slots exist.
	// +required
	// +kubebuilder:validation:Minimum=2147483648
	// +kubebuilder:validation:Maximum=70368744177664
	// +kubebuilder:validation:MultipleOf=1048576
	SlotSizeBytes int64 `json:"slotSizeBytes"`
	// slots are the DB slots, by index; slot i is partition i+1 at a fixed offset.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=127
	// +kubebuilder:validation:XValidation:rule="self.all(i, s, i == 0 || self[i-1].index < s.index)",messageExpression="'slots[%d]: slots must be sorted by index, each once'.format([self.transformList(i, s, i > 0 && self[i-1].index >= s.index, i)[0]])"
	Slots []DBSlot `json:"slots,omitempty"`
	// cache is the partition after the last slot, used as the Open CAS cache; absent when the cache is off.
	// +optional
	Cache *PlannedPartition `json:"cache,omitempty"`
	// cacheID is the casadm id of the cache on this device, stable for the device's life.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16384
	CacheID int32 `json:"cacheID,omitempty"`
}

// PlannedPartition is one GPT partition Prism creates.
type PlannedPartition struct {
	// number is the GPT partition number.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=128
	Number int32 `json:"number"`
	// label is the GPT partition name, which marks the partition as Prism's.
	// +required
	// +kubebuilder:validation:MaxLength=36
	// +kubebuilder:validation:Pattern=`^prism-[a-z0-9-]+$`
	Label string `json:"label"`
	// startBytes is the partition's offset on the device, after the GPT's first MiB and
	// aligned to a MiB.
	// +required
	// +kubebuilder:validation:Minimum=1048576
	// +kubebuilder:validation:Maximum=1152921504606846976
	// +kubebuilder:validation:MultipleOf=1048576
	StartBytes int64 `json:"startBytes"`
	// sizeBytes is the partition's size, a whole number of MiB.
	// +required
	// +kubebuilder:validation:Minimum=1048576
	// +kubebuilder:validation:Maximum=1152921504606846976
	// +kubebuilder:validation:MultipleOf=1048576
	SizeBytes int64 `json:"sizeBytes"`
}

// DBSlot is a partition that holds one OSD's BlueStore DB (and its WAL, co-located).
// +kubebuilder:validation:XValidation:rule="self.partition.number == self.index + 1 && self.partition.label == (self.index < 10 ? 'prism-db-0%d' : 'prism-db-%d').format([self.index])",messageExpression="'slot %d must be partition %d labelled %s'.format([self.index, self.index + 1, (self.index < 10 ? 'prism-db-0%d' : 'prism-db-%d').format([self.index])])",fieldPath=".partition"
type DBSlot struct {
	// index is the slot number on the fast device, from 0.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=126
	Index int32 `json:"index"`
	// partition is where the slot lives.
	// +required
	Partition PlannedPartition `json:"partition"`
	// dataDevice is the stable path of the capacity device whose DB the slot holds; empty for a spare slot.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/dev/disk/by-(id|path)/[A-Za-z0-9_#+:=@\\-][A-Za-z0-9_#+:=@.\\-]*$`
	DataDevice string `json:"dataDevice,omitempty"`
}

// SignatureKind names a family of on-disk signatures that marks a device as holding data.
// +kubebuilder:validation:Enum=PartitionTable;Filesystem;LVM;CephBlueStore;OpenCAS;Swap;RAID;Other
type SignatureKind string

// Signature kinds the agent detects.
const (
	SignaturePartitionTable SignatureKind = "PartitionTable"
	SignatureFilesystem     SignatureKind = "Filesystem"
	SignatureLVM            SignatureKind = "LVM"
	SignatureCephBlueStore  SignatureKind = "CephBlueStore"
	SignatureOpenCAS        SignatureKind = "OpenCAS"
	SignatureSwap           SignatureKind = "Swap"
	SignatureRAID           SignatureKind = "RAID"
	SignatureOther          SignatureKind = "Other"
)

// DeviceSignature is one on-disk signature found on a device.
type DeviceSignature struct {
	// kind is the family of the signature.
	// +required
	Kind SignatureKind `json:"kind"`
	// name is the specific format, as blkid names it (gpt, dos, xfs, LVM2_member, ceph_bluestore...).
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`
	// offsetBytes is where on the device the signature was found.
	// +optional
	OffsetBytes int64 `json:"offsetBytes,omitempty"`
}

// RatedEndurance is the vendor's write endurance rating for a drive model.
type RatedEndurance struct {
	// dwpd is the rated drive writes per day over the warranty period, as a decimal string ("0.58").
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	DWPD string `json:"dwpd,omitempty"`
	// tbwTerabytes is the rated total terabytes written, as a decimal string ("14000").
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	TBWTerabytes string `json:"tbwTerabytes,omitempty"`
	// warrantyYears is the warranty period the rating applies to.
	// +optional
	// +kubebuilder:validation:Minimum=0
	WarrantyYears int32 `json:"warrantyYears,omitempty"`
	// source is where the rating was published (drive database row).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Source string `json:"source,omitempty"`
}

// Eligibility says whether Prism may use a device, and if not, why.
type Eligibility struct {
	// eligible is true when every eligibility filter accepted the device.
	// +required
	Eligible bool `json:"eligible"`
	// reasons lists each filter that rejected the device, with a message.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Reasons []EligibilityReason `json:"reasons,omitempty"`
}

// EligibilityReason is one filter's rejection of a device.
type EligibilityReason struct {
	// filter is the name of the filter that rejected the device (HasSignatures, HasPartitions, ...).
	// +required
	// +kubebuilder:validation:MaxLength=64
	Filter string `json:"filter"`
	// message explains the rejection for humans.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}

// Device is one whole block device as the node agent observed it.
type Device struct {
	// name is the kernel name (nvme0n1, sda).
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`
	// path is the kernel device path (/dev/nvme0n1); it can change across reboots.
	// +required
	// +kubebuilder:validation:MaxLength=256
	Path string `json:"path"`
	// stablePath is a /dev/disk/by-id path that survives reboots; empty when udev published none.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	StablePath string `json:"stablePath,omitempty"`
	// identity is what the kernel reports of the device itself (WWID, serial, a loop device's
	// file, diskseq), read at this inventory: the agent compares it with the device it holds
	// just before every write, so that a kernel name or a by-id link that now leads to another
	// device is never written.
	// +optional
	Identity *DeviceIdentity `json:"identity,omitempty"`
	// model is the model string the device reports.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Model string `json:"model,omitempty"`
	// vendor is the vendor, from the drive database or the device.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Vendor string `json:"vendor,omitempty"`
	// serial is the device serial number.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Serial string `json:"serial,omitempty"`
	// firmware is the firmware revision.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Firmware string `json:"firmware,omitempty"`
	// sizeBytes is the capacity in bytes.
	// +required
	// +kubebuilder:validation:Minimum=0
	SizeBytes int64 `json:"sizeBytes"`
	// rotational is true for spinning media.
	// +optional
	Rotational bool `json:"rotational,omitempty"`
	// readOnly is true when the kernel marks the device read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
	// removable is true for removable media.
	// +optional
	Removable bool `json:"removable,omitempty"`
	// transport is how the device is attached (nvme, sata, sas, usb, virtio, loop...).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Transport string `json:"transport,omitempty"`
	// logicalBlockSizeBytes is the smallest addressable unit.
	// +optional
	LogicalBlockSizeBytes int32 `json:"logicalBlockSizeBytes,omitempty"`
	// physicalBlockSizeBytes is the smallest unit the device writes without read-modify-write, as the kernel reports it.
	// +optional
	PhysicalBlockSizeBytes int32 `json:"physicalBlockSizeBytes,omitempty"`
	// optimalIOSizeBytes is the kernel's optimal I/O size (NVMe NOWS); 0 when not reported.
	// +optional
	OptimalIOSizeBytes int64 `json:"optimalIOSizeBytes,omitempty"`
	// internalWriteUnitBytes is the flash's internal write (indirection) unit; small writes below it wear QLC fastest.
	// +optional
	InternalWriteUnitBytes int64 `json:"internalWriteUnitBytes,omitempty"`
	// internalWriteUnitSource says where internalWriteUnitBytes came from (nvme-npwg, drive-database).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	InternalWriteUnitSource string `json:"internalWriteUnitSource,omitempty"`
	// media is the storage medium from the drive database (3DXPoint, SLC, QLC, TLC, HDD); empty when unknown.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Media string `json:"media,omitempty"`
	// ratedEndurance is the vendor rating, when the model is in the drive database.
	// +optional
	RatedEndurance *RatedEndurance `json:"ratedEndurance,omitempty"`
	// signatures lists on-disk signatures found (partition table, filesystem, LVM, BlueStore, Open CAS...).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Signatures []DeviceSignature `json:"signatures,omitempty"`
	// nonZeroAtBytes is the offset of the first non-zero byte in the device's first and last
	// MiB when no signature explains it (plain dm-crypt, raw application data, a file system
	// under a wiped table); absent when both read zero or a signature was found.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NonZeroAtBytes *int64 `json:"nonZeroAtBytes,omitempty"`
	// partitions lists the kernel names of the device's partitions.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=64
	Partitions []string `json:"partitions,omitempty"`
	// holders lists the kernel devices stacked on top of this one (dm-0, md0, cas1-1), then
	// the processes other than the agent that hold it or one of its partitions open
	// ("pid 1234 (fusefat)", "partition 1: pid 1234 (sleep)").
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	Holders []string `json:"holders,omitempty"`
	// tier is the role Prism gives the device by default.
	// +required
	Tier Tier `json:"tier"`
	// tierReason says why the device got its tier.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	TierReason string `json:"tierReason"`
	// eligibility says whether Prism may use the device without wiping it.
	// +required
	Eligibility Eligibility `json:"eligibility"`
	// endurance summarises the device's wear, from its SMART counters and the agent's history.
	// +optional
	Endurance *DeviceEndurance `json:"endurance,omitempty"`
	// evidence is what the hardware itself reports about the drive (PCI IDs, NVMe Identify
	// granularities, the endurance group's rated endurance, where model and vendor came from),
	// whether or not the drive database knows the model.
	// +optional
	Evidence *DeviceEvidence `json:"evidence,omitempty"`
	// inferredTier is the tier the evidence points to, for a drive the drive database does not
	// know; tier stays Other. Policies use it only when a selector sets inferredTiers: Accept.
	// +optional
	InferredTier *InferredTier `json:"inferredTier,omitempty"`
}

// DeviceIdentity is what the kernel reports of a block device itself, not the name it gave it.
// +kubebuilder:validation:XValidation:rule="has(self.wwid) || has(self.serial) || has(self.backingFile) || has(self.diskSeq)",message="an identity names at least one of wwid, serial, backingFile, diskSeq"
type DeviceIdentity struct {
	// wwid is the device's world-wide identifier: an NVMe namespace's EUI-64, NGUID or UUID
	// ("eui.…", "nvme.…"), a SCSI disk's VPD page 83 name ("naa.…").
	// +optional
	// +kubebuilder:validation:MaxLength=256
	WWID string `json:"wwid,omitempty"`
	// serial is the serial number the device reports to the kernel.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Serial string `json:"serial,omitempty"`
	// backingFile is a loop device's backing file.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	BackingFile string `json:"backingFile,omitempty"`
	// diskSeq is the kernel's sequence number of the disk (Linux 5.15 on), new for every device
	// the kernel creates: a kernel name reused by another device comes with another number. It
	// changes at every boot, so plans never carry it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	DiskSeq int64 `json:"diskSeq,omitempty"`
}

// DeviceEvidence is what a drive reports about itself, independent of the drive database.
type DeviceEvidence struct {
	// modelSource says where model came from: nvme-identify, ata-identify, udev-ata (udev's
	// ata_id), udev-scsi (the SCSI INQUIRY through udev) or sysfs.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	ModelSource string `json:"modelSource,omitempty"`
	// modelMaybeCut is true when only a 16-character SCSI INQUIRY form of an ATA drive's model
	// was available (a SAS HBA, RAID controller or USB bridge without ATA IDENTIFY): the model
	// may be cut and is never matched against the drive database.
	// +optional
	ModelMaybeCut bool `json:"modelMaybeCut,omitempty"`
	// vendorSource says where vendor came from: drive-database, pci-ids (the NVMe controller's
	// PCI vendor in hwdata's pci.ids), ata-model (the ATA model's vendor prefix) or inquiry.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	VendorSource string `json:"vendorSource,omitempty"`
	// pciVendorID is the NVMe controller's PCI vendor ID (lower-case hex, "8086").
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{4}$`
	PCIVendorID string `json:"pciVendorID,omitempty"`
	// pciDeviceID is the NVMe controller's PCI device ID (lower-case hex).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{4}$`
	PCIDeviceID string `json:"pciDeviceID,omitempty"`
	// pciSubsystemVendorID is the PCI subsystem vendor ID (NVMe SSVID; the drive's maker when
	// another company's controller is inside).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{4}$`
	PCISubsystemVendorID string `json:"pciSubsystemVendorID,omitempty"`
	// preferredWriteGranularityBytes is NVMe NPWG × LBA size, when the namespace reports it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	PreferredWriteGranularityBytes int64 `json:"preferredWriteGranularityBytes,omitempty"`
	// preferredDeallocateGranularityBytes is NVMe NPDG × LBA size, when the namespace reports it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	PreferredDeallocateGranularityBytes int64 `json:"preferredDeallocateGranularityBytes,omitempty"`
	// optimalWriteSizeBytes is NVMe NOWS × LBA size, when the namespace reports it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	OptimalWriteSizeBytes int64 `json:"optimalWriteSizeBytes,omitempty"`
	// enduranceEstimateTBW is the endurance group's Endurance Estimate (log 09h) in terabytes
	// written, as a decimal string: the drive's own rated endurance.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	EnduranceEstimateTBW string `json:"enduranceEstimateTBW,omitempty"`
	// markers are facts that name the medium, each with its source ("PCI device 8086:2700 is
	// 'Optane SSD 900P Series' in pci.ids").
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=256
	Markers []string `json:"markers,omitempty"`
}

// InferenceConfidence says how strongly the evidence supports an inferred tier.
// +kubebuilder:validation:Enum=Low;Medium;High
type InferenceConfidence string

// Confidences of an inferred tier.
const (
	// ConfidenceLow: one indirect fact (a coarse write unit alone, or low endurance alone).
	ConfidenceLow InferenceConfidence = "Low"
	// ConfidenceMedium: two independent facts agree (a coarse write unit and low rated endurance).
	ConfidenceMedium InferenceConfidence = "Medium"
	// ConfidenceHigh: the hardware names its medium (an Optane PCI device) or reports
	// endurance only storage-class memory or SLC reaches (≥ 30 DWPD).
	ConfidenceHigh InferenceConfidence = "High"
)

// InferredTier is a tier inferred from a drive's evidence, with the reasons.
type InferredTier struct {
	// tier is the inferred tier (Fast or Capacity; no inference is made for Other).
	// +required
	Tier Tier `json:"tier"`
	// confidence says how strongly the evidence supports it.
	// +required
	Confidence InferenceConfidence `json:"confidence"`
	// reasons are the facts the inference rests on, each with its figure.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=256
	Reasons []string `json:"reasons"`
}

// DeviceEndurance is a device's wear at the last collection (details in the agent's metrics).
type DeviceEndurance struct {
	// percentUsed is the share of rated endurance used as the drive reports it (NVMe may exceed 100).
	// +optional
	PercentUsed *int32 `json:"percentUsed,omitempty"`
	// hostWrittenBytes is what the host wrote over the drive's life.
	// +optional
	HostWrittenBytes int64 `json:"hostWrittenBytes,omitempty"`
	// writeAmplification is media bytes written / host bytes written, as a decimal string ("1.82").
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	WriteAmplification string `json:"writeAmplification,omitempty"`
	// dwpdLifetime is host bytes written / capacity / power-on days, as a decimal string.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	DWPDLifetime string `json:"dwpdLifetime,omitempty"`
	// wearOutTime is the projected wear-out date; absent with too little history or no wear.
	// +optional
	WearOutTime *metav1.Time `json:"wearOutTime,omitempty"`
	// warrantyEndTime is when the warranty ends (power-on start + warranty years).
	// +optional
	WarrantyEndTime *metav1.Time `json:"warrantyEndTime,omitempty"`
}

// StorageNodeStatus is what the node's agent observed. Only that node's agent writes it.
type StorageNodeStatus struct {
	// conditions describe the node's inventory and plan state.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// lastInventoryTime is when the agent last read the node's devices.
	// +optional
	LastInventoryTime *metav1.Time `json:"lastInventoryTime,omitempty"`
	// agentVersion is the version of the agent that wrote this status.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	AgentVersion string `json:"agentVersion,omitempty"`

	// Lists the agent or the operator always writes whole are atomic: as maps, the API server
	// would track every item's fields in managedFields, which doubled the object (decision 0015).

	// devices are the node's whole block devices.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	// +kubebuilder:validation:XValidation:rule="self.all(i, d, i == 0 || self[i-1].name < d.name)",message="devices must be sorted by name, each once"
	Devices []Device `json:"devices,omitempty"`
	// fastDevices counts devices in the Fast tier.
	// +optional
	FastDevices int32 `json:"fastDevices,omitempty"`
	// capacityDevices counts devices in the Capacity tier.
	// +optional
	CapacityDevices int32 `json:"capacityDevices,omitempty"`
	// eligibleDevices counts devices every eligibility filter accepted.
	// +optional
	EligibleDevices int32 `json:"eligibleDevices,omitempty"`
	// partitions reports each planned partition as the agent found or made it, sorted by
	// device then number, each once: the operator gives a DB slot to another data device on
	// this report alone (decision 0037), so a second entry for one partition cannot hide the
	// first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:XValidation:rule="self.all(i, p, i == 0 || self[i-1].device < p.device || (self[i-1].device == p.device && self[i-1].number < p.number))",messageExpression="'partitions[%d]: partitions must be sorted by device then number, each once'.format([self.transformList(i, p, i > 0 && !(self[i-1].device < p.device || (self[i-1].device == p.device && self[i-1].number < p.number)), i)[0]])"
	Partitions []PartitionStatus `json:"partitions,omitempty"`
	// observedPlanGeneration is the StorageNode generation whose plan the partitions reflect.
	// +optional
	ObservedPlanGeneration int64 `json:"observedPlanGeneration,omitempty"`
	// caches reports each fast device's cache, its cores and per-class statistics, sorted by
	// fastDevice, each once, and no two started caches with one cacheID: the operator gives
	// Rook a cached OSD's device from this report alone (a Ready core's exportedObject), so a
	// second entry cannot hide the first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(i, c, i == 0 || self[i-1].fastDevice < c.fastDevice)",messageExpression="'caches[%d]: caches must be sorted by fastDevice, each once'.format([self.transformList(i, c, i > 0 && self[i-1].fastDevice >= c.fastDevice, i)[0]])"
	// +kubebuilder:validation:XValidation:rule="!self.exists(i, c, has(c.cacheID) && c.cacheID != 0 && self.exists(j, d, j < i && has(d.cacheID) && d.cacheID == c.cacheID))",messageExpression="'caches[%d].cacheID %d is reported for another fast device of the node too'.format([self.transformList(i, c, has(c.cacheID) && c.cacheID != 0 && self.exists(j, d, j < i && has(d.cacheID) && d.cacheID == c.cacheID), i)[0], self.transformList(i, c, has(c.cacheID) && c.cacheID != 0 && self.exists(j, d, j < i && has(d.cacheID) && d.cacheID == c.cacheID), c.cacheID)[0]])"
	Caches []CacheStatus `json:"caches,omitempty"`
	// cacheWriteReduction is the node's α_cache over all its caches: 1 − writes that reached the
	// capacity devices ÷ writes to the exported objects (decimal string; empty before any write).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	CacheWriteReduction string `json:"cacheWriteReduction,omitempty"`
	// osds summarises each Ceph OSD whose admin socket is on the node (the per-OSD table,
	// docs/osd-table.md), sorted by id, each once.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:XValidation:rule="self.all(i, o, i == 0 || self[i-1].id < o.id)",messageExpression="'osds[%d]: osds must be sorted by id, each once'.format([self.transformList(i, o, i > 0 && self[i-1].id >= o.id, i)[0]])"
	OSDs []OSDStatus `json:"osds,omitempty"`
}

// PartitionState says where a planned partition stands.
// +kubebuilder:validation:Enum=Ready;Pending;Refused;Failed
type PartitionState string

// Partition states.
const (
	// PartitionReady: the partition exists exactly as planned.
	PartitionReady PartitionState = "Ready"
	// PartitionPending: not created yet (DryRun, or waiting for an earlier step).
	PartitionPending PartitionState = "Pending"
	// PartitionRefused: the agent will not create it without a wipe grant (the device holds
	// data it did not create, or a different partition is in the way).
	PartitionRefused PartitionState = "Refused"
	// PartitionFailed: a host tool failed; the agent retries.
	PartitionFailed PartitionState = "Failed"
)

// PartitionStatus is one planned partition as observed on the node.
// +kubebuilder:validation:XValidation:rule="!has(self.dbContent) || self.dbContent != 'Empty' || !has(self.dbFound) || size(self.dbFound) == 0",message="a DB slot reported Empty lists no signature in dbFound",fieldPath=".dbContent"
type PartitionStatus struct {
	// device is the fast device's stable path.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Device string `json:"device"`
	// number is the GPT partition number.
	// +required
	Number int32 `json:"number"`
	// label is the GPT partition name.
	// +required
	// +kubebuilder:validation:MaxLength=36
	Label string `json:"label"`
	// path is the partition's stable path (<device>-part<number>).
	// +optional
	// +kubebuilder:validation:MaxLength=520
	Path string `json:"path,omitempty"`
	// state is where the partition stands.
	// +required
	State PartitionState `json:"state"`
	// message explains a Pending, Refused or Failed state.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// volume is the LVM logical volume the agent makes on a DB slot partition for the OSD's
	// DB (decision 0036); absent on a cache partition, and on a DB slot while the partition is
	// not Ready or the agent makes no volumes.
	// +optional
	Volume *DBVolumeStatus `json:"volume,omitempty"`
	// dbContent is what a DB slot holds, as the agent read it at its last pass: its volume
	// when the volume is Ready, else the partition's range. Empty: libblkid and Prism's
	// detector find no signature (no OSD's DB). InUse: they find one (dbFound names it; a
	// BlueStore label is an OSD's DB). Absent on cache partitions and when the agent could not
	// read it. The operator gives a slot to another data device only when it is Empty: an
	// OSD's DB is never handed to a new OSD (docs/runbooks/replace-data-disk.md).
	// +optional
	DBContent DBSlotContent `json:"dbContent,omitempty"`
	// dbFound lists the signatures found on an InUse DB slot (libblkid's names:
	// ceph_bluestore, LVM2_member, ...).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DBFound string `json:"dbFound,omitempty"`
}

// DBSlotContent says whether a DB slot holds anything (PartitionStatus.DBContent).
// +kubebuilder:validation:Enum=Empty;InUse
type DBSlotContent string

const (
	// DBSlotEmpty: no signature on the slot; a new OSD may take it.
	DBSlotEmpty DBSlotContent = "Empty"
	// DBSlotInUse: a signature on the slot (an OSD's BlueStore label, or anything else).
	DBSlotInUse DBSlotContent = "InUse"
)

// DBVolumeState says where a DB slot's logical volume stands.
// +kubebuilder:validation:Enum=Ready;Pending;Refused;Failed;PartitionInUse
type DBVolumeState string

const (
	// DBVolumeReady: Prism's logical volume fills the partition and is active.
	DBVolumeReady DBVolumeState = "Ready"
	// DBVolumePending: not made yet (DryRun, or waiting for an earlier step).
	DBVolumePending DBVolumeState = "Pending"
	// DBVolumeRefused: the partition or the volume names hold LVM that is not Prism's.
	DBVolumeRefused DBVolumeState = "Refused"
	// DBVolumeFailed: an LVM command or the observation failed.
	DBVolumeFailed DBVolumeState = "Failed"
	// DBVolumePartitionInUse: the partition itself is an OSD's DB (prepared from the partition
	// before Prism made volumes): no volume is made and the Rook entry keeps naming the
	// partition.
	DBVolumePartitionInUse DBVolumeState = "PartitionInUse"
)

// DBVolumeStatus is a DB slot's logical volume as the agent last saw it.
type DBVolumeStatus struct {
	// path is the logical volume's device path, /dev/<vg>/<lv> (DBVolumePath).
	// +required
	// +kubebuilder:validation:MaxLength=260
	Path string `json:"path"`
	// sizeBytes is the logical volume's size once it exists: the OSD's DB size.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SizeBytes int64 `json:"sizeBytes,omitempty"`
	// state is where the volume stands.
	// +required
	State DBVolumeState `json:"state"`
	// message explains the state.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// StorageNode holds one Kubernetes node's storage inventory (status, from the node agent)
// and Prism's plan for it (spec, from the operator). Its name is the node's name.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=sn;snode,categories=prism
// +kubebuilder:printcolumn:name="Fast",type=integer,JSONPath=`.status.fastDevices`
// +kubebuilder:printcolumn:name="Capacity",type=integer,JSONPath=`.status.capacityDevices`
// +kubebuilder:printcolumn:name="Eligible",type=integer,JSONPath=`.status.eligibleDevices`
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policyName`
// +kubebuilder:printcolumn:name="Inventoried",type=string,JSONPath=`.status.conditions[?(@.type=="Inventoried")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the operator's plan for the node.
	// +optional
	Spec StorageNodeSpec `json:"spec,omitempty"`
	// status is the agent's observation of the node.
	// +optional
	Status StorageNodeStatus `json:"status,omitempty"`
}

// StorageNodeList is a list of StorageNodes.
// +kubebuilder:object:root=true
type StorageNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageNode `json:"items"`
}

func init() {
	register(&StorageNode{}, &StorageNodeList{})
}
