// Package ceph holds a root-only test that proves Prism's layout on a real Ceph cluster:
// it plans DB slots with internal/plan for loop devices (one "fast", three "QLC"),
// partitions the fast device from that plan, bootstraps a single-node Ceph cluster on
// 127.0.0.1 in a temporary directory (mon, mgr, one OSD per QLC loop created with
// `ceph-volume raw prepare --block.db <slot partition>`), and checks with Ceph's own tools
// that every OSD has its DB on its planned slot, that bluestore_min_alloc_size from
// Prism's config section took effect at mkfs, and how a real workload's writes split
// between the fast and the slow devices. It installs Debian's ceph packages itself.
//
// TestCephOSDTrace traces, with the block_bio_queue tracepoint, which threads send which bios
// to an OSD's data device and DB slot during 4 KiB and 4 MiB workloads and a RocksDB
// compaction that spills; it is the evidence for the default PRISM policy
// (internal/ioclass/defaults, docs/ioclass-default-policy.md). PRISM_UPDATE_TRACE=1 rewrites
// the committed trace. The same run enables the mgr's prometheus module, starts Debian's
// Prometheus scraping it, and runs Prism's BlueFS dashboard queries and the chart's
// spill-over alert before and after the spill (metrics_test.go, docs/dashboards.md "Ceph's
// metrics"). OSDs start with Rook's POD_NAME and NODE_NAME, so Ceph reports the simulated
// node name as their host, and with Rook's --crush-location, so their CRUSH host is that node's.
//
// TestRecordGateAnswers (only with PRISM_RECORD_GATE=<dir>) records Ceph's answers to the
// replacement gate's questions through a fast-device failure on four OSDs and a size-3 pool:
// internal/plan/rook/testdata/ceph16 and decision 0046.
//
// TestRunbookReplaceDataDisk (only with PRISM_CEPH_DRILL=1, or make drill-replace-data-disk;
// about 4.5 minutes) is the failure drill of docs/runbooks/replace-data-disk.md: three OSDs
// whose DBs share one fast device, a size-2 pool with checksummed objects, one QLC drive failed
// (its OSD killed, its loop's backing file truncated to nothing), then the runbook's commands
// run as internal/runbook parses them, the agent's partitioner reads the zapped slot Empty, the
// planner gives the new drive that slot, the gate writes its entry on the live cluster's answers
// read through the probe's own script (decision 0061: step 2 purged, so no OSD is destroyed), and
// a new OSD comes up on it; every object reads back identical, and the other OSDs' devices and
// the fast device's table are unchanged. The blocks marked "not run by test/ceph" (Rook's
// kubectl steps) are the e2e chain's drill's (test/e2e, PRISM_E2E_DRILLS=1); green with step 6
// on 2026-12-06 (session 19) in 147 s; with step 2 purging on 2026-12-07 (session 23) in 116 s,
// beside an e2e guest under nice and ionice (the new OSD took the purged id).
//
// TestRunbookReplaceFastDevice (only with PRISM_CEPH_DRILL=1, or make drill-replace-fast-device)
// is the failure drill of docs/runbooks/replace-fast-device.md: Prism's node with three OSDs
// whose DBs share one fast device, two other nodes (CRUSH hosts) with one OSD each, every pool
// at size 2 on a rule with failure domain host (decision 0055), checksummed objects; the fast
// device dies (its OSDs killed, its loop's backing file truncated), the runbook's blocks run for
// every OSD behind it, a new fast device gets fresh slots from the planner and the agent's
// partitioner, and step 4 is rook.GateReplacements on the live cluster's answers read through
// the probe's own script: each OSD is prepared only when the gate releases it, and the next is
// held on Ceph's answer while the previous one backfills. Every object reads back identical,
// and the other nodes' OSDs are unchanged. Step 2 purges the OSDs (decision 0058), which leaves
// Prism's node's CRUSH host empty: the gate's first release is on that answer. Green on
// 2026-12-07 (session 22) in 214 s, beside an e2e guest, under nice and ionice (session 20:
// 186 s, with step 2 destroying and step 6 purging).
//
// Run them as root (about 4-6 minutes together):
//
//	go test ./test/ceph/ -count=1 -timeout 15m -v
//
// See docs/provisioning.md and docs/ioclass-default-policy.md for what they measured.
package ceph
