package gpt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// NoTableMessage is what sfdisk prints (and exits non-zero) for a device without a partition
// table, e.g. an empty disk or one holding a bare filesystem.
const NoTableMessage = "does not contain a recognized partition table"

// ReadTableArgv is `sfdisk --json <dev>`: the table in machine-readable form. It only reads.
func ReadTableArgv(dev string) []string { return []string{"sfdisk", "--json", dev} }

// ReadTable reads dev's partition table with sfdisk. A device without a recognised table
// gives the zero Table and no error.
func ReadTable(ctx context.Context, exec hostexec.Executor, dev string) (Table, error) {
	out, err := exec.Run(ctx, ReadTableArgv(dev), nil)
	if err != nil {
		var exitErr *hostexec.ExitError
		if errors.As(err, &exitErr) && strings.Contains(exitErr.Stderr, NoTableMessage) {
			return Table{}, nil
		}
		return Table{}, fmt.Errorf("reading the partition table of %s: %w", dev, err)
	}
	t, err := ParseSfdiskJSON(out)
	if err != nil {
		return Table{}, fmt.Errorf("reading the partition table of %s: %w", dev, err)
	}
	return t, nil
}

// sfdiskDoc is `sfdisk --json` output (util-linux 2.38). Pointers tell missing from zero.
type sfdiskDoc struct {
	PartitionTable *struct {
		Label      string       `json:"label"`
		ID         string       `json:"id"`
		Device     string       `json:"device"`
		Unit       string       `json:"unit"`
		FirstLBA   *int64       `json:"firstlba"`
		LastLBA    *int64       `json:"lastlba"`
		SectorSize *int64       `json:"sectorsize"`
		Partitions []sfdiskPart `json:"partitions"`
	} `json:"partitiontable"`
}

type sfdiskPart struct {
	Node  string `json:"node"`
	Start *int64 `json:"start"`
	Size  *int64 `json:"size"`
	Type  string `json:"type"`
	UUID  string `json:"uuid"`
	Name  string `json:"name"`
}

// ParseSfdiskJSON parses `sfdisk --json` output. Every error names the offending field.
// Unknown fields are ignored (newer sfdisk versions add some); the partition number comes from
// the trailing digits of "node", which is how sfdisk names partitions (/dev/sda3,
// /dev/nvme0n1p3, /dev/loop0p3).
func ParseSfdiskJSON(data []byte) (Table, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Table{}, errors.New("sfdisk --json: empty output")
	}
	var doc sfdiskDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return Table{}, fmt.Errorf("sfdisk --json: %w", err)
	}
	pt := doc.PartitionTable
	if pt == nil {
		return Table{}, errors.New("sfdisk --json: no partitiontable object")
	}
	if pt.Label == "" {
		return Table{}, errors.New("sfdisk --json: partitiontable.label is missing")
	}
	if pt.Unit != "sectors" {
		return Table{}, fmt.Errorf("sfdisk --json: partitiontable.unit is %q, want sectors", pt.Unit)
	}
	if pt.SectorSize == nil {
		return Table{}, errors.New("sfdisk --json: partitiontable.sectorsize is missing")
	}
	ss := *pt.SectorSize
	if err := checkSectorSize(ss); err != nil {
		return Table{}, fmt.Errorf("sfdisk --json: partitiontable.sectorsize: %w", err)
	}
	t := Table{Label: pt.Label, ID: strings.ToLower(pt.ID), SectorSize: ss}
	maxSectors := math.MaxInt64 / ss
	if pt.Label == LabelGPT || pt.FirstLBA != nil || pt.LastLBA != nil {
		if pt.FirstLBA == nil || pt.LastLBA == nil {
			return Table{}, fmt.Errorf("sfdisk --json: partitiontable.firstlba and lastlba are required for a %s table", pt.Label)
		}
		t.FirstLBA, t.LastLBA = *pt.FirstLBA, *pt.LastLBA
		if t.FirstLBA < 0 || t.LastLBA < t.FirstLBA || t.LastLBA >= maxSectors {
			return Table{}, fmt.Errorf("sfdisk --json: partitiontable.firstlba %d and lastlba %d do not make a sector range", t.FirstLBA, t.LastLBA)
		}
	}
	seen := map[int]bool{}
	for i, p := range pt.Partitions {
		field := fmt.Sprintf("partitiontable.partitions[%d]", i)
		n, err := partitionNumber(p.Node)
		if err != nil {
			return Table{}, fmt.Errorf("sfdisk --json: %s.node: %w", field, err)
		}
		if seen[n] {
			return Table{}, fmt.Errorf("sfdisk --json: %s.node %q: partition number %d appears twice", field, p.Node, n)
		}
		seen[n] = true
		if p.Start == nil {
			return Table{}, fmt.Errorf("sfdisk --json: %s.start is missing", field)
		}
		if p.Size == nil {
			return Table{}, fmt.Errorf("sfdisk --json: %s.size is missing", field)
		}
		start, size := *p.Start, *p.Size
		if start < 0 || start >= maxSectors {
			return Table{}, fmt.Errorf("sfdisk --json: %s.start %d is out of range", field, start)
		}
		if size <= 0 || size > maxSectors-start {
			return Table{}, fmt.Errorf("sfdisk --json: %s.size %d is out of range", field, size)
		}
		if p.Type == "" {
			return Table{}, fmt.Errorf("sfdisk --json: %s.type is missing", field)
		}
		t.Partitions = append(t.Partitions, Partition{
			Number: n, StartBytes: start * ss, SizeBytes: size * ss,
			Name: p.Name, TypeGUID: strings.ToLower(p.Type), UUID: strings.ToLower(p.UUID),
		})
	}
	sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].Number < t.Partitions[j].Number })
	return t, nil
}

// partitionNumber is the number at the end of a partition's device node.
func partitionNumber(node string) (int, error) {
	end := len(node)
	i := end
	for i > 0 && node[i-1] >= '0' && node[i-1] <= '9' {
		i--
	}
	if i == end {
		return 0, fmt.Errorf("%q does not end in a partition number", node)
	}
	n, err := strconv.Atoi(node[i:])
	if err != nil || n < 1 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%q: partition number %q is out of range", node, node[i:])
	}
	return n, nil
}
