// Package lvm puts LVM2's command-line tools behind one small package, in the style of
// TopoLVM's lvmd/command: argv builders for the three commands that make a DB slot's logical
// volume (pvcreate, vgcreate, lvcreate, tags given with --addtag) and for the three reports
// (pvs, vgs, lvs as `--reportformat json --units b --nosuffix` with explicit -o fields), pure
// parsers of those reports, and the deterministic names Prism gives a slot's volume group and
// logical volume (decision 0036, proposed).
//
// Only Read runs anything, through an injected hostexec.Executor (argv slices, a context with a
// timeout, LC_ALL=C). Nothing runs a shell. The parsers reject any report that lacks a field
// they asked for, naming the report, the row and the field.
//
// The JSON shape is LVM2's `--reportformat json` (lvmreport(7)): {"report": [{"pv": [{field:
// "value", ...}]}]}, every value a string, sizes in bytes without a suffix, lists such as tags
// joined with commas, flags as a word or "". Fixtures in testdata/ are real output of lvm2
// 2.03.16 (Debian 12) on a loop device (testdata/README.md).
//
// ReadHead reads a partition's first MiB as LVM's on-disk format (label, metadata area header,
// metadata text) and refuses any other byte; PVUUID is the PV UUID Prism gives a partition's PV.
// Together they tell Prism's own pvcreate or vgcreate cut short (decision 0039).
package lvm
