package provision

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// The device under the plan's name is written only when it reports the identity the
// inventory read and the plan names (issue 29, case 1: a kernel name taken by another device,
// a by-id name on another drive).
func TestIdentityDecidesWhichDeviceIsWritten(t *testing.T) {
	recorded := &prismv1.DeviceIdentity{WWID: "eui.0025385b71b07e2f", Serial: "S1", DiskSeq: 5}
	for _, tc := range []struct {
		name   string
		attrs  map[string]string
		record *prismv1.DeviceIdentity
		plan   *prismv1.DeviceIdentity
		state  string
		msg    string
	}{
		{"the device the inventory read", map[string]string{"wwid": "eui.0025385b71b07e2f", "serial": "S1", "diskseq": "5"}, recorded,
			&prismv1.DeviceIdentity{WWID: "eui.0025385b71b07e2f", Serial: "S1"}, "Ready,Ready,Ready,Ready", ""},
		{"the name now on a new disk", map[string]string{"wwid": "eui.0025385b71b07e2f", "serial": "S1", "diskseq": "6"}, recorded, nil,
			"Refused,Refused,Refused,Refused", "diskseq 6, not 5"},
		{"another drive under the name", map[string]string{"wwid": "eui.99", "serial": "S9", "diskseq": "5"}, recorded, nil,
			"Refused,Refused,Refused,Refused", `wwid "eui.99", not "eui.0025385b71b07e2f"`},
		{"a drive the plan was not made for (a fresh inventory of it)", map[string]string{"wwid": "eui.99", "serial": "S1", "diskseq": "8"},
			&prismv1.DeviceIdentity{WWID: "eui.99", Serial: "S1", DiskSeq: 8}, &prismv1.DeviceIdentity{WWID: "eui.0025385b71b07e2f", Serial: "S1"},
			"Refused,Refused,Refused,Refused", "not the device this plan was made for"},
		{"an identity that cannot be read", map[string]string{"diskseq": "x"}, recorded, nil,
			"Failed,Failed,Failed,Failed", "cannot be told apart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHost(t)
			h.attrs = map[string]string{"dev": "259:0"}
			for k, v := range tc.attrs {
				h.attrs[k] = v
			}
			h.syncSysfs()
			p := nodePlan(t)
			p.FastDevices[0].Identity = tc.plan
			inv := h.inventory()
			inv[0].Identity = tc.record
			res := h.runner().Reconcile(context.Background(), p, inv, prismv1.ModeApply)
			if got := states(res.Partitions); got != tc.state {
				t.Fatalf("states %s, want %s: %s", got, tc.state, res.Partitions[0].Message)
			}
			if !strings.Contains(res.Partitions[0].Message, tc.msg) {
				t.Errorf("message %q lacks %q", res.Partitions[0].Message, tc.msg)
			}
			if tc.msg != "" && len(h.mutations()) != 0 {
				t.Errorf("wrote a device it refused: %q", h.mutations())
			}
		})
	}
}

// Two inventory records under one by-id name (cloned serials), or two with one identity: the
// agent writes neither (before: it acted on the first for both).
func TestAmbiguousNamesAreNotWritten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second func(d *prismv1.Device)
		msg    string
	}{
		{"the same by-id name", func(d *prismv1.Device) {
			d.Name, d.Path = "nvme1n1", "/dev/nvme1n1"
			d.Identity = &prismv1.DeviceIdentity{Serial: "CLONE", DiskSeq: 7}
		}, "names 2 devices: /dev/nvme0n1 (serial \"CLONE\", diskseq 6) and /dev/nvme1n1 (serial \"CLONE\", diskseq 7)"},
		{"the same identity under another name", func(d *prismv1.Device) {
			d.Name, d.Path, d.StablePath = "nvme1n1", "/dev/nvme1n1", "/dev/disk/by-id/nvme-OTHER"
			d.Identity = &prismv1.DeviceIdentity{Serial: "CLONE", DiskSeq: 7}
		}, "reports the same identity as /dev/nvme1n1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHost(t)
			inv := h.inventory()
			inv[0].Identity = &prismv1.DeviceIdentity{Serial: "CLONE", DiskSeq: 6}
			other := *inv[0].DeepCopy()
			tc.second(&other)
			inv = append(inv, other)
			res := h.runner().Reconcile(context.Background(), nodePlan(t), inv, prismv1.ModeApply)
			if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" {
				t.Fatalf("states %s: %s", got, res.Partitions[0].Message)
			}
			if !strings.Contains(res.Partitions[0].Message, tc.msg) {
				t.Errorf("message %q lacks %q", res.Partitions[0].Message, tc.msg)
			}
			if len(h.mutations()) != 0 {
				t.Errorf("wrote: %q", h.mutations())
			}
		})
	}
}

// Where udev keeps links, a stable link that is gone means the device left: its kernel name
// may be another device's by now (before: the link was checked only when it existed).
func TestGoneLinkIsNotFollowedByItsOldKernelName(t *testing.T) {
	h := newFakeHost(t)
	byID := filepath.Join(h.root, "dev", "disk", "by-id")
	if err := os.MkdirAll(byID, 0o755); err != nil {
		t.Fatal(err)
	}
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Pending,Pending,Pending,Pending" || !strings.Contains(res.Partitions[0].Message, "is gone") {
		t.Fatalf("states %s: %+v", got, res.Partitions)
	}
	if len(h.mutations()) != 0 {
		t.Errorf("wrote: %q", h.mutations())
	}
	// With the link back, pointing to the device, it goes ahead.
	if err := os.Symlink("../../"+h.name, filepath.Join(h.root, fast)); err != nil {
		t.Fatal(err)
	}
	if got := states(h.reconcile(nodePlan(t)).Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("with the link: %s", got)
	}
}
