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
// TestDBVolumesInGuest (db-volumes.sh, first pair only, no Ceph) runs the partitioner's volume
// phase (decision 0036, prism-apply-plan --db-volumes) with Debian 12's lvm2 run as the agent
// runs it, through nsenter into PID 1's mount and IPC namespaces: a DryRun that writes nothing,
// Apply stopped after every single step (--step-limit 1) until every DB slot has its VG and LV,
// a run with nothing to do, and a run that activates an LV deactivated with lvchange -an. It
// checks Prism's names and tags, the LV filling its partition, each LVM create command run once
// per slot, and device-mapper's table mapping each LV onto its partition. Then it removes that
// LV and kills lvcreate on entry to each of its writes (strace, decision 0039): each next pass
// must end with every volume Ready. The scripts share lib.sh (in the guest /prism/lib.sh).
//
// Run it as root (it installs qemu-system-x86, qemu-utils, debootstrap and cpio; the guest is
// cached in ~/.cache/prism/guest):
//
//	make test-guest     # = go test ./test/guest/ -count=1 -timeout 45m -v (both tests)
//	go test ./test/guest/ -run TestDBVolumesInGuest -count=1 -timeout 30m -v
//
// PRISM_GUEST_KEEP=1 keeps the work directory; PRISM_GUEST_RESULTS=DIR (rook-path.sh) and
// PRISM_GUEST_VOLUME_RESULTS=DIR (db-volumes.sh) re-check a kept run's share/out without a boot.
//
// See docs/provisioning.md ("Rook's exact path in a real kernel") for what it showed.
package guest
