// Package ceph holds a root-only test that proves Prism's layout on a real Ceph cluster:
// it plans DB slots with internal/plan for loop devices (one "fast", three "QLC"),
// partitions the fast device from that plan, bootstraps a single-node Ceph cluster on
// 127.0.0.1 in a temporary directory (mon, mgr, one OSD per QLC loop created with
// `ceph-volume raw prepare --block.db <slot partition>`), and checks with Ceph's own tools
// that every OSD has its DB on its planned slot, that bluestore_min_alloc_size from
// Prism's config section took effect at mkfs, and how a real workload's writes split
// between the fast and the slow devices. It installs Debian's ceph packages itself.
//
// Run it as root (about 2-4 minutes):
//
//	go test ./test/ceph/ -count=1 -timeout 15m -v
//
// See docs/provisioning.md for what it measured.
package ceph
