// Package crash kills the real partitioner at every write it or a tool it calls makes, and
// checks that the next pass ends in exactly the planned layout with no foreign byte changed
// (issue: crash-safe partitioning). It runs prism-apply-plan, the agent's partitioner as a
// command (test/guest/applyplan), under strace, whose syscall fault injection delivers
// SIGKILL on entry to the k-th write(2) or pwrite64(2) of any process in the tree, for every
// k until a run finishes. Needs root, loop devices and strace; skips with the reason otherwise.
//
// TestLVMKillAtEveryWrite does the same for the volume phase's pvcreate and vgcreate (decision
// 0039), which write with io_submit: a wrapper on PATH runs each under strace, killing it on
// entry to each io_submit that writes, and the next pass must end in the PVs and VGs an
// uninterrupted pass makes. lvcreate cannot run on a kernel without device-mapper.
package crash
