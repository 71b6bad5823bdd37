//go:build linux && cgo && libblkid

package inventory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// noChild fails the test if anything runs: libblkid is asked in process.
type noChild struct{ t *testing.T }

func (n noChild) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	n.t.Errorf("ran %q; libblkid should have been asked in process", argv)
	return nil, errors.New("no child")
}

// Asked in process, libblkid gives the inventory the same answer as the wipefs child, for
// the same disks: the same signatures and the same eligibility with the same filters, for
// formats both detectors know, one only libblkid knows (f2fs), a disk libblkid cannot probe,
// and a held disk neither asks about (decision 0030's rule stands: every disk asked through
// wipefs is asked in process).
func TestInProcessLibblkidAnswersAsTheWipefsChild(t *testing.T) {
	if _, err := exec.LookPath("wipefs"); err != nil {
		t.Skip("wipefs (util-linux) is not installed")
	}
	n := fixturehost.Node{Name: "probe"}
	for i, content := range []string{"empty", "gpt", "ext4", "xfs", "lvm2", "bluestore", "empty", "empty", "empty"} {
		d := fixturehost.Device{Name: fmt.Sprintf("nvme%dn1", i), Model: "Test NVMe", Serial: fmt.Sprintf("S%d", i),
			Bus: "nvme", SizeBytes: 10 << 30, Content: content, Source: "test"}
		if i == 8 {
			d.Holders = []string{"dm-0"}
		}
		n.Devices = append(n.Devices, d)
	}
	root := t.TempDir()
	if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
		t.Fatal(err)
	}
	host := sysfs.Host{Root: root}
	// nvme6n1: an f2fs superblock, which only libblkid knows.
	writeF2FSSuperblock(t, host.DevicePath("nvme6n1"))
	// nvme7n1 and the held nvme8n1: directories, which open but which neither Prism's
	// detector nor libblkid can read. libblkid's failure adds a Readable reason, so asking
	// about the held disk would show.
	for _, name := range []string{"nvme7n1", "nvme8n1"} {
		if err := os.Remove(host.DevicePath(name)); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(host.DevicePath(name), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	child, err := Take(context.Background(), Options{Host: host, Probe: &wipefsOnly{}})
	if err != nil {
		t.Fatal(err)
	}
	inproc, err := Take(context.Background(), Options{Host: host, Probe: noChild{t}, ProbeInProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		Signatures string
		Eligible   bool
		Filters    []string
		Libblkid   bool // a reason names libblkid's failed probe
	}
	view := func(name string, r Report) map[string]seen {
		m := map[string]seen{}
		for _, d := range r.Devices {
			s := seen{Signatures: fmt.Sprint(d.Signatures), Eligible: d.Eligibility.Eligible}
			for _, r := range d.Eligibility.Reasons {
				s.Filters = append(s.Filters, r.Filter)
				s.Libblkid = s.Libblkid || strings.Contains(r.Message, "libblkid's probe")
			}
			m[d.Name] = s
			t.Logf("%s %s: %+v", name, d.Name, s)
		}
		return m
	}
	c, p := view("child", child), view("in process", inproc)
	if !reflect.DeepEqual(c, p) {
		t.Errorf("in process and through wipefs differ:\nchild      %+v\nin process %+v", c, p)
	}
	if p["nvme6n1"].Eligible || p["nvme6n1"].Signatures == "[]" {
		t.Errorf("nvme6n1 (f2fs): %+v, want it ineligible with libblkid's f2fs", p["nvme6n1"])
	}
	if !p["nvme7n1"].Libblkid || p["nvme8n1"].Libblkid {
		t.Errorf("nvme7n1 %+v, nvme8n1 %+v: want libblkid's failure on the first and the held disk not asked", p["nvme7n1"], p["nvme8n1"])
	}
	if p["nvme0n1"].Signatures != "[]" || !p["nvme0n1"].Eligible {
		t.Errorf("nvme0n1 (empty): %+v, want it eligible", p["nvme0n1"])
	}
}
