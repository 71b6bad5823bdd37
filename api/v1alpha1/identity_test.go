package v1alpha1

import (
	"strings"
	"testing"
)

func TestIdentityDiffers(t *testing.T) {
	a := &DeviceIdentity{WWID: "eui.1", Serial: "S1", DiskSeq: 9}
	for _, tc := range []struct {
		name      string
		want, got *DeviceIdentity
		diff      string
	}{
		{"same", a, a, ""},
		{"a new disk under the same name", a, &DeviceIdentity{WWID: "eui.1", Serial: "S1", DiskSeq: 12}, "diskseq 12, not 9"},
		{"another drive", a, &DeviceIdentity{WWID: "eui.2", Serial: "S2", DiskSeq: 9}, `wwid "eui.2", not "eui.1"; serial "S2", not "S1"`},
		{"the record has no diskseq (older agent, or a plan)", a.Stable(), &DeviceIdentity{WWID: "eui.1", Serial: "S1", DiskSeq: 40}, ""},
		{"the device lost its wwid", a, &DeviceIdentity{Serial: "S1", DiskSeq: 9}, `wwid "", not "eui.1"`},
		{"the device reports nothing now", a, nil, `wwid "", not "eui.1"; serial "", not "S1"; diskseq 0, not 9`},
		{"nothing recorded", nil, a, ""},
		{"another loop file", &DeviceIdentity{BackingFile: "/a", DiskSeq: 1}, &DeviceIdentity{BackingFile: "/b", DiskSeq: 2}, `loop file "/b", not "/a"`},
	} {
		if got := tc.want.Differs(tc.got); !strings.Contains(got, tc.diff) || (tc.diff == "") != (got == "") {
			t.Errorf("%s: Differs = %q, want %q", tc.name, got, tc.diff)
		}
	}
}

func TestIdentityKeyAndString(t *testing.T) {
	for _, tc := range []struct {
		id        *DeviceIdentity
		key, text string
	}{
		{&DeviceIdentity{WWID: "eui.1", Serial: "S1", DiskSeq: 3}, "wwid eui.1", `wwid "eui.1", serial "S1", diskseq 3`},
		{&DeviceIdentity{Serial: "S1", DiskSeq: 3}, "serial S1", `serial "S1", diskseq 3`},
		{&DeviceIdentity{BackingFile: "/a.img", DiskSeq: 3}, "loop file /a.img", `loop file "/a.img", diskseq 3`},
		{&DeviceIdentity{DiskSeq: 3}, "", "diskseq 3"},
		{nil, "", "no identity reported"},
	} {
		if got := tc.id.Key(); got != tc.key {
			t.Errorf("%+v.Key() = %q, want %q", tc.id, got, tc.key)
		}
		if got := tc.id.String(); got != tc.text {
			t.Errorf("%+v.String() = %q, want %q", tc.id, got, tc.text)
		}
	}
	if s := (&DeviceIdentity{DiskSeq: 3}).Stable(); s != nil {
		t.Errorf("an identity of a diskseq alone is stable %+v, want nil", s)
	}
}
