package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/prism-storage/prism/internal/host/cephdaemon"
	"github.com/prism-storage/prism/internal/node/osdstats"
)

const osdsUsage = `prism-agent osds: read every OSD admin socket once and print Prism's per-OSD table.

Usage:
  prism-agent osds [--host-root DIR] [--ceph-socket-dir DIR] [-o json|table]

Each OSD's data classes (wal, bluefs-log, sst, spilled, objects, RocksDB levels) with the
space each holds and the bytes each wrote since the OSD started, read now from the OSD's
admin socket as the agent's table reads it (docs/osd-table.md). Two readings around a
workload give what each class wrote during it (hack/e2e/bench-writes.sh does that). Read-only.

In the agent's pod (the host's / is at /host, Rook's sockets in /var/lib/rook/exporter):
  kubectl -n prism-system exec POD -- /prism-agent osds --host-root /host -o json
`

// osdTable is one OSD in the output of `prism-agent osds -o json`.
type osdTable struct {
	ID     int        `json:"id"`
	Socket string     `json:"socket"`
	Time   time.Time  `json:"time"`
	Rows   []osdClass `json:"classes"`
	// Errors are the parts of the reading that failed (their classes are then unknown).
	Errors []string `json:"errors,omitempty"`
}

// osdClass is one row: bytes held now and written since the OSD started (absent: unknown).
type osdClass struct {
	Class         string  `json:"class"`
	Breakdown     bool    `json:"breakdown,omitempty"`
	OccupiedBytes *uint64 `json:"occupiedBytes,omitempty"`
	WrittenBytes  *uint64 `json:"writtenBytes,omitempty"`
}

// errOSDsUnread is returned when some OSD's reading failed in part; the output still has it.
var errOSDsUnread = errors.New("some OSD admin sockets did not answer every command (see errors)")

func runOSDs(args []string, ask cephdaemon.Asker, out, stderr io.Writer) error {
	fs := flag.NewFlagSet("osds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, osdsUsage); fs.PrintDefaults() }
	hostRoot := fs.String("host-root", "/", "root of the host's file system (the agent's pod: /host)")
	socketDir := fs.String("ceph-socket-dir", osdstats.DefaultSocketDir, "the OSDs' admin sockets, under --host-root (Rook: <dataDirHostPath>/exporter)")
	output := fs.String("o", "table", "output format: json or table")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *output != "json" && *output != "table" {
		return fmt.Errorf("-o %q: want json or table", *output)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	socks, err := osdstats.FindOSDSockets(filepath.Join(*hostRoot, *socketDir))
	if err != nil {
		return err
	}
	tables := make([]osdTable, 0, len(socks))
	partial := false
	for _, s := range socks {
		r := osdstats.ReadOSD(ctx, ask, s.ID, s.Path, time.Now)
		partial = partial || len(r.Errors) > 0
		tables = append(tables, tableOf(r))
	}
	if *output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(tables)
	} else {
		err = writeOSDTables(out, tables)
	}
	if err == nil && partial {
		err = errOSDsUnread
	}
	return err
}

func tableOf(r osdstats.Reading) osdTable {
	t := osdTable{ID: r.ID, Socket: r.Socket, Time: r.Time.UTC(), Errors: r.Errors, Rows: []osdClass{}}
	for _, row := range osdstats.Table(nil, r) {
		t.Rows = append(t.Rows, osdClass{Class: row.Class, Breakdown: row.Breakdown, OccupiedBytes: row.Occupied, WrittenBytes: row.Written})
	}
	return t
}

func writeOSDTables(out io.Writer, tables []osdTable) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OSD\tCLASS\tOCCUPIED BYTES\tWRITTEN BYTES (SINCE START)")
	for _, t := range tables {
		for _, r := range t.Rows {
			class := r.Class
			if r.Breakdown {
				class = "  " + class
			}
			fmt.Fprintf(w, "osd.%d\t%s\t%s\t%s\n", t.ID, class, orUnknown(r.OccupiedBytes), orUnknown(r.WrittenBytes))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, t := range tables {
		for _, e := range t.Errors {
			if _, err := fmt.Fprintf(out, "osd.%d: %s\n", t.ID, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func orUnknown(v *uint64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatUint(*v, 10)
}
