package provision

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// sparseFile is a sparse file of size bytes with each of puts written at its offset.
func sparseFile(t *testing.T, size int64, puts map[int64]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dev")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off, s := range puts {
		if _, err := f.WriteAt([]byte(s), off); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestSparseReadFindsTheFirstNonZeroSample(t *testing.T) {
	const size = 64*mib + 512 // the last sample is 512 bytes
	for _, tc := range []struct {
		name        string
		puts        map[int64]string
		start, size int64
		want        Sparse
	}{
		{"zeros", nil, 0, size, Sparse{Start: 0, Size: size, Samples: 65, NonZero: -1, At: -1}},
		{"a byte in sample 38", map[int64]string{37*mib + 100: "x"}, 0, size,
			Sparse{Start: 0, Size: size, Samples: 65, NonZero: 37, At: 37*mib + 100}},
		{"the earliest of several, whichever reader finds it", map[int64]string{60 * mib: "x", 9*mib + 4095: "y", 33 * mib: "z"}, 0, size,
			Sparse{Start: 0, Size: size, Samples: 65, NonZero: 9, At: 9*mib + 4095}},
		{"the last, short sample", map[int64]string{64*mib + 511: "x"}, 0, size,
			Sparse{Start: 0, Size: size, Samples: 65, NonZero: 64, At: 64*mib + 511}},
		// The grid is the range's, not the device's: sample 0 is the range's first byte.
		{"a range", map[int64]string{5*mib + 4096 + 200: "x"}, 4096, 8 * mib,
			Sparse{Start: 4096, Size: 8 * mib, Samples: 8, NonZero: 5, At: 5*mib + 4096 + 200}},
		// What the grid cannot see: bytes between samples.
		{"between samples", map[int64]string{3*mib + 4096: "x", 7*mib - 1: "y"}, 0, size,
			Sparse{Start: 0, Size: size, Samples: 65, NonZero: -1, At: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SparseRead(context.Background(), sparseFile(t, size, tc.puts), tc.start, tc.size)
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSparseReadErrorsAreNotEmpty(t *testing.T) {
	p := sparseFile(t, 8*mib, nil)
	if got, err := SparseRead(context.Background(), p, 0, 16*mib); err == nil {
		t.Errorf("a range past the end: %+v, no error", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := SparseRead(ctx, p, 0, 8*mib); err == nil {
		t.Errorf("cancelled: %+v, no error", got)
	}
	if got, err := SparseRead(context.Background(), filepath.Join(t.TempDir(), "none"), 0, 8*mib); err == nil {
		t.Errorf("no device: %+v, no error", got)
	}
	if got, err := SparseRead(context.Background(), p, 0, 0); err == nil {
		t.Errorf("an empty range: %+v, no error", got)
	}
}

func TestSparseString(t *testing.T) {
	s := Sparse{Start: 0, Size: 953000 * mib, Samples: 953000, NonZero: 38099, At: 38099*mib + 17}
	want := "non-zero bytes at byte 39949697041 (37.2 GiB; sample 38100 of 953000, 4096 bytes every 1 MiB)"
	if got := s.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// A file system in the middle of a device with no table (a deleted second partition's, say):
// zero where libblkid, Prism's detector and the heads and tails of the planned partitions look,
// not zero at a sample. Without a grant the device is refused whole and nothing is written;
// with one it is wiped and partitioned.
func TestReconcileDataInTheMiddleOfADeviceWithoutATable(t *testing.T) {
	fd := testPlan(t)
	at := fd.Slots[1].Partition.StartBytes + 512*mib // mid slot 2
	h := newFakeHost(t)
	h.put(at+1024, []byte("\x53\xef an ext4 superblock's neighbourhood"))
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || len(h.mutations()) != 0 {
		t.Fatalf("states %s, ran %q", got, h.mutations())
	}
	want := fmt.Sprintf("non-zero bytes at byte %d (%.1f GiB; sample %d of %d", at+1024, float64(at+1024)/float64(gib), at/mib+1, 12*gib/mib)
	if msg := res.Partitions[0].Message; !strings.Contains(msg, want) || !strings.Contains(msg, "allowWipe") {
		t.Errorf("refusal %q, want it to name %q", msg, want)
	}
	res = h.reconcile(nodePlan(t, fast))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("granted: %s: %+v", got, res.Partitions)
	}
}

// On Prism's table, a slot added later goes into a range no partition covered: the table
// grows into it only if its samples are zero too; otherwise that slot alone is refused.
func TestReconcileDataInTheMiddleOfARangeTheTableGrowsInto(t *testing.T) {
	fd := planFor(t, prismv1.CacheNone)
	one := &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{fd}}
	one.FastDevices[0].Slots = fd.Slots[:1]
	all := &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{fd}}
	h := newFakeHost(t)
	if got := states(h.reconcile(one).Partitions); got != "Ready" {
		t.Fatalf("slot 1 alone: %s", got)
	}
	at := fd.Slots[2].Partition.StartBytes + 700*mib
	h.put(at, []byte("old data"))
	h.ran = nil
	res := h.reconcile(all)
	if got := states(res.Partitions); got != "Ready,Ready,Refused" {
		t.Fatalf("states %s: %+v", got, res.Partitions)
	}
	want := fmt.Sprintf("the range of partition 3 (\"prism-db-02\" at %d MiB) is not empty: it holds non-zero bytes at byte %d", fd.Slots[2].Partition.StartBytes/mib, at)
	if msg := res.Partitions[2].Message; !strings.Contains(msg, want) || !strings.Contains(msg, "sample 701 of 2048") {
		t.Errorf("refusal %q, want %q and sample 701 of 2048", msg, want)
	}
	if table := h.table(); len(table.Partitions) != 2 {
		t.Errorf("the table has %d partitions, want slot 1 and the clean slot 2", len(table.Partitions))
	}
	all.AllowWipe = []string{fast}
	if got := states(h.reconcile(all).Partitions); got != "Ready,Ready,Ready" {
		t.Fatalf("granted: %s", got)
	}
}

// The pass that writes a device's first table reads the device sparsely once, under the hold
// and before the first write: the decision before the hold writes nothing, and reading an
// 800 GB device twice cost twenty minutes in the emulated e2e. A DryRun pass, which writes
// nothing, reads it once too, and so does each pass over a device that stays refused.
func TestAPassReadsANewDeviceOnce(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mode       prismv1.PolicyMode
		dataAt     int64 // where foreign bytes lie; 0 for none
		wantStates string
		wantReads  int
	}{
		{"Apply on an empty device", prismv1.ModeApply, 0, "Ready,Ready,Ready,Ready", 1},
		{"DryRun on an empty device", prismv1.ModeDryRun, 0, "Pending,Pending,Pending,Pending", 1},
		{"Apply on a device with data in the middle", prismv1.ModeApply, 7 * gib, "Refused,Refused,Refused,Refused", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHost(t)
			if tc.dataAt > 0 {
				h.put(tc.dataAt, []byte("old data"))
			}
			whole := 0
			r := h.runner()
			r.readSparse = func(ctx context.Context, path string, start, size int64) (Sparse, error) {
				if start == 0 && size == 12*gib {
					whole++
				}
				return SparseRead(ctx, path, start, size)
			}
			res := r.Reconcile(context.Background(), nodePlan(t), h.inventory(), tc.mode)
			if got := states(res.Partitions); got != tc.wantStates {
				t.Fatalf("states %s, want %s: %+v", got, tc.wantStates, res.Partitions)
			}
			if whole != tc.wantReads {
				t.Errorf("the pass read the whole device %d times, want %d", whole, tc.wantReads)
			}
			whole = 0
			r.Reconcile(context.Background(), nodePlan(t), h.inventory(), tc.mode)
			if tc.mode == prismv1.ModeApply && tc.dataAt == 0 && whole != 0 {
				t.Errorf("the pass after the first table read the whole device %d times, want none", whole)
			}
		})
	}
}
