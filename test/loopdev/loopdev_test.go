//go:build linux

package loopdev

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prism-storage/prism/test/support/loopdevs"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/inventorydoc"
	"github.com/prism-storage/prism/internal/node/inventory"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30

	// cephMinimumBytes is ceph-volume's 5 GB (decimal) floor for an OSD device; the
	// MinimumSize filter must fail below it and pass above it.
	cephMinimumBytes = 5_000_000_000

	// Per-command time limits. apt may download, so it gets longer.
	quick   = 20 * time.Second
	mkfs    = 60 * time.Second
	goBuild = 3 * time.Minute
	apt     = 5 * time.Minute
)

// loopSpec is one loop device the test attaches and what it puts on it.
type loopSpec struct {
	role        string   // also the backing file's name
	size        int64    // backing file size (sparse)
	losetupArgs []string // extra losetup flags
	// keepRotational leaves queue/rotational as the kernel set it, so both values are seen.
	keepRotational bool
	// wantFilters are the filters the test means this device to fail (HasStablePath is
	// added when udev published no /dev/disk/by-id link for it).
	wantFilters []string
}

var specs = []loopSpec{
	{role: "empty", size: 6 * gib},
	{role: "ext4", size: 6 * gib, wantFilters: []string{prismv1.FilterNoSignatures}},
	{role: "gpt", size: 6 * gib, losetupArgs: []string{"--partscan"},
		wantFilters: []string{prismv1.FilterNoPartitions, prismv1.FilterNoSignatures}},
	// 4096-byte logical sectors: the size must still be sysfs sectors*512 and blockdev --getss must be 4096.
	{role: "xfs", size: 6 * gib, losetupArgs: []string{"--sector-size", "4096"},
		wantFilters: []string{prismv1.FilterNoSignatures}},
	{role: "readonly", size: 6 * gib, losetupArgs: []string{"--read-only"},
		wantFilters: []string{prismv1.FilterNotReadOnly}},
	{role: "gpt4k", size: 6 * gib, losetupArgs: []string{"--partscan", "--sector-size", "4096"},
		wantFilters: []string{prismv1.FilterNoPartitions, prismv1.FilterNoSignatures}},
	{role: "small", size: 1 * gib, keepRotational: true, wantFilters: []string{prismv1.FilterMinimumSize}},
}

// loop is an attached loop device.
type loop struct {
	loopSpec
	file string // backing file
	dev  string // /dev/loopN
	name string // loopN
}

// oracle is what tools other than Prism say about a loop device.
type oracle struct {
	size, logical, physical int64 // blockdev --getsize64, --getss, --getpbsz
	readOnly                bool  // blockdev --getro
	rotational, removable   bool  // the kernel's sysfs attributes
	blkid                   []string
	wipefs                  []sigAt // every signature wipefs lists, with its offset
	partitions              []string
	holders                 []string
	byID                    []string // /dev/disk/by-id names that resolve to the device
}

type sigAt struct {
	name   string
	offset int64
}

// TestInventoryRealLoopDevices attaches real loop devices and checks the inventory of
// this very machine against blockdev, blkid, wipefs and the kernel.
func TestInventoryRealLoopDevices(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("needs root to attach loop devices (running as euid %d); run: sudo go test ./test/loopdev/ -count=1 -v", os.Geteuid())
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop driver on this machine: %v", err)
	}
	ctx := t.Context()
	tl := ensureTools(ctx, t, "losetup", "blockdev", "blkid", "wipefs", "partx", "mkfs.ext4", "mkfs.xfs", "sgdisk")

	dir := t.TempDir()
	loops := map[string]*loop{}
	for _, s := range specs {
		loops[s.role] = attach(ctx, t, tl, dir, s)
	}
	for _, s := range specs {
		l := loops[s.role]
		t.Logf("%-8s %s (%s, %d bytes, losetup %v)", l.role, l.dev, filepath.Base(l.file), l.size, l.losetupArgs)
	}

	// Real content.
	mustRun(ctx, t, mkfs, tl["mkfs.ext4"], "-F", "-q", loops["ext4"].dev)
	mustRun(ctx, t, mkfs, tl["mkfs.xfs"], "-f", "-q", loops["xfs"].dev)
	for _, gpt := range []*loop{loops["gpt"], loops["gpt4k"]} {
		mustRun(ctx, t, mkfs, tl["sgdisk"], "-n", "1:0:+100M", gpt.dev)
		if _, err := run(ctx, quick, tl["partx"], "-u", gpt.dev); err != nil {
			t.Logf("partx -u: %v; trying blockdev --rereadpt", err)
			mustRun(ctx, t, quick, tl["blockdev"], "--rereadpt", gpt.dev)
		}
		settleUdev(ctx, t)
		waitFor(t, 10*time.Second, gpt.name+"p1 in /proc/partitions", func() bool {
			return slices.Contains(kernelPartitions(t, gpt.name), gpt.name+"p1")
		})
	}

	// Loops come up rotational; a real SSD is not. Clear it where the kernel lets us.
	for _, l := range loops {
		if l.keepRotational {
			continue
		}
		if err := os.WriteFile(sysBlock(l.name, "queue/rotational"), []byte("0"), 0); err != nil {
			t.Logf("%s: queue/rotational is not writable (%v); expecting whatever the kernel reports", l.name, err)
		}
	}
	settleUdev(ctx, t)

	// What the kernel and util-linux say, before Prism looks.
	want := map[string]oracle{}
	for role, l := range loops {
		want[role] = observe(ctx, t, tl, l)
	}
	checkSetup(t, loops, want)

	before := snapshot(t, loops, want)

	// As the agent and its CLI take it: libblkid in process when built with -tags libblkid.
	opts := inventory.Options{Host: sysfs.Host{Root: "/"}, IncludeLoop: true, Probe: hostexec.Local{}, ProbeInProcess: true}
	rep1, err := inventory.Take(ctx, opts)
	if err != nil {
		t.Fatalf("inventory.Take: %v", err)
	}
	rep2, err := inventory.Take(ctx, opts)
	if err != nil {
		t.Fatalf("inventory.Take (second run): %v", err)
	}
	compareSnapshots(t, "after two inventory.Take calls", before, snapshot(t, loops, want))

	got1, got2 := devicesByName(rep1.Devices), devicesByName(rep2.Devices)
	for _, s := range specs {
		l := loops[s.role]
		d, ok := got1[l.name]
		if !ok {
			t.Errorf("%s (%s): not in the inventory; it listed %v", l.name, l.role, names(rep1.Devices))
			continue
		}
		if d2 := got2[l.name]; !reflect.DeepEqual(d, d2) {
			t.Errorf("%s (%s): two inventories of an unchanged device differ:\n first: %+v\nsecond: %+v", l.name, l.role, d, d2)
		}
		t.Logf("%-8s %s: %d bytes, lbs %d, ro %t, rotational %t, signatures %v, partitions %v, tier %s, eligible %t %v",
			l.role, l.name, d.SizeBytes, d.LogicalBlockSizeBytes, d.ReadOnly, d.Rotational, sigStrings(d.Signatures),
			d.Partitions, d.Tier, d.Eligibility.Eligible, filterNames(d.Eligibility.Reasons))
		checkDevice(t, l, d, want[s.role])
		for _, p := range want[s.role].partitions {
			if _, listed := got1[p]; listed {
				t.Errorf("%s: partition %s is listed as a whole disk", l.name, p)
			}
		}
	}

	// The real CLI must say the same.
	doc := runCLI(ctx, t)
	compareSnapshots(t, "after prism-agent inventory", before, snapshot(t, loops, want))
	if doc.Kind != "Inventory" || doc.HostRoot != "/" {
		t.Errorf("CLI document: kind %q hostRoot %q, want Inventory and /", doc.Kind, doc.HostRoot)
	}
	gotCLI := devicesByName(doc.Devices)
	for _, s := range specs {
		l := loops[s.role]
		lib, ok := got1[l.name]
		if !ok {
			continue // reported above
		}
		cli, ok := gotCLI[l.name]
		if !ok {
			t.Errorf("%s (%s): missing from `prism-agent inventory -o json`; it listed %v", l.name, l.role, names(doc.Devices))
			continue
		}
		if a, b := summarize(lib), summarize(cli); !reflect.DeepEqual(a, b) {
			t.Errorf("%s (%s): CLI and library disagree:\nlibrary: %+v\n    CLI: %+v", l.name, l.role, a, b)
		}
	}
}

// checkSetup makes sure the test built what it meant to, according to the oracles, so a
// passing run really covered each case.
func checkSetup(t *testing.T, loops map[string]*loop, want map[string]oracle) {
	t.Helper()
	expect := func(ok bool, format string, args ...any) {
		if !ok {
			t.Fatalf("test setup: "+format, args...)
		}
	}
	for role, o := range want {
		l := loops[role]
		expect(o.size == l.size, "%s (%s): blockdev says %d bytes, backing file is %d", l.name, role, o.size, l.size)
		expect(len(o.holders) == 0, "%s (%s): unexpected holders %v", l.name, role, o.holders)
	}
	expect(len(want["empty"].blkid) == 0 && len(want["empty"].wipefs) == 0, "empty loop: blkid %v wipefs %v", want["empty"].blkid, want["empty"].wipefs)
	expect(slices.Equal(want["ext4"].blkid, []string{"ext4"}), "ext4 loop: blkid says %v", want["ext4"].blkid)
	expect(slices.Equal(want["xfs"].blkid, []string{"xfs"}), "xfs loop: blkid says %v", want["xfs"].blkid)
	expect(want["xfs"].logical == 4096, "xfs loop: logical block size %d, want 4096", want["xfs"].logical)
	for _, role := range []string{"gpt", "gpt4k"} {
		expect(slices.Equal(want[role].blkid, []string{"gpt"}), "%s loop: blkid says %v", role, want[role].blkid)
		expect(slices.Equal(want[role].partitions, []string{loops[role].name + "p1"}), "%s loop: kernel partitions %v", role, want[role].partitions)
	}
	expect(want["gpt4k"].logical == 4096, "gpt4k loop: logical block size %d, want 4096", want["gpt4k"].logical)
	expect(want["readonly"].readOnly, "read-only loop: blockdev --getro says writable")
	expect(len(want["readonly"].blkid) == 0, "read-only loop: blkid says %v", want["readonly"].blkid)
	expect(len(want["small"].blkid) == 0 && want["small"].size < cephMinimumBytes, "small loop: blkid %v size %d", want["small"].blkid, want["small"].size)
}

// checkDevice compares Prism's record of one loop device with the oracles.
func checkDevice(t *testing.T, l *loop, d prismv1.Device, o oracle) {
	t.Helper()
	errorf := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s (%s): "+format, append([]any{l.name, l.role}, args...)...)
	}
	if d.Path != l.dev {
		errorf("path %q, want %q", d.Path, l.dev)
	}
	if d.Transport != "loop" {
		errorf("transport %q, want loop", d.Transport)
	}
	if d.SizeBytes != o.size {
		errorf("sizeBytes %d, blockdev --getsize64 says %d", d.SizeBytes, o.size)
	}
	if int64(d.LogicalBlockSizeBytes) != o.logical {
		errorf("logicalBlockSizeBytes %d, blockdev --getss says %d", d.LogicalBlockSizeBytes, o.logical)
	}
	if int64(d.PhysicalBlockSizeBytes) != o.physical {
		errorf("physicalBlockSizeBytes %d, blockdev --getpbsz says %d", d.PhysicalBlockSizeBytes, o.physical)
	}
	if d.ReadOnly != o.readOnly {
		errorf("readOnly %t, blockdev --getro says %t", d.ReadOnly, o.readOnly)
	}
	if d.Rotational != o.rotational {
		errorf("rotational %t, the kernel's queue/rotational says %t", d.Rotational, o.rotational)
	}
	if d.Removable != o.removable {
		errorf("removable %t, the kernel says %t", d.Removable, o.removable)
	}
	if d.Tier != prismv1.TierOther || !strings.Contains(strings.ToLower(d.TierReason), "loop") {
		errorf("tier %q (%q), want Other with a reason mentioning loop", d.Tier, d.TierReason)
	}
	if !slices.Equal(sorted(d.Partitions), o.partitions) {
		errorf("partitions %v, /proc/partitions says %v", d.Partitions, o.partitions)
	}
	if !slices.Equal(sorted(d.Holders), o.holders) {
		errorf("holders %v, the kernel says %v", d.Holders, o.holders)
	}

	// Signatures: the names must be blkid's TYPE/PTTYPE, each at an offset wipefs lists.
	var sigNames []string
	for _, s := range d.Signatures {
		if !slices.Contains(sigNames, s.Name) {
			sigNames = append(sigNames, s.Name)
		}
		if !slices.Contains(o.wipefs, sigAt{s.Name, s.OffsetBytes}) {
			errorf("signature %s at offset %d: wipefs lists no such signature (it lists %v)", s.Name, s.OffsetBytes, o.wipefs)
		}
		if k, ok := wantKind[s.Name]; ok && s.Kind != k {
			errorf("signature %s has kind %s, want %s", s.Name, s.Kind, k)
		}
	}
	if slices.Sort(sigNames); !slices.Equal(sigNames, o.blkid) {
		errorf("signatures %v, blkid -p says %v", d.Signatures, o.blkid)
	}

	// Stable path: only from a real /dev/disk/by-id link.
	switch {
	case len(o.byID) == 0 && d.StablePath != "":
		errorf("stablePath %q, but no /dev/disk/by-id link resolves to %s", d.StablePath, l.dev)
	case len(o.byID) > 0 && !slices.Contains(o.byID, strings.TrimPrefix(d.StablePath, "/dev/disk/by-id/")):
		errorf("stablePath %q, want one of the by-id links %v", d.StablePath, o.byID)
	}

	// Eligibility: exactly the filters the oracles say must fail.
	wantFail := expectedFilters(o)
	designed := slices.Clone(l.wantFilters)
	if len(o.byID) == 0 {
		designed = append(designed, prismv1.FilterHasStablePath)
	}
	if slices.Sort(designed); !slices.Equal(designed, wantFail) {
		t.Fatalf("test setup: %s (%s) was meant to fail %v, but the oracles say %v", l.name, l.role, designed, wantFail)
	}
	gotFail := filterNames(d.Eligibility.Reasons)
	if !slices.Equal(gotFail, wantFail) {
		errorf("failing filters %v, want exactly %v (reasons: %+v)", gotFail, wantFail, d.Eligibility.Reasons)
	}
	if d.Eligibility.Eligible != (len(wantFail) == 0) {
		errorf("eligible %t with failing filters %v", d.Eligibility.Eligible, gotFail)
	}
	for _, r := range d.Eligibility.Reasons {
		switch r.Filter {
		case prismv1.FilterNoSignatures:
			for _, n := range o.blkid {
				if !strings.Contains(r.Message, n) {
					errorf("NoSignatures reason %q does not name %s", r.Message, n)
				}
			}
		case prismv1.FilterNoPartitions:
			for _, p := range o.partitions {
				if !strings.Contains(r.Message, p) {
					errorf("NoPartitions reason %q does not name %s", r.Message, p)
				}
			}
		}
	}
}

var wantKind = map[string]prismv1.SignatureKind{
	"gpt": prismv1.SignaturePartitionTable, "ext4": prismv1.SignatureFilesystem, "xfs": prismv1.SignatureFilesystem,
}

// expectedFilters derives the failing filters from the oracles alone.
func expectedFilters(o oracle) []string {
	var f []string
	add := func(cond bool, name string) {
		if cond {
			f = append(f, name)
		}
	}
	add(o.readOnly, prismv1.FilterNotReadOnly)
	add(o.removable, prismv1.FilterNotRemovable)
	add(o.size < cephMinimumBytes, prismv1.FilterMinimumSize)
	add(len(o.partitions) > 0, prismv1.FilterNoPartitions)
	add(len(o.holders) > 0, prismv1.FilterNoHolders)
	add(len(o.blkid) > 0 || len(o.wipefs) > 0, prismv1.FilterNoSignatures)
	add(len(o.byID) == 0, prismv1.FilterHasStablePath)
	slices.Sort(f)
	return f
}

// summary is what the CLI and the library must agree on for one device.
type summary struct {
	Size                   int64
	ReadOnly, Rotational   bool
	Tier                   prismv1.Tier
	TierReason, StablePath string
	Eligible               bool
	Reasons                []prismv1.EligibilityReason
	Signatures             []prismv1.DeviceSignature
	Partitions             []string
}

func summarize(d prismv1.Device) summary {
	return summary{
		Size: d.SizeBytes, ReadOnly: d.ReadOnly, Rotational: d.Rotational,
		Tier: d.Tier, TierReason: d.TierReason, StablePath: d.StablePath,
		Eligible: d.Eligibility.Eligible, Reasons: orNil(d.Eligibility.Reasons),
		Signatures: orNil(d.Signatures), Partitions: orNil(d.Partitions),
	}
}

// orNil makes empty and nil slices compare equal (JSON drops both).
func orNil[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// runCLI builds prism-agent and runs `prism-agent inventory --include-loop --no-identify
// --ignore-ancestor-processes -o json`.
func runCLI(ctx context.Context, t *testing.T) inventorydoc.Document {
	t.Helper()
	goTool, err := exec.LookPath("go") // go test puts GOROOT/bin first in PATH
	if err != nil {
		t.Fatalf("go tool not found to build prism-agent: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "prism-agent")
	start := time.Now()
	mustRun(ctx, t, goBuild, goTool, "build", "-buildvcs=false", "-o", bin, "github.com/prism-storage/prism/cmd/agent")
	t.Logf("built prism-agent in %v", time.Since(start).Round(time.Millisecond))
	// --ignore-ancestor-processes: a sandbox's supervisor (this test's ancestor) may hide its
	// open files even from root, which fails the scan for the processes holding a device open.
	out := mustRun(ctx, t, quick, bin, "inventory", "--include-loop", "--no-identify", "--ignore-ancestor-processes", "-o", "json")
	var doc inventorydoc.Document
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decoding prism-agent JSON: %v\n%s", err, out)
	}
	return doc
}

// observe asks blockdev, blkid, wipefs, /proc/partitions, the kernel and /dev/disk/by-id
// about a loop device.
func observe(ctx context.Context, t *testing.T, tl map[string]string, l *loop) oracle {
	t.Helper()
	var o oracle
	out := strings.Fields(mustRun(ctx, t, quick, tl["blockdev"], "--getsize64", "--getss", "--getpbsz", "--getro", l.dev))
	if len(out) != 4 {
		t.Fatalf("blockdev %s printed %q, want 4 numbers", l.dev, out)
	}
	o.size, o.logical, o.physical = atoi(t, out[0]), atoi(t, out[1]), atoi(t, out[2])
	o.readOnly = atoi(t, out[3]) == 1
	o.rotational = readSysInt(t, l.name, "queue/rotational") == 1
	o.removable = readSysInt(t, l.name, "removable") == 1

	o.blkid = blkidNames(ctx, t, tl["blkid"], l.dev)
	for _, line := range strings.Split(strings.TrimSpace(mustRun(ctx, t, quick, tl["wipefs"], "--no-act", "--noheadings", "--parsable", "--output", "OFFSET,TYPE", l.dev)), "\n") {
		if line == "" {
			continue
		}
		off, typ, ok := strings.Cut(line, ",")
		n, err := strconv.ParseInt(off, 0, 64)
		if !ok || err != nil {
			t.Fatalf("wipefs %s: cannot parse %q", l.dev, line)
		}
		o.wipefs = append(o.wipefs, sigAt{typ, n})
	}

	o.partitions = kernelPartitions(t, l.name)
	entries, err := os.ReadDir(sysBlock(l.name, "holders"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		o.holders = append(o.holders, e.Name())
	}
	o.byID = byIDLinks(t, l.dev)
	return o
}

// blkidNames returns blkid's low-level probe TYPE and PTTYPE values, sorted.
func blkidNames(ctx context.Context, t *testing.T, blkid, dev string) []string {
	t.Helper()
	out, err := run(ctx, quick, blkid, "-p", "-o", "export", dev)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return nil // blkid found nothing
	} else if err != nil {
		t.Fatal(err)
	}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, _ := strings.Cut(sc.Text(), "="); k == "TYPE" || k == "PTTYPE" {
			names = append(names, v)
		}
	}
	slices.Sort(names)
	return names
}

// kernelPartitions lists the partitions /proc/partitions has for a disk.
func kernelPartitions(t *testing.T, disk string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/partitions")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue
		}
		if rest, ok := strings.CutPrefix(f[3], disk+"p"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			parts = append(parts, f[3])
		}
	}
	slices.Sort(parts)
	return parts
}

// byIDLinks returns the /dev/disk/by-id names that resolve to dev.
func byIDLinks(t *testing.T, dev string) []string {
	t.Helper()
	entries, err := os.ReadDir("/dev/disk/by-id")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, e := range entries {
		if target, err := filepath.EvalSymlinks(filepath.Join("/dev/disk/by-id", e.Name())); err == nil && target == dev {
			links = append(links, e.Name())
		}
	}
	return links
}

// state is what must not change while Prism takes an inventory.
type state struct {
	head, tail [sha256.Size]byte // first 2 MiB, last 1 MiB of the device
	mtime      time.Time         // backing file
	fileSize   int64
	writes     string // write, discard and flush counters from /sys/block/<dev>/stat
}

func snapshot(t *testing.T, loops map[string]*loop, want map[string]oracle) map[string]state {
	t.Helper()
	s := map[string]state{}
	for role, l := range loops {
		var st state
		f, err := os.OpenFile(l.dev, os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		st.head = hashRange(t, f, 0, 2*mib)
		st.tail = hashRange(t, f, want[role].size-mib, mib)
		f.Close()
		fi, err := os.Stat(l.file)
		if err != nil {
			t.Fatal(err)
		}
		st.mtime, st.fileSize = fi.ModTime(), fi.Size()
		stat := strings.Fields(readSys(t, l.name, "stat"))
		// Fields (Documentation/block/stat.rst): 4 write I/Os, 6 write sectors, 11 discard I/Os, 15 flush I/Os.
		for _, i := range []int{4, 6, 11, 15} {
			if i < len(stat) {
				st.writes += stat[i] + " "
			}
		}
		s[l.name] = st
	}
	return s
}

func hashRange(t *testing.T, f *os.File, off, n int64) [sha256.Size]byte {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, off, n)); err != nil {
		t.Fatalf("reading %s at %d: %v", f.Name(), off, err)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

func compareSnapshots(t *testing.T, when string, before, after map[string]state) {
	t.Helper()
	for name, b := range before {
		a := after[name]
		if a.head != b.head {
			t.Errorf("%s: first 2 MiB changed %s", name, when)
		}
		if a.tail != b.tail {
			t.Errorf("%s: last 1 MiB changed %s", name, when)
		}
		if !a.mtime.Equal(b.mtime) || a.fileSize != b.fileSize {
			t.Errorf("%s: backing file changed %s: mtime %v -> %v, size %d -> %d", name, when, b.mtime, a.mtime, b.fileSize, a.fileSize)
		}
		if a.writes != b.writes {
			t.Errorf("%s: kernel write/discard/flush counters changed %s: %q -> %q", name, when, b.writes, a.writes)
		}
	}
}

// attach creates a sparse backing file and attaches it to a free loop device. The cleanup
// detaches every loop device backed by the file, even if losetup's output was lost.
func attach(ctx context.Context, t *testing.T, tl map[string]string, dir string, s loopSpec) *loop {
	t.Helper()
	file := filepath.Join(dir, s.role+".img")
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(s.size) // sparse: costs no disk space
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { detachAll(t, tl["losetup"], file) })
	args := append(append([]string{"--find", "--show"}, s.losetupArgs...), file)
	dev := strings.TrimSpace(mustRun(ctx, t, quick, tl["losetup"], args...))
	if !strings.HasPrefix(dev, "/dev/loop") {
		t.Fatalf("losetup %v printed %q, want /dev/loopN", args, dev)
	}
	stale, err := loopdevs.DropStalePartitions(ctx, tl["partx"], dev)
	if len(stale) > 0 {
		t.Logf("%s came with stale kernel partitions %v; removed them", dev, stale)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &loop{loopSpec: s, file: file, dev: dev, name: filepath.Base(dev)}
}

func detachAll(t *testing.T, losetup, file string) {
	// t.Context() is already canceled when cleanups run.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := run(ctx, quick, losetup, "--list", "--noheadings", "--output", "NAME", "--associated", file)
	if err != nil {
		t.Errorf("cleanup: finding the loop devices of %s: %v", file, err)
		return
	}
	for _, dev := range strings.Fields(out) {
		for attempt := 1; ; attempt++ {
			_, err := run(ctx, quick, losetup, "-d", dev)
			if err == nil {
				t.Logf("cleanup: detached %s", dev)
				break
			}
			if attempt == 10 {
				t.Errorf("cleanup: could not detach %s (backing %s): %v", dev, file, err)
				break
			}
			time.Sleep(200 * time.Millisecond) // udev may hold it open for a moment
		}
	}
}

// settleUdev waits for udev's queue when udev runs on this machine, so by-id links and
// partition nodes are in place before the oracles look.
func settleUdev(ctx context.Context, t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/run/udev/control"); err != nil {
		return
	}
	if udevadm, ok := lookTool("udevadm"); ok {
		if _, err := run(ctx, quick, udevadm, "settle", "--timeout=15"); err != nil {
			t.Logf("udevadm settle: %v", err)
		}
	}
}

// debianPackage names the Debian 12 package that ships each tool.
var debianPackage = map[string]string{
	"losetup": "mount", "blockdev": "util-linux", "blkid": "util-linux", "wipefs": "util-linux",
	"partx": "util-linux", "mkfs.ext4": "e2fsprogs", "mkfs.xfs": "xfsprogs", "sgdisk": "gdisk",
}

var aptUpdate sync.Once

// ensureTools returns the paths of the tools, installing missing ones with apt-get (the
// test runs as root, and CI is a fresh Debian machine).
func ensureTools(ctx context.Context, t *testing.T, names ...string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	var missing, pkgs []string
	for _, n := range names {
		if p, ok := lookTool(n); ok {
			paths[n] = p
			continue
		}
		missing = append(missing, n)
		if pkg := debianPackage[n]; !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(missing) == 0 {
		return paths
	}
	aptGet, ok := lookTool("apt-get")
	if !ok {
		t.Fatalf("missing %v (Debian packages %v) and no apt-get to install them: install them and rerun", missing, pkgs)
	}
	t.Logf("installing %v for %v", pkgs, missing)
	aptUpdate.Do(func() {
		if _, err := run(ctx, apt, aptGet, "update"); err != nil {
			t.Logf("apt-get update: %v", err)
		}
	})
	if _, err := run(ctx, apt, aptGet, append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...); err != nil {
		t.Fatalf("installing %v for %v: %v", pkgs, missing, err)
	}
	for _, n := range missing {
		p, ok := lookTool(n)
		if !ok {
			t.Fatalf("%s still missing after apt-get install %s", n, debianPackage[n])
		}
		paths[n] = p
	}
	return paths
}

// lookTool finds a tool in PATH or in the sbin directories a non-login root PATH may lack.
func lookTool(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// run runs argv (never through a shell) with a time limit and returns its stdout.
func run(ctx context.Context, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func mustRun(ctx context.Context, t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	out, err := run(ctx, timeout, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", limit, what)
		}
	}
}

func sysBlock(name, attr string) string { return filepath.Join("/sys/block", name, attr) }

func readSys(t *testing.T, name, attr string) string {
	t.Helper()
	b, err := os.ReadFile(sysBlock(name, attr))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func readSysInt(t *testing.T, name, attr string) int64 { return atoi(t, readSys(t, name, attr)) }

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func devicesByName(devs []prismv1.Device) map[string]prismv1.Device {
	m := map[string]prismv1.Device{}
	for _, d := range devs {
		m[d.Name] = d
	}
	return m
}

func names(devs []prismv1.Device) []string {
	var n []string
	for _, d := range devs {
		n = append(n, d.Name)
	}
	return n
}

func sigStrings(sigs []prismv1.DeviceSignature) []string {
	var s []string
	for _, sig := range sigs {
		s = append(s, fmt.Sprintf("%s(%s)@%d", sig.Name, sig.Kind, sig.OffsetBytes))
	}
	return s
}

// filterNames returns the names of the failing filters, sorted.
func filterNames(reasons []prismv1.EligibilityReason) []string {
	var f []string
	for _, r := range reasons {
		f = append(f, r.Filter)
	}
	slices.Sort(f)
	return f
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
