package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
)

// Stable is the identity without diskSeq, which changes at every boot: what a plan carries.
// Nil when nothing else is left.
func (id *DeviceIdentity) Stable() *DeviceIdentity {
	if id == nil {
		return nil
	}
	s := DeviceIdentity{WWID: id.WWID, Serial: id.Serial, BackingFile: id.BackingFile}
	if s == (DeviceIdentity{}) {
		return nil
	}
	return &s
}

// Key is what two devices share only when they report the same identity: the WWID when there
// is one, else the serial, else a loop device's file; "" when the device reports none of them.
func (id *DeviceIdentity) Key() string {
	switch {
	case id == nil:
		return ""
	case id.WWID != "":
		return "wwid " + id.WWID
	case id.Serial != "":
		return "serial " + id.Serial
	case id.BackingFile != "":
		return "loop file " + id.BackingFile
	}
	return ""
}

// String names the identity in messages: `wwid "eui.0025…", serial "S4…", diskseq 9`.
func (id *DeviceIdentity) String() string {
	if id == nil {
		return "no identity reported"
	}
	var parts []string
	for _, p := range []struct{ k, v string }{{"wwid", id.WWID}, {"serial", id.Serial}, {"loop file", id.BackingFile}} {
		if p.v != "" {
			parts = append(parts, p.k+" "+strconv.Quote(p.v))
		}
	}
	if id.DiskSeq != 0 {
		parts = append(parts, fmt.Sprintf("diskseq %d", id.DiskSeq))
	}
	if len(parts) == 0 {
		return "no identity reported"
	}
	return strings.Join(parts, ", ")
}

// Differs says how got differs from want (the receiver), "" when it does not: a field want has
// that got lacks or has otherwise. Fields want lacks are not compared (a record of an older
// agent, a kernel without diskseq, a plan, which has no diskSeq).
func (want *DeviceIdentity) Differs(got *DeviceIdentity) string {
	if want == nil {
		return ""
	}
	if got == nil {
		got = &DeviceIdentity{}
	}
	var diffs []string
	for _, f := range []struct{ k, w, g string }{{"wwid", want.WWID, got.WWID}, {"serial", want.Serial, got.Serial}, {"loop file", want.BackingFile, got.BackingFile}} {
		if f.w != "" && f.w != f.g {
			diffs = append(diffs, fmt.Sprintf("%s %q, not %q", f.k, f.g, f.w))
		}
	}
	if want.DiskSeq != 0 && want.DiskSeq != got.DiskSeq {
		diffs = append(diffs, fmt.Sprintf("diskseq %d, not %d (the kernel made it a new disk since)", got.DiskSeq, want.DiskSeq))
	}
	return strings.Join(diffs, "; ")
}
