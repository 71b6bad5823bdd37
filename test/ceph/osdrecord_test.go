//go:build linux

package ceph

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/prism-storage/prism/internal/host/cephdaemon"
)

// recorder asks the OSD through Prism's client, checks that the Ceph CLI's answer parses the
// same, and writes the raw reply under recordDir with PRISM_UPDATE_CEPHDAEMON=1.
type recorder struct {
	c    *cluster
	ask  cephdaemon.Asker
	sock string
}

func (r *recorder) record(cmd cephdaemon.Command, name string) {
	t := r.c.e.t
	t.Helper()
	got, err := r.ask.Ask(r.c.e.ctx, r.sock, cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd.Prefix, err)
	}
	argv := append([]string{"ceph", "--cluster", clusterName, "-c", r.c.conf, "--admin-daemon", r.sock}, strings.Fields(cmd.Prefix)...)
	for _, k := range []string{"logger", "var"} {
		if v, ok := cmd.Args[k]; ok {
			argv = append(argv, v)
		}
	}
	cli, err := r.c.e.run(quick, append(argv, "--format", "json")...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, cli)
	}
	if !sameReply(cmd, got, []byte(cli)) {
		t.Errorf("%s: Prism's client and the Ceph CLI disagree:\nclient: %.300s\nCLI:    %.300s", cmd.Prefix, got, cli)
	}
	if os.Getenv("PRISM_UPDATE_CEPHDAEMON") == "" {
		return
	}
	ver := strings.Fields(strings.TrimSpace(r.c.e.must(quick, "ceph-osd", "--version")))
	dir := filepath.Join(recordDir, "ceph-"+ver[2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".out"), got, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("PRISM_UPDATE_CEPHDAEMON: wrote %s/%s.out (%d bytes)", dir, name, len(got))
}

// sameReply compares what matters of two replies: counters and config as parsed, level rows,
// and the bluefs stats device lines. Counters differ between the two reads (they are live),
// so only their names are compared.
func sameReply(cmd cephdaemon.Command, a, b []byte) bool {
	switch cmd.Prefix {
	case "perf dump":
		x, err1 := cephdaemon.ParsePerfDump(a, cmd.Args["logger"])
		y, err2 := cephdaemon.ParsePerfDump(b, cmd.Args["logger"])
		return err1 == nil && err2 == nil && reflect.DeepEqual(keys(x), keys(y))
	case "config get":
		x, err1 := cephdaemon.ParseConfigGet(a, cmd.Args["var"])
		y, err2 := cephdaemon.ParseConfigGet(b, cmd.Args["var"])
		return err1 == nil && err2 == nil && x == y
	case "bluefs stats":
		x, err1 := cephdaemon.ParseBlueFSStats(string(a))
		y, err2 := cephdaemon.ParseBlueFSStats(string(b))
		return err1 == nil && err2 == nil && reflect.DeepEqual(x.Columns, y.Columns) && len(x.Devices) == len(y.Devices)
	case "dump_objectstore_kv_stats":
		x, err1 := cephdaemon.ParseKVStats(a)
		y, err2 := cephdaemon.ParseKVStats(b)
		return (err1 == nil) == (err2 == nil) && len(x) == len(y)
	default:
		return strings.TrimSpace(string(a)) == strings.TrimSpace(string(b))
	}
}

func keys(c cephdaemon.Counters) []string {
	var k []string
	for n := range c {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}
