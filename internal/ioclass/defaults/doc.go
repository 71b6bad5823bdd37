// Package defaults holds the evidence behind Prism's default PRISM classifier
// policies: the committed trace summary of a real Ceph OSD
// (testdata/ceph-osd-trace.json, in internal/blktrace's format, written by
// test/ceph with PRISM_UPDATE_TRACE=1), the facts that trace must hold, and a
// replay of it through the kernel-exact evaluator of internal/ioclass. The
// policy itself is ceph-osd.yaml, loaded by internal/ioclass
// (ioclass.DefaultCephOSD).
package defaults
