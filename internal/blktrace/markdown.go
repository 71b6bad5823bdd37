package blktrace

import (
	"github.com/prism-storage/prism/internal/bytesize"

	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// LoadSummary reads a committed trace summary.
func LoadSummary(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(s.Workloads) == 0 {
		return nil, fmt.Errorf("%s: workloads: none", path)
	}
	return &s, nil
}

// Markdown renders the per-workload tables of docs/ioclass-default-policy.md:
// for each workload and device, bytes and bios by submitting task, by request
// size and by region, writes first.
func Markdown(s *Summary) string {
	var b strings.Builder
	for _, w := range s.Workloads {
		fmt.Fprintf(&b, "#### %s\n\n`%s`", w.Name, w.Command)
		if w.ClientBytes > 0 {
			fmt.Fprintf(&b, " — client wrote %s", bytesize.IEC(int64(w.ClientBytes)))
		}
		fmt.Fprintf(&b, "; BlueFS slow_used_bytes %d → %d, bytes_written_slow %d → %d.\n\n",
			w.BlueFS.SlowUsedBefore, w.BlueFS.SlowUsedAfter, w.BlueFS.WrittenSlowBefore, w.BlueFS.WrittenSlowAfter)
		for _, dev := range []struct {
			name string
			d    DeviceTrace
		}{{"data device", w.Data}, {"DB partition", w.DB}} {
			fmt.Fprintf(&b, "%s:\n\n", dev.name)
			writeDevice(&b, dev.d)
		}
	}
	return b.String()
}

// writeDevice writes one device's three tables, then the other processes.
func writeDevice(b *strings.Builder, d DeviceTrace) {
	if len(d.Groups) == 0 {
		b.WriteString("(no bios from the OSD)\n\n")
	} else {
		byDirThen := func(index func(string) int) func(a, c Row) int {
			return func(a, c Row) int {
				if a.Dir != c.Dir {
					return strings.Compare(string(a.Dir), string(c.Dir))
				}
				return index(a.Key) - index(c.Key)
			}
		}
		totals := d.Totals()
		writeTable(b, "task (comm)", d.ByComm(), totals)
		sizes := d.BySize()
		slices.SortStableFunc(sizes, byDirThen(bucketIndex))
		writeTable(b, "request size", sizes, totals)
		regions := d.ByRegion()
		slices.SortStableFunc(regions, byDirThen(regionIndex))
		writeTable(b, "region", regions, totals)
	}
	if len(d.Others) > 0 {
		b.WriteString("Other processes (not in the tables above):")
		for _, r := range d.Others {
			fmt.Fprintf(b, " %s %s %d bios %s;", r.Key, r.Dir, r.Count, bytesize.IEC(int64(r.Bytes)))
		}
		b.WriteString("\n\n")
	}
}

func writeTable(b *strings.Builder, title string, rows []Row, totals map[Direction]Row) {
	if len(rows) == 0 {
		b.WriteString("(no bios)\n\n")
		return
	}
	fmt.Fprintf(b, "| %s | op | bios | bytes | share of the op's bytes |\n| --- | --- | ---: | ---: | ---: |\n", title)
	for _, r := range rows {
		share := "-"
		if t := totals[r.Dir]; t.Bytes > 0 {
			share = fmt.Sprintf("%.1f %%", 100*float64(r.Bytes)/float64(t.Bytes))
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s |\n", r.Key, r.Dir, r.Count, bytesize.IEC(int64(r.Bytes)), share)
	}
	b.WriteString("\n")
}

func bucketIndex(label string) int {
	for i, s := range sizeBuckets {
		if s.label == label {
			return i
		}
	}
	return len(sizeBuckets)
}

// regionIndex orders region names by their start.
func regionIndex(r string) int {
	switch r {
	case "0-8KiB":
		return 0
	case "8KiB-1MiB":
		return 1
	case "1MiB-1GiB":
		return 2
	}
	var n int
	fmt.Sscanf(r, "%d-", &n)
	return 2 + n
}
