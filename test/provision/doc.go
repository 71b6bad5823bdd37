// Package provision holds a root-only test that runs internal/node/provision's Reconcile with the
// real host executor on real loop devices: it partitions an empty "fast" device as a plan
// from internal/plan says, resumes after a crash at every step, proves a third run only
// reads, refuses devices holding data (ext4, a foreign partition) without changing a byte,
// and wipes a device only when the plan grants it (and never while a partition is mounted).
// Independent tools check every result: sfdisk --json, blkid -p and the kernel's sysfs.
//
// Run it as root: go test ./test/provision/ -count=1 -v
package provision
