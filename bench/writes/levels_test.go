package writes

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestLevelFilesRealLog reads RocksDB lines of a Ceph 16.2.15 OSD log (testdata/osd-rocksdb.log,
// from a TestBenchWrites run: a flush of each sharded omap family p-0..p-2 and of P).
func TestLevelFilesRealLog(t *testing.T) {
	data, err := os.ReadFile("testdata/osd-rocksdb.log")
	if err != nil {
		t.Fatal(err)
	}
	got, err := LevelFiles(data)
	if err != nil {
		t.Fatal(err)
	}
	one := []int{1, 0, 0, 0, 0, 0, 0}
	want := map[string][]int{"p-0": one, "p-1": one, "p-2": one, "P": one}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LevelFiles = %v, want %v", got, want)
	}
	if d := DeepestLevel(got); d != 0 {
		t.Errorf("DeepestLevel = %d, want 0", d)
	}
}

func TestLevelFilesLastLineWins(t *testing.T) {
	log := "x 4 rocksdb: [O-0] Level summary: base level 1 level multiplier 10.00 max bytes base 33554432 files[3 0 0 0 0 0 0] max score 0.75\n" +
		"x 4 rocksdb: [m-1] Level summary: files[1 0 0 0 0 0 0] max score 0.25\n" +
		"x 4 rocksdb: (Original Log Time 2026/12/06-17:32:02.558177) [db_impl/compaction_job.cc:812] [O-0] compacted to: files[0 2 5 0 0 0 0] max score 0.90, MB/sec: 120.5 rd\n"
	got, err := LevelFiles([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"O-0": {0, 2, 5, 0, 0, 0, 0}, "m-1": {1, 0, 0, 0, 0, 0, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LevelFiles = %v, want %v", got, want)
	}
	if d := DeepestLevel(got); d != 2 {
		t.Errorf("DeepestLevel = %d, want 2", d)
	}
	if d := DeepestLevel(nil); d != -1 {
		t.Errorf("DeepestLevel(nil) = %d, want -1", d)
	}
}

func TestLevelFilesRejectsNamingTheLine(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{"a\n[O-0] Level summary: files[1 x 0]\n", "line 2: column family O-0: files: \"x\" is not a file count"},
		{"[O-0] compacted to: files[1 0\n", "line 1: column family O-0: files: no closing ]"},
		{"[O-0] Level summary: max score 1\n", "line 1: column family O-0: files: no files[...]"},
		{"[m] Level summary: files[]\n", "files: empty"},
		{"[] Level summary: files[1]\n", "line 1: no [column family]"},
		{"[p] Level summary: files[-1]\n", `"-1" is not a file count`},
	} {
		_, err := LevelFiles([]byte(tc.log))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LevelFiles(%q) = %v, want an error containing %q", tc.log, err, tc.want)
		}
	}
}

// FuzzLevelFiles: no panic; what it accepts has only non-negative counts, and DeepestLevel is
// within the longest list.
func FuzzLevelFiles(f *testing.F) {
	if data, err := os.ReadFile("testdata/osd-rocksdb.log"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("[O-0] compacted to: files[0 2 5] max score 0.9\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := LevelFiles(data)
		if err != nil {
			return
		}
		longest := 0
		for cf, files := range got {
			if cf == "" || len(files) == 0 {
				t.Fatalf("column family %q with %v", cf, files)
			}
			for _, n := range files {
				if n < 0 {
					t.Fatalf("%s: %v", cf, files)
				}
			}
			longest = max(longest, len(files))
		}
		if d := DeepestLevel(got); d >= longest {
			t.Fatalf("DeepestLevel %d with at most %d levels", d, longest)
		}
	})
}
