package gpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sfdisk", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// prismLayout is what testdata/capture.sh makes on a 12 GiB device: slots of 2 GiB from
// 1 MiB, then the cache up to the last MiB; upto limits the slots (a crash mid-way).
func prismLayout(slots, upto int, cache bool) []Partition {
	var ps []Partition
	for i := 0; i < upto; i++ {
		ps = append(ps, Partition{
			Number: i + 1, StartBytes: mib + int64(i)*2*gib, SizeBytes: 2 * gib,
			Name: "prism-db-0" + string(rune('0'+i)), TypeGUID: CephBlockDBTypeGUID,
		})
	}
	if cache {
		end := mib + int64(slots)*2*gib
		ps = append(ps, Partition{
			Number: slots + 1, StartBytes: end, SizeBytes: (12*gib - mib - end) / mib * mib,
			Name: "prism-cache", TypeGUID: LinuxFilesystemTypeGUID,
		})
	}
	return ps
}

// withoutUUIDs drops what differs between captures (random GUIDs), keeping what is compared.
func withoutUUIDs(t Table) Table {
	t.ID = ""
	t.Partitions = slices.Clone(t.Partitions)
	for i := range t.Partitions {
		t.Partitions[i].UUID = ""
	}
	return t
}

// TestParseSfdiskJSONRealCaptures parses the outputs of real sfdisk runs on loop devices
// (testdata/capture.sh) and checks them against what the capture script created.
func TestParseSfdiskJSONRealCaptures(t *testing.T) {
	gpt512 := func(ps []Partition) Table {
		return Table{Label: LabelGPT, SectorSize: 512, FirstLBA: 34, LastLBA: 12*gib/512 - 34, Partitions: ps}
	}
	for _, tc := range []struct {
		file string
		want Table
	}{
		{"gpt-empty.json", gpt512(nil)},
		{"prism-full.json", gpt512(prismLayout(3, 3, true))},
		{"prism-partial.json", gpt512(prismLayout(3, 2, false))},
		{"prism-4k.json", Table{Label: LabelGPT, SectorSize: 4096, FirstLBA: 6, LastLBA: 12*gib/4096 - 6, Partitions: prismLayout(3, 3, true)}},
		{"foreign-gap.json", gpt512([]Partition{
			{Number: 1, StartBytes: mib, SizeBytes: 100 * mib, Name: "data", TypeGUID: LinuxFilesystemTypeGUID},
			{Number: 3, StartBytes: 101 * mib, SizeBytes: 200 * mib, Name: "EFI System", TypeGUID: "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"},
		})},
		{"dos.json", Table{Label: LabelDOS, SectorSize: 512, Partitions: []Partition{
			{Number: 1, StartBytes: mib, SizeBytes: 100 * mib, TypeGUID: "83"},
			{Number: 2, StartBytes: 101 * mib, SizeBytes: 100 * mib, TypeGUID: "8e"},
		}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ParseSfdiskJSON(readFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.Label == LabelGPT {
				if !isGUID(got.ID) {
					t.Errorf("disk GUID %q", got.ID)
				}
				for _, p := range got.Partitions {
					if !isGUID(p.UUID) || p.UUID != strings.ToLower(p.UUID) {
						t.Errorf("partition %d UUID %q: want a lower-case GUID", p.Number, p.UUID)
					}
				}
			}
			if g := withoutUUIDs(got); !reflect.DeepEqual(g, withoutUUIDs(tc.want)) {
				t.Errorf("got  %+v\nwant %+v", g, tc.want)
			}
			// What sgdisk --clear makes has the usable sectors of Prism's own Layout.
			if got.Label == LabelGPT {
				l := Layout{SectorSize: got.SectorSize, Sectors: 12 * gib / got.SectorSize}
				if l.FirstUsable() != got.FirstLBA || l.LastUsable() != got.LastLBA {
					t.Errorf("Layout(12 GiB, %d) usable %d-%d; sfdisk says %d-%d", got.SectorSize, l.FirstUsable(), l.LastUsable(), got.FirstLBA, got.LastLBA)
				}
			}
		})
	}
}

// The real sfdisk exits 1 with this message for an empty device and for a bare filesystem;
// the captured stderr must still contain the text ReadTable looks for.
func TestNoTableMessageMatchesRealSfdisk(t *testing.T) {
	for _, f := range []string{"empty.stderr", "ext4.stderr"} {
		b := string(readFixture(t, f))
		if !strings.HasPrefix(b, "exit status 1\n") || !strings.Contains(b, NoTableMessage) {
			t.Errorf("%s: %q does not show exit status 1 with %q", f, b, NoTableMessage)
		}
	}
}

func TestParseSfdiskJSONErrorsNameTheField(t *testing.T) {
	const head = `{"partitiontable":{"label":"gpt","unit":"sectors","firstlba":34,"lastlba":2000,"sectorsize":512,"partitions":[`
	part := func(s string) string { return head + s + `]}}` }
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "  \n", "empty output"},
		{"not json", "sfdisk: oops", "sfdisk --json"},
		{"no table", `{"foo":1}`, "no partitiontable"},
		{"no label", `{"partitiontable":{"unit":"sectors","sectorsize":512}}`, "partitiontable.label"},
		{"bytes unit", `{"partitiontable":{"label":"dos","unit":"bytes","sectorsize":512}}`, "partitiontable.unit"},
		{"no sector size", `{"partitiontable":{"label":"dos","unit":"sectors"}}`, "partitiontable.sectorsize is missing"},
		{"odd sector size", `{"partitiontable":{"label":"dos","unit":"sectors","sectorsize":520}}`, "partitiontable.sectorsize"},
		{"gpt without lba", `{"partitiontable":{"label":"gpt","unit":"sectors","sectorsize":512}}`, "firstlba and lastlba"},
		{"lba backwards", `{"partitiontable":{"label":"gpt","unit":"sectors","sectorsize":512,"firstlba":50,"lastlba":40}}`, "firstlba 50 and lastlba 40"},
		{"node without number", part(`{"node":"/dev/sda","start":2048,"size":8,"type":"83"}`), "partitions[0].node"},
		{"duplicate number", part(`{"node":"/dev/sda1","start":2048,"size":8,"type":"83"},{"node":"/dev/sda1","start":4096,"size":8,"type":"83"}`), "partitions[1].node"},
		{"no start", part(`{"node":"/dev/sda1","size":8,"type":"83"}`), "partitions[0].start is missing"},
		{"no size", part(`{"node":"/dev/sda1","start":2048,"type":"83"}`), "partitions[0].size is missing"},
		{"negative start", part(`{"node":"/dev/sda1","start":-1,"size":8,"type":"83"}`), "partitions[0].start -1"},
		{"zero size", part(`{"node":"/dev/sda1","start":2048,"size":0,"type":"83"}`), "partitions[0].size 0"},
		{"overflow", part(`{"node":"/dev/sda1","start":2048,"size":18014398509481983,"type":"83"}`), "partitions[0].size"},
		{"no type", part(`{"node":"/dev/sda1","start":2048,"size":8}`), "partitions[0].type is missing"},
		{"huge number", part(`{"node":"/dev/sda99999999999","start":2048,"size":8,"type":"83"}`), "partitions[0].node"},
		{"string start", part(`{"node":"/dev/sda1","start":"2048","size":8,"type":"83"}`), "sfdisk --json"},
	} {
		_, err := ParseSfdiskJSON([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestParseSfdiskJSONSortsAndIgnoresUnknownFields(t *testing.T) {
	in := `{"partitiontable":{"label":"gpt","id":"ABC","unit":"sectors","firstlba":34,"lastlba":99999,"sectorsize":512,"grain":"1048576","partitions":[
		{"node":"/dev/nvme0n1p10","start":4096,"size":2048,"type":"0FC63DAF-8483-4772-8E79-3D69D8477DE4","attrs":"RequiredPartition","name":"b"},
		{"node":"/dev/nvme0n1p2","start":2048,"size":2048,"type":"0FC63DAF-8483-4772-8E79-3D69D8477DE4","name":"a"}]}}`
	got, err := ParseSfdiskJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Partitions) != 2 || got.Partitions[0].Number != 2 || got.Partitions[1].Number != 10 || got.ID != "abc" {
		t.Fatalf("got %+v", got)
	}
	if p, ok := got.Partition(10); !ok || p.Name != "b" || p.StartBytes != 4096*512 || p.EndBytes() != 6144*512 || p.TypeGUID != LinuxFilesystemTypeGUID {
		t.Fatalf("Partition(10) = %+v, %t", p, ok)
	}
	if _, ok := got.Partition(1); ok {
		t.Fatal("Partition(1) found a partition that is not there")
	}
}

// fakeExec answers one command with canned output or an error.
type fakeExec struct {
	out  []byte
	err  error
	argv [][]string
}

func (f *fakeExec) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	f.argv = append(f.argv, argv)
	return f.out, f.err
}

func TestReadTable(t *testing.T) {
	ctx := context.Background()
	// Exactly what the real sfdisk does on an empty device (testdata/sfdisk/empty.stderr).
	noTable := &hostexec.ExitError{Argv: ReadTableArgv("/dev/loop8"), ExitCode: 1, Stderr: "sfdisk: /dev/loop8: does not contain a recognized partition table"}
	f := &fakeExec{err: noTable}
	tab, err := ReadTable(ctx, f, "/dev/loop8")
	if err != nil || tab.HasTable() {
		t.Fatalf("empty device: %+v, %v", tab, err)
	}
	if want := [][]string{{"sfdisk", "--json", "/dev/loop8"}}; !reflect.DeepEqual(f.argv, want) {
		t.Fatalf("ran %q, want %q", f.argv, want)
	}

	// Any other failure is an error, never "empty": a device we cannot read is not empty.
	for _, e := range []error{
		&hostexec.ExitError{Argv: ReadTableArgv("/dev/loop8"), ExitCode: 1, Stderr: "sfdisk: cannot open /dev/loop8: Permission denied"},
		errors.New("running sfdisk: exec: \"sfdisk\": executable file not found in $PATH"),
	} {
		if _, err := ReadTable(ctx, &fakeExec{err: e}, "/dev/loop8"); err == nil || !strings.Contains(err.Error(), "/dev/loop8") {
			t.Errorf("%v: got %v, want an error naming the device", e, err)
		}
	}
	if _, err := ReadTable(ctx, &fakeExec{out: []byte("garbage")}, "/dev/loop8"); err == nil {
		t.Error("garbage output: want an error")
	}
	tab, err = ReadTable(ctx, &fakeExec{out: readFixture(t, "prism-full.json")}, "/dev/loop8")
	if err != nil || len(tab.Partitions) != 4 {
		t.Fatalf("prism-full: %+v, %v", tab, err)
	}
}

func TestFormatBytes(t *testing.T) {
	if got := FormatBytes(2 * gib); got != "2048 MiB" {
		t.Error(got)
	}
	if got := FormatBytes(512); got != "512 bytes" {
		t.Error(got)
	}
}
