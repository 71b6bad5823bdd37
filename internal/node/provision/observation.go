package provision

import (
	"fmt"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/blkid"
	"github.com/prism-storage/prism/internal/host/gpt"
)

// Observation is what Decide knows of one fast device, all read fresh from the host just
// before the decision (never taken from the inventory, which may be minutes old).
type Observation struct {
	// Device is the inventory record with fresh Signatures (Prism's detector on the whole
	// device), Partitions (the kernel's), Holders and ReadOnly.
	Device prismv1.Device
	// Disk is the GPT area as read by Prism: both copies, the MBR, which regions are zero.
	Disk gpt.Disk
	// Probe is what libblkid finds on the whole device (wipefs --no-act and blkid --probe).
	Probe []blkid.Signature
	// Mounts are the mounts of the device or any of its partitions ("/mnt on nvme0n1p1").
	Mounts []string
	// Users are the processes other than the agent that hold the whole device open
	// ("pid 1234 (fusefat)").
	Users []string
	// PartitionHolders are the devices stacked on each kernel partition and the processes
	// other than the agent that hold it open, by number.
	PartitionHolders map[int][]string
	// PartitionDev is each kernel partition's device number, "major:minor" (sysfs), by number.
	PartitionDev map[int]string
	// Content is what each planned partition's byte range holds, by partition number.
	Content map[int]Content
	// Whole is the sparse read of the whole device, made when a decision on an ungranted
	// device without a table would write the first one (readNewSpace): that table is
	// written only over a device whose every sample is zero. Nil when not read.
	Whole *Sparse
}

// Content is what a byte range holds: the signatures libblkid and Prism's detector find in
// it, the first non-zero byte of its head and tail (HeadSpan and the last MiB), and for a
// range the table is to grow into, its sparse read.
type Content struct {
	// Found lists the signatures' names (blkid's TYPE, or the detector's name).
	Found []string
	// At is where Prism's detector found its signatures, from the range's start: what a
	// granted clear zeroes besides the head and tail (a BlueStore label replica at 1 GiB).
	At []int64
	// NonZeroAt is the offset, from the range's start, of the first non-zero byte in its head
	// or tail; -1 when both are zero.
	NonZeroAt int64
	// Sparse is the sparse read of the range, made when a decision on an ungranted device
	// would add the partition to the table (readNewSpace); nil when not read.
	Sparse *Sparse
}

// Empty reports whether nothing was found, head and tail are zeros, and so is every sample
// of the sparse read, if one was made.
func (c Content) Empty() bool {
	return len(c.Found) == 0 && c.NonZeroAt < 0 && (c.Sparse == nil || c.Sparse.Empty())
}

// clearable reports whether a granted clear of the range (clearRegions) has something to
// zero: what the probes found, or bytes in the head or tail. What only the sparse read sees is
// written over, not cleared: zeroing it sample by sample would never end.
func (c Content) clearable() bool { return len(c.Found) > 0 || c.NonZeroAt >= 0 }

func (c Content) String() string {
	var s []string
	if len(c.Found) > 0 {
		s = append(s, strings.Join(c.Found, ", "))
	}
	if c.NonZeroAt >= 0 {
		s = append(s, fmt.Sprintf("non-zero bytes at offset %d", c.NonZeroAt))
	}
	if c.Sparse != nil && !c.Sparse.Empty() {
		s = append(s, c.Sparse.String())
	}
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, " and ")
}

// allowedContent is what a Prism partition may hold besides nothing: what the OSD or the cache
// Prism planned there writes. A DB slot gets a BlueStore label (ceph-volume raw, and BlueFS
// on the LV of ceph-volume lvm) or an LVM physical volume (ceph-volume lvm); the cache
// partition gets Open CAS's metadata. Names are blkid's and the detector's spellings.
func allowedContent(w Want) map[string]bool {
	if w.TypeGUID == gpt.CephBlockDBTypeGUID {
		return map[string]bool{"ceph_bluestore": true, "LVM2_member": true}
	}
	return map[string]bool{"open_cas": true}
}

// foreignContent lists what a Prism partition holds that Prism's OSD or cache would not have
// put there; empty when its content is allowed (non-zero bytes are, once a known allowed
// format is found: an OSD's data follows its label).
func foreignContent(w Want, c Content) []string {
	allowed := allowedContent(w)
	var out []string
	for _, f := range c.Found {
		if !allowed[f] {
			out = append(out, f)
		}
	}
	return out
}
