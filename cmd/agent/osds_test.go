package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/cephdaemon"
)

// ceph20Replay answers as the Ceph 20.2.4 OSD recorded in the e2e guest did; failing
// sockets answer nothing.
type ceph20Replay struct{ failing map[string]bool }

func (r ceph20Replay) Ask(_ context.Context, socket string, cmd cephdaemon.Command) ([]byte, error) {
	if r.failing[filepath.Base(socket)] {
		return nil, errors.New("admin socket: connection refused")
	}
	name := map[string]string{
		"bluefs stats":              "bluefs-stats-fresh",
		"dump_objectstore_kv_stats": "kv-stats-off",
		"version":                   "version",
	}[cmd.Prefix]
	switch cmd.Prefix {
	case "perf dump":
		name = "perf-dump-" + cmd.Args["logger"] + "-fresh"
	case "config get":
		name = "config-get-" + cmd.Args["var"]
	}
	return os.ReadFile(filepath.Join("../../internal/host/cephdaemon/testdata/ceph-20.2.4", name+".out"))
}

// osdSocketDir makes <root>/var/lib/rook/exporter with listening sockets of the given names.
func osdSocketDir(t *testing.T, names ...string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "var/lib/rook/exporter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		l, err := net.Listen("unix", filepath.Join(dir, n))
		if err != nil {
			t.Skipf("a unix socket in %s: %v", dir, err)
		}
		t.Cleanup(func() { l.Close() })
	}
	return root
}

func TestOSDsReadsEverySocketOnce(t *testing.T) {
	root := osdSocketDir(t, "rook-ceph-osd.0.asok", "rook-ceph-osd.3.asok", "rook-ceph-mon.a.asok")
	var out, stderr bytes.Buffer
	if err := runOSDs([]string{"--host-root", root, "-o", "json"}, ceph20Replay{}, &out, &stderr); err != nil {
		t.Fatalf("osds: %v (%s)", err, stderr.String())
	}
	var got []osdTable
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(got) != 2 || got[0].ID != 0 || got[1].ID != 3 {
		t.Fatalf("OSDs %+v, want osd.0 and osd.3 (the mon's socket is not an OSD)", got)
	}
	written := map[string]uint64{}
	for _, r := range got[0].Rows {
		if r.WrittenBytes != nil {
			written[r.Class] = *r.WrittenBytes
		}
	}
	// The recording's bluefs counters: bytes_written_wal 20480, bytes_written_sst 12288,
	// bytes_written_slow 0.
	if written["wal"] != 20480 || written["sst"] != 12288 || written["spilled"] != 0 {
		t.Errorf("written %v, want wal 20480, sst 12288, spilled 0", written)
	}
	if len(got[0].Errors) != 0 {
		t.Errorf("errors %v", got[0].Errors)
	}
}

func TestOSDsSaysWhichOSDFailed(t *testing.T) {
	root := osdSocketDir(t, "rook-ceph-osd.0.asok", "rook-ceph-osd.1.asok")
	var out, stderr bytes.Buffer
	err := runOSDs([]string{"--host-root", root}, ceph20Replay{failing: map[string]bool{"rook-ceph-osd.1.asok": true}}, &out, &stderr)
	if !errors.Is(err, errOSDsUnread) {
		t.Fatalf("err %v, want errOSDsUnread", err)
	}
	table := out.String()
	if !strings.Contains(table, "osd.0  wal") || !strings.Contains(table, "\nosd.1: perf dump bluefs: admin socket: connection refused\n") {
		t.Errorf("table:\n%s", table)
	}
}

func TestOSDsRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-o", "yaml"}, {"extra"}} {
		var out, stderr bytes.Buffer
		err := runOSDs(args, ceph20Replay{}, &out, &stderr)
		if err == nil || !strings.Contains(err.Error(), args[len(args)-1]) {
			t.Errorf("%v: err %v, want one naming %q", args, err, args[len(args)-1])
		}
	}
}
