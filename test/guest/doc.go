// Package guest proves Rook's exact OSD path for Prism's layout in a real kernel. The host's
// kernel has no device-mapper, so test/ceph uses ceph-volume's raw mode; here a QEMU guest
// (hack/guest: Debian 12's kernel package and a debootstrap root, booted with TCG) has one.
//
// In the guest, NVMe-oF over TCP on loopback gives emulated NVMe disks the model strings of
// real drives (Optane P5800X, D5-P5316 QLC). Prism's own static binaries run there:
// `prism-agent inventory` classifies the drives, `kubectl-prism plan` plans DB slots from that
// inventory and a policy, and the agent's partitioner (provision.Runner, through
// test/guest/applyplan) creates them. Then, exactly as Rook v1.20.4 does for a partition
// metadataDevice, `ceph-volume lvm prepare --data <qlc> --block.db <slot>`; for comparison,
// Rook's whole-disk path `ceph-volume lvm batch ... --db-devices <fast>` on a second pair. A
// mon and both OSDs start, and the test checks what Ceph's own tools report.
//
// Run it as root (it installs qemu-system-x86, qemu-utils, debootstrap and cpio; the guest is
// cached in ~/.cache/prism/guest):
//
//	make test-guest     # = go test ./test/guest/ -count=1 -timeout 40m -v
//
// See docs/provisioning.md ("Rook's exact path in a real kernel") for what it showed.
package guest
