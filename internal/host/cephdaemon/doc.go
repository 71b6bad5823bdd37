// Package cephdaemon reads a Ceph daemon's admin socket: the OSD's BlueFS and BlueStore
// counters, BlueFS's usage matrix, RocksDB's compaction statistics and its configuration.
//
// It speaks the admin socket protocol itself instead of running `ceph --admin-daemon`
// (decision 0027): the agent's image has no Ceph CLI (ceph-common with Python and librados),
// and the protocol is small: the client writes one JSON command ({"prefix": ..., "format":
// "json", arguments}) ended by a NUL byte and reads a 4-byte big-endian length and that many
// bytes of reply. test/ceph asks a real OSD each command through this client and through
// `ceph --admin-daemon`, and requires both replies to parse the same (counter names, option
// values, matrix columns, level rows; live counters differ between two reads).
//
// Only read commands can be built (Command's constructors): the agent never changes an OSD.
// Every call has a deadline. Parsers are pure and tested on replies recorded from Ceph 16.2.15
// (testdata/README.md).
package cephdaemon
