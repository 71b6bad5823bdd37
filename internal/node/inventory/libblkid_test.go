package inventory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// wipefsOnly is libblkid played by the real wipefs, failing for the devices in fail; with
// real, the failure reads as wipefs words it, naming the device's path.
type wipefsOnly struct {
	calls int
	fail  string
	real  string
	asked []string
}

func (w *wipefsOnly) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	w.calls++
	w.asked = append(w.asked, strings.Join(argv[3:], " "))
	if argv[0] != "wipefs" || argv[1] != "--no-act" {
		return nil, fmt.Errorf("unexpected %q", argv)
	}
	if w.real != "" && strings.Contains(strings.Join(argv, " "), w.real) {
		return nil, &hostexec.ExitError{Argv: argv, ExitCode: 1, Stderr: "wipefs: error: " + w.real + ": probing initialization failed: Operation not permitted"}
	}
	if w.fail != "" && strings.Contains(strings.Join(argv, " "), w.fail) {
		return nil, errors.New("wipefs: " + w.fail + ": probing initialization failed: Input/output error")
	}
	return hostexec.Local{}.Run(ctx, argv, stdin)
}

// A format only libblkid knows (squashfs, written by the real mksquashfs when installed, or
// an f2fs superblock magic otherwise) makes the device ineligible, named; an empty device
// stays eligible; a device whose probe fails is not eligible, with the error.
func TestLibblkidFindsWhatPrismsDetectorDoesNot(t *testing.T) {
	if _, err := exec.LookPath("wipefs"); err != nil {
		t.Skip("wipefs (util-linux) is not installed")
	}
	n := fixturehost.Node{Name: "probe"}
	for i := range 3 {
		n.Devices = append(n.Devices, fixturehost.Device{Name: fmt.Sprintf("nvme%dn1", i), Model: "Test NVMe", Serial: fmt.Sprintf("S%d", i),
			Bus: "nvme", SizeBytes: 10 << 30, Content: "empty", Source: "test"})
	}
	root := t.TempDir()
	if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
		t.Fatal(err)
	}
	host := sysfs.Host{Root: root}
	writeF2FSSuperblock(t, host.DevicePath("nvme1n1"))
	out, _ := exec.Command("wipefs", "--no-act", "--json", host.DevicePath("nvme1n1")).Output()
	if !strings.Contains(string(out), `"f2fs"`) {
		t.Skipf("this libblkid does not take the hand-made f2fs superblock (%s): nothing to test with", out)
	}

	w := &wipefsOnly{}
	rep, err := Take(context.Background(), Options{Host: host, Probe: w})
	if err != nil {
		t.Fatal(err)
	}
	if w.calls != 1 {
		t.Errorf("%d wipefs calls, want one for all disks", w.calls)
	}
	for _, d := range rep.Devices {
		switch d.Name {
		case "nvme1n1":
			if d.Eligibility.Eligible || !strings.Contains(fmt.Sprint(d.Eligibility.Reasons), "holds data: f2fs (Other at offset 1024)") {
				t.Errorf("f2fs device: %+v", d.Eligibility)
			}
		default:
			if !d.Eligibility.Eligible {
				t.Errorf("%s: %+v", d.Name, d.Eligibility)
			}
		}
	}

	w = &wipefsOnly{fail: "nvme2n1"}
	rep, err = Take(context.Background(), Options{Host: host, Probe: w})
	if err != nil {
		t.Fatal(err)
	}
	if w.calls != 4 {
		t.Errorf("%d wipefs calls, want one for all then one per disk", w.calls)
	}
	for _, d := range rep.Devices {
		bad := d.Name == "nvme2n1" || d.Name == "nvme1n1"
		if d.Eligibility.Eligible == bad {
			t.Errorf("%s: eligible %t: %+v", d.Name, d.Eligibility.Eligible, d.Eligibility)
		}
		if d.Name == "nvme2n1" && !strings.Contains(fmt.Sprint(d.Eligibility.Reasons), "cannot be proven empty") {
			t.Errorf("nvme2n1: %+v", d.Eligibility.Reasons)
		}
	}

	// wipefs names the disk it could not probe: that disk gets the error, the others are
	// asked once more without it (two calls, not one per disk).
	w = &wipefsOnly{real: host.DevicePath("nvme2n1")}
	rep, err = Take(context.Background(), Options{Host: host, Probe: w})
	if err != nil {
		t.Fatal(err)
	}
	if w.calls != 2 || strings.Contains(w.asked[1], "nvme2n1") {
		t.Errorf("wipefs asked about %q, want all, then all but nvme2n1", w.asked)
	}
	for _, d := range rep.Devices {
		if bad := d.Name == "nvme2n1" || d.Name == "nvme1n1"; d.Eligibility.Eligible == bad {
			t.Errorf("%s: eligible %t: %+v", d.Name, d.Eligibility.Eligible, d.Eligibility)
		}
	}

	// A disk that does not open is not asked: Prism's own read failed and says so.
	if err := os.Remove(host.DevicePath("nvme0n1")); err != nil {
		t.Fatal(err)
	}
	w = &wipefsOnly{}
	rep, err = Take(context.Background(), Options{Host: host, Probe: w})
	if err != nil {
		t.Fatal(err)
	}
	if w.calls != 1 || strings.Contains(w.asked[0], "nvme0n1") {
		t.Errorf("wipefs asked about %q, want one call without nvme0n1", w.asked)
	}
	if d := rep.Devices[0]; d.Name != "nvme0n1" || d.Eligibility.Eligible || !strings.Contains(fmt.Sprint(d.Eligibility.Reasons), "no such file") {
		t.Errorf("nvme0n1: %+v", d.Eligibility)
	}

	// A disk held by a stacked device is ineligible whatever libblkid finds, and no grant
	// overrides that: it is not asked either. (A partitioned one is: see
	// TestLibblkidIsAskedAboutPartitionedDisks.)
	if err := os.MkdirAll(filepath.Join(root, "sys", "block", "nvme1n1", "holders", "dm-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	w = &wipefsOnly{}
	if _, err := Take(context.Background(), Options{Host: host, Probe: w}); err != nil {
		t.Fatal(err)
	}
	if w.calls != 1 || strings.Contains(w.asked[0], "nvme1n1") || !strings.Contains(w.asked[0], "nvme2n1") {
		t.Errorf("wipefs asked about %q, want nvme2n1 alone", w.asked)
	}
}

// libblkid is asked about a disk on which Prism's detector already found something too: a
// failed probe is then a read problem (Readable), which no wipe grant overrides, while the
// detector's finding alone (NoSignatures) is one a grant does override (internal/plan). Not
// asking would let a grant select a disk libblkid could not read.
func TestLibblkidIsAskedAboutDisksWithDataToo(t *testing.T) {
	if _, err := exec.LookPath("wipefs"); err != nil {
		t.Skip("wipefs (util-linux) is not installed")
	}
	n := fixturehost.Node{Name: "probe"}
	for i, content := range []string{"empty", "ext4", "bluestore"} {
		n.Devices = append(n.Devices, fixturehost.Device{Name: fmt.Sprintf("nvme%dn1", i), Model: "Test NVMe", Serial: fmt.Sprintf("S%d", i),
			Bus: "nvme", SizeBytes: 10 << 30, Content: content, Source: "test"})
	}
	root := t.TempDir()
	if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
		t.Fatal(err)
	}
	host := sysfs.Host{Root: root}
	w := &wipefsOnly{fail: "nvme1n1"}
	rep, err := Take(context.Background(), Options{Host: host, Probe: w})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.asked) == 0 || !strings.Contains(w.asked[0], "nvme1n1") || !strings.Contains(w.asked[0], "nvme2n1") {
		t.Errorf("wipefs asked about %q, want the disks with data among them", w.asked)
	}
	for _, d := range rep.Devices {
		var filters []string
		for _, r := range d.Eligibility.Reasons {
			filters = append(filters, r.Filter)
		}
		switch d.Name {
		case "nvme0n1":
			if !d.Eligibility.Eligible {
				t.Errorf("%s: %+v", d.Name, d.Eligibility)
			}
		case "nvme1n1":
			if !slices.Contains(filters, prismv1.FilterReadable) || !slices.Contains(filters, prismv1.FilterNoSignatures) ||
				!strings.Contains(fmt.Sprint(d.Eligibility.Reasons), "libblkid's probe") {
				t.Errorf("%s: reasons %+v, want the failed libblkid probe (Readable) beside its ext4 (NoSignatures)", d.Name, d.Eligibility.Reasons)
			}
		case "nvme2n1":
			if d.Eligibility.Eligible || !strings.Contains(fmt.Sprint(d.Eligibility.Reasons), "holds data: ceph_bluestore") || slices.Contains(filters, prismv1.FilterReadable) {
				t.Errorf("%s: %+v, want ineligible for its BlueStore label alone", d.Name, d.Eligibility)
			}
		}
	}
}

// TestLibblkidIsAskedAboutPartitionedDisks: a wipe grant overrides NoPartitions, so a
// partitioned disk's libblkid probe must be known: a disk libblkid cannot read is Readable-
// ineligible, which no grant overrides. (Until 2026-11-26 partitioned disks were never asked,
// so a grant could select a disk whose probe would fail; provisioning's re-probe refused it
// before any write, but the plan named it.)
func TestLibblkidIsAskedAboutPartitionedDisks(t *testing.T) {
	if _, err := exec.LookPath("wipefs"); err != nil {
		t.Skip("wipefs (util-linux) is not installed")
	}
	n := fixturehost.Node{Name: "probe", Devices: []fixturehost.Device{
		{Name: "nvme0n1", Model: "Test NVMe", Serial: "S0", Bus: "nvme", SizeBytes: 10 << 30, Content: "empty", Source: "test", Partitions: []string{"nvme0n1p1"}},
		{Name: "nvme1n1", Model: "Test NVMe", Serial: "S1", Bus: "nvme", SizeBytes: 10 << 30, Content: "empty", Source: "test", Holders: []string{"dm-0"}},
	}}
	root := t.TempDir()
	if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
		t.Fatal(err)
	}
	w := &wipefsOnly{fail: "nvme0n1"}
	rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: root}, Probe: w})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.asked) == 0 || !strings.Contains(w.asked[0], "nvme0n1") || strings.Contains(strings.Join(w.asked, " "), "nvme1n1") {
		t.Errorf("wipefs asked about %q, want the partitioned disk and not the held one (no grant overrides a holder)", w.asked)
	}
	for _, d := range rep.Devices {
		if d.Name != "nvme0n1" {
			continue
		}
		var filters []string
		for _, r := range d.Eligibility.Reasons {
			filters = append(filters, r.Filter)
		}
		if !slices.Contains(filters, prismv1.FilterReadable) || !slices.Contains(filters, prismv1.FilterNoPartitions) {
			t.Errorf("%s: reasons %+v, want the failed libblkid probe (Readable) beside its partitions (NoPartitions)", d.Name, d.Eligibility.Reasons)
		}
	}
}

// writeF2FSSuperblock writes an f2fs superblock's magic (0xF2F52010) and the fields libblkid's
// probe checks at 1 KiB of the file at path: a format only libblkid knows.
func writeF2FSSuperblock(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sb := make([]byte, 4096)
	copy(sb[0:], []byte{0x10, 0x20, 0xf5, 0xf2})
	sb[4], sb[6] = 1, 7               // major version 1, minor 7
	sb[12], sb[16], sb[20] = 9, 12, 9 // log sector size 512, log block size 4096, ...
	if _, err := f.WriteAt(sb, 1024); err != nil {
		t.Fatal(err)
	}
}
