// Package defaults holds the evidence behind Prism's default PRISM classifier
// policies: a parser for the kernel's block_bio_queue tracepoint (what Open
// CAS's classifier sees of each bio: submitting task, operation, size, start
// sector), the committed trace summary of a real Ceph OSD
// (testdata/ceph-osd-trace.json, written by test/ceph with
// PRISM_UPDATE_TRACE=1), and a replay of that trace through the kernel-exact
// evaluator of internal/ioclass. The policy itself is ceph-osd.yaml, loaded
// by internal/ioclass (ioclass.DefaultCephOSD).
package defaults
