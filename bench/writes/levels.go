package writes

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// RocksDB's own lines in a Ceph OSD log (debug_rocksdb 4, Ceph's default) after each flush and
// compaction: "[<column family>] Level summary: ... files[2 0 0 0 0 0 0] ..." and
// "[<column family>] compacted to: files[0 1 4 0 0 0 0] ...". Ceph 16.2's
// dump_objectstore_kv_stats prints only the default column family's level table, and BlueStore
// keeps its onodes, extents and omap in the sharded families (O-0, m-1, p-2, ...): these lines
// are where every family's levels show.
var levelMarkers = []string{"] Level summary: ", "] compacted to: "}

// LevelFiles reads an OSD log and returns each column family's number of SST files per level
// as its last such line says. A marked line without a well-formed files[...] is an error naming
// its line number.
func LevelFiles(log []byte) (map[string][]int, error) {
	out := map[string][]int{}
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		for _, m := range levelMarkers {
			i := strings.Index(line, m)
			if i < 0 {
				continue
			}
			open := strings.LastIndex(line[:i], "[")
			if open < 0 || open+1 >= i {
				return nil, fmt.Errorf("line %d: no [column family] before %q", n, strings.TrimSpace(m[1:]))
			}
			files, err := parseFiles(line[i+len(m):])
			if err != nil {
				return nil, fmt.Errorf("line %d: column family %s: %w", n, line[open+1:i], err)
			}
			out[line[open+1:i]] = files
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseFiles reads "files[2 0 0]" (the first one in s).
func parseFiles(s string) ([]int, error) {
	_, rest, ok := strings.Cut(s, "files[")
	if !ok {
		return nil, fmt.Errorf("files: no files[...]")
	}
	list, _, ok := strings.Cut(rest, "]")
	if !ok {
		return nil, fmt.Errorf("files: no closing ]")
	}
	var files []int
	for _, f := range strings.Fields(list) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("files: %q is not a file count", f)
		}
		files = append(files, v)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("files: empty")
	}
	return files, nil
}

// DeepestLevel is the deepest level holding a file in any column family (-1: none known).
func DeepestLevel(levels map[string][]int) int {
	deepest := -1
	for _, files := range levels {
		for l, n := range files {
			if n > 0 {
				deepest = max(deepest, l)
			}
		}
	}
	return deepest
}
