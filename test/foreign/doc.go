// Package foreign holds a root-only test suite that puts foreign content on real loop
// devices and runs the agent's real partitioner (internal/node/provision's Runner.Reconcile, with
// the host executor) on a plan that treats each device as a fast device, in Apply mode and
// without a wipe grant. The rule it checks is the one of issue 19: no device with any
// recognised signature, mount, holder or non-zero bytes where Prism would write is ever
// written without a grant; and of issue 29: no device in use (mounted, held, or held open by
// a process) is ever written, grant or not.
//
//   - TestForeignFormats: every format the Debian tools here can make (file systems, images,
//     LVM, md RAID, LUKS, bcache, cluster file systems, partition tables, random bytes) on
//     the whole device. Every planned partition must be Refused, the message must name what
//     blkid -p names (TYPE, or PTTYPE for a bare partition table), and the whole device must
//     be byte-identical afterwards.
//   - TestForeignMounted: the same formats mounted read-only and read-write (kernel driver or
//     FUSE, whichever this machine has), an active swap and a device-mapper holder. A file
//     written through the mount must read back unchanged.
//   - TestForeignInUse: devices a process holds open and nothing else shows (issue 29):
//     vfat mounted with fusefat and iso9660 with fuseiso under a wipe grant (the file read
//     through the mount must be intact afterwards), and a sleeping child holding an empty
//     device, a device with data under a grant, or a foreign partition under a grant open.
//     Each must be Refused, naming the process ("held open by pid N (fusefat)").
//   - TestForeignInsidePrismLayout: foreign content inside Prism's own GPT (a prism-db-00
//     holding ext4, an extended plan on such a device), an old BlueStore label or random
//     bytes where a new partition would go, and a wipe grant for one of two devices.
//   - TestForeignInTheMiddle: an ext4 file system in the middle of a device (zero head and
//     tail, as a deleted second partition leaves one), with no table and in the range of a
//     slot Prism's table grows into: only the agent's sparse read sees it.
//
// "Byte-identical" is checked with a SHA-256 per MiB of the device, read through the loop
// device after an fsync of it; a MiB lying wholly in a hole of the sparse backing file reads
// as zeros by definition and is hashed as zeros without reading it (a full read of a 5 GiB
// sparse loop takes about 40 s here). TestDigestSeesEveryWrite checks that shortcut against
// a full read.
//
// Cases whose tool is missing skip and name the Debian package (hack/packages.txt lists them
// all, hack/install-deps.sh test installs them); cases the kernel cannot do (no md, no device-mapper, no driver for a
// file system and no FUSE alternative) skip and say so. Run it as root:
//
//	go test ./test/foreign/ -count=1 -v
package foreign
