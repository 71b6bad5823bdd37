package rook

import "time"

// CephAnswers are Ceph's own answers about one node's OSDs, read by a short-lived probe
// (decision 0046): the raw JSON each command printed, kept raw so that the planner, not the
// probe, decides what they mean and recorded outputs replay through the same code.
type CephAnswers struct {
	// At is when the probe finished; answers older than the gate's limit decide nothing.
	At time.Time
	// Health is `ceph health -f json`: the status and each check's code, severity, muted and
	// summary (the probe leaves out the rest, and the summaries when they are long; decision 0058).
	Health []byte
	// PGStat is `ceph pg stat -f json`: PG counts by state.
	PGStat []byte
	// Devices is `ceph device ls-by-host <node> -f json`: which OSD daemons use which device;
	// when DevicesOf is not nil, only the elements Ceph locates at one of those names.
	Devices []byte
	// DevicesOf are the kernel names and /dev paths the probe kept Devices' elements for
	// (decision 0057: the whole list of a dense node is longer than the kubelet keeps); nil
	// when Devices is Ceph's whole list (recorded outputs). A drive the gate judges must have
	// all its names (ProbeDrive.Names) among them.
	DevicesOf []string
	// SafeToDestroy is `ceph osd safe-to-destroy <the node's OSD ids> -f json`, or `[]` when
	// `ceph osd ls-tree <the node's CRUSH host>` named no OSD (the bucket exists, empty).
	SafeToDestroy []byte
	// Destroyed is `ceph osd tree-from <the node's CRUSH host> destroyed -f json`, each OSD
	// node kept with its id and status alone (decision 0058).
	Destroyed []byte
	// Err is why the probe could not answer (then the other fields may be partial); a
	// non-empty Err holds every release.
	Err string
}
