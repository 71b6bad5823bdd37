package gpt

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

func testLayout(ss int64) Layout {
	l := Layout{SectorSize: ss, Sectors: 12 * gib / ss, DiskGUID: DerivedGUID("disk", "/dev/disk/by-id/test")}
	for i, name := range []string{"prism-db-00", "prism-db-01"} {
		first := (mib + int64(i)*2*gib) / ss
		l.Entries = append(l.Entries, Entry{Number: i + 1, TypeGUID: CephBlockDBTypeGUID, UUID: DerivedGUID("partition", name),
			FirstLBA: first, LastLBA: first + 2*gib/ss - 1, Name: name})
	}
	l.Entries = append(l.Entries, Entry{Number: 4, TypeGUID: LinuxFilesystemTypeGUID, UUID: DerivedGUID("partition", "cache"),
		FirstLBA: (mib + 4*gib) / ss, LastLBA: l.LastUsable(), Name: "prism-cache"})
	return l
}

func ownTest(e Entry) bool {
	return strings.HasPrefix(e.Name, "prism-") && (e.TypeGUID == CephBlockDBTypeGUID || e.TypeGUID == LinuxFilesystemTypeGUID)
}

// writeFile makes a sparse 12 GiB file holding the first n writes of l (all when n < 0), the
// last of them torn to half when torn.
func writeFile(t *testing.T, l Layout, n int, torn bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(12 * gib); err != nil {
		t.Fatal(err)
	}
	ws, err := l.Writes()
	if err != nil {
		t.Fatal(err)
	}
	if n >= 0 {
		ws = ws[:n]
	}
	for i, w := range ws {
		data := w.Data
		if torn && i == len(ws)-1 {
			data = data[:len(data)/2]
		}
		if _, err := f.WriteAt(data, w.Offset); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func readFile(t *testing.T, path string, ss int64) Disk {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := ReadDisk(f, 12*gib, ss)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The table Prism writes is read back whole by Prism, and as the same table by the real
// tools: sfdisk (libfdisk), sgdisk --verify (gdisk) and blkid --probe (libblkid).
func TestLayoutIsReadByTheRealTools(t *testing.T) {
	for _, ss := range []int64{512, 4096} {
		l := testLayout(ss)
		path := writeFile(t, l, -1, false)
		d := readFile(t, path, ss)
		if !d.Complete() || d.Foreign(l.DiskGUID, ownTest) != nil {
			t.Fatalf("%d: %s, foreign %q", ss, d, d.Foreign(l.DiskGUID, ownTest))
		}
		tab := d.Table()
		if tab.ID != l.DiskGUID || len(tab.Partitions) != 3 || tab.Partitions[2].Number != 4 || tab.Partitions[0].UUID != l.Entries[0].UUID {
			t.Fatalf("%d: table %+v", ss, tab)
		}
		if ss != 512 {
			continue // the tools read a regular file with 512-byte sectors
		}
		ctx := context.Background()
		if _, err := exec.LookPath("sfdisk"); err == nil {
			theirs, err := ReadTable(ctx, hostexec.Local{}, path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.EqualFold(theirs.ID, tab.ID) || len(theirs.Partitions) != 3 {
				t.Fatalf("sfdisk reads %+v", theirs)
			}
			for i, p := range theirs.Partitions {
				q := tab.Partitions[i]
				if p.Number != q.Number || p.StartBytes != q.StartBytes || p.SizeBytes != q.SizeBytes || p.Name != q.Name || p.TypeGUID != q.TypeGUID || p.UUID != q.UUID {
					t.Errorf("sfdisk reads %s, Prism wrote %s", p, q)
				}
			}
		} else {
			t.Log("sfdisk not installed: skipping its check (hack/install-deps.sh test installs it)")
		}
		if _, err := exec.LookPath("sgdisk"); err == nil {
			out, err := exec.Command("sgdisk", "--verify", path).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "No problems found") {
				t.Errorf("sgdisk --verify: %v\n%s", err, out)
			}
		} else {
			t.Log("sgdisk not installed: skipping its check")
		}
		out, err := exec.Command("blkid", "--probe", "--output", "export", path).Output()
		if err != nil || !strings.Contains(string(out), "PTTYPE=gpt") || !strings.Contains(string(out), "PTUUID="+l.DiskGUID) {
			t.Errorf("blkid --probe: %v\n%s", err, out)
		}
	}
}

// Every state a crash can leave while Prism writes its table (after any number of its
// writes, the last one torn or not) holds only Prism's structures and zeros, and is complete
// only after the last write. The same bytes under another disk GUID are someone else's.
func TestEveryCrashStateIsPrismsOwn(t *testing.T) {
	l := testLayout(512)
	for n := 0; n <= 5; n++ {
		for _, torn := range []bool{false, true} {
			if torn && n == 0 {
				continue
			}
			d := readFile(t, writeFile(t, l, n, torn), 512)
			if f := d.Foreign(l.DiskGUID, ownTest); f != nil {
				t.Errorf("after %d writes (torn %t): foreign %q", n, torn, f)
			}
			if d.Complete() != (n == 5 && !torn) {
				t.Errorf("after %d writes (torn %t): complete %t (%s)", n, torn, d.Complete(), d)
			}
			if d.Blank() != (n == 0) {
				t.Errorf("after %d writes: blank %t", n, d.Blank())
			}
			if n > 0 && len(d.Foreign(DerivedGUID("someone else"), func(Entry) bool { return false })) == 0 {
				t.Errorf("after %d writes (torn %t): not foreign to another owner", n, torn)
			}
		}
	}
}

// A complete table whose partitions are all Prism's is Prism's whatever its disk GUID (the
// tables sgdisk wrote for Prism before Prism wrote its own); a complete table with any other
// partition, or an empty one, is not.
func TestCompleteTablesOfOthers(t *testing.T) {
	l := testLayout(512)
	l.DiskGUID = "5af06f18-dd3f-4b24-8f57-031b6e51cea7"
	if f := readFile(t, writeFile(t, l, -1, false), 512).Foreign(DerivedGUID("x"), ownTest); f != nil {
		t.Errorf("an all-Prism table: %q", f)
	}
	l.Entries[0].Name = "data"
	if f := readFile(t, writeFile(t, l, -1, false), 512).Foreign(DerivedGUID("x"), ownTest); len(f) != 1 || !strings.Contains(f[0], "a GPT Prism did not write") {
		t.Errorf("a table with a foreign partition: %q", f)
	}
	l.Entries = nil
	if f := readFile(t, writeFile(t, l, -1, false), 512).Foreign(DerivedGUID("x"), ownTest); len(f) != 1 {
		t.Errorf("an empty table: %q", f)
	}
}

func TestLayoutCheck(t *testing.T) {
	good := testLayout(512)
	for _, tc := range []struct {
		name string
		mod  func(*Layout)
		want string
	}{
		{"overlap", func(l *Layout) { l.Entries[1].FirstLBA = l.Entries[0].LastLBA }, "overlap"},
		{"before the first usable sector", func(l *Layout) { l.Entries[0].FirstLBA = 33 }, "outside the usable sectors"},
		{"after the last usable sector", func(l *Layout) { l.Entries[2].LastLBA = l.LastUsable() + 1 }, "outside the usable sectors"},
		{"number twice", func(l *Layout) { l.Entries[1].Number = 1 }, "appears twice"},
		{"number 129", func(l *Layout) { l.Entries[1].Number = 129 }, "partition number 129"},
		{"bad GUID", func(l *Layout) { l.DiskGUID = "x" }, "not a GUID"},
		{"long name", func(l *Layout) { l.Entries[0].Name = strings.Repeat("n", 37) }, "36"},
		{"sector size", func(l *Layout) { l.SectorSize = 1000 }, "sector size 1000"},
		{"tiny device", func(l *Layout) { l.Sectors = 60 }, "too small"},
	} {
		l := good
		l.Entries = append([]Entry(nil), good.Entries...)
		tc.mod(&l)
		if _, err := l.Writes(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzReadDisk: any bytes in a table's regions read without panicking; a complete table
// read back is written again byte for byte.
func FuzzReadDisk(f *testing.F) {
	ws, _ := testLayout(512).Writes()
	var seed []byte
	for _, w := range ws {
		seed = append(seed, w.Data...)
	}
	f.Add(seed)
	f.Add(make([]byte, 34*512))
	f.Fuzz(func(t *testing.T, data []byte) {
		const sectors = 128
		img := make([]byte, sectors*512)
		regions := Layout{SectorSize: 512, Sectors: sectors}.Regions()
		for _, r := range regions {
			n := copy(img[r.Offset:r.Offset+int64(len(r.Data))], data)
			data = data[n:]
		}
		d, err := ReadDisk(bytes.NewReader(img), int64(len(img)), 512)
		if err != nil {
			t.Fatal(err)
		}
		_ = d.Foreign(DerivedGUID("x"), ownTest)
		_ = d.String()
		if !d.Complete() {
			return
		}
		c, _ := d.Best()
		l := Layout{SectorSize: 512, Sectors: sectors, DiskGUID: c.DiskGUID, Entries: c.Entries}
		again, err := l.Writes()
		if err != nil {
			return // entries Prism would not write (overlaps, bad names): read, never rewritten as they are
		}
		for i, w := range again {
			if i == 4 {
				continue // any protective MBR counts; Prism writes its own
			}
			if !bytes.Equal(img[w.Offset:w.Offset+int64(len(w.Data))], w.Data) {
				t.Fatalf("%s read as complete but written back differently", w.What)
			}
		}
	})
}
