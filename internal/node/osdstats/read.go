package osdstats

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prism-storage/prism/internal/dbsizing"
	"github.com/prism-storage/prism/internal/host/cephdaemon"
)

// Reading is one read of one OSD. A part that failed is nil (or zero) with its error in Errors;
// the rest is still used.
type Reading struct {
	ID        int
	Socket    string
	Time      time.Time
	BlueFS    cephdaemon.Counters
	Store     cephdaemon.Counters
	Stats     *cephdaemon.BlueFSStats
	Levels    []cephdaemon.LevelStat
	LevelsOff bool // the OSD collects no RocksDB statistics (not an error)
	// LevelsUnsupported: the OSD has no dump_objectstore_kv_stats (a Ceph 20.2 OSD before it
	// booted; not an error).
	LevelsUnsupported bool
	RocksDB           *dbsizing.Levels
	Errors            []string
}

// ReadOSD asks one OSD's admin socket for everything the table needs (5-6 commands, each with
// the Asker's timeout). It never fails as a whole: each failure is recorded in Errors.
func ReadOSD(ctx context.Context, ask cephdaemon.Asker, id int, socket string, now func() time.Time) Reading {
	r := Reading{ID: id, Socket: socket, Time: now()}
	fail := func(what string, err error) { r.Errors = append(r.Errors, fmt.Sprintf("%s: %v", what, err)) }
	for _, logger := range []string{"bluefs", "bluestore"} {
		out, err := ask.Ask(ctx, socket, cephdaemon.PerfDump(logger))
		if err != nil {
			fail("perf dump "+logger, err)
			continue
		}
		c, err := cephdaemon.ParsePerfDump(out, logger)
		if err != nil {
			fail("perf dump "+logger, err)
			continue
		}
		if logger == "bluefs" {
			r.BlueFS = c
		} else {
			r.Store = c
		}
	}
	if out, err := ask.Ask(ctx, socket, cephdaemon.BlueFSStatsCommand()); err != nil {
		fail("bluefs stats", err)
	} else if st, err := cephdaemon.ParseBlueFSStats(string(out)); err != nil {
		fail("bluefs stats", err)
	} else {
		r.Stats = &st
	}
	if out, err := ask.Ask(ctx, socket, cephdaemon.KVStats()); err != nil {
		fail("dump_objectstore_kv_stats", err)
	} else if lv, err := cephdaemon.ParseKVStats(out); errors.Is(err, cephdaemon.ErrKVStatsOff) {
		r.LevelsOff = true
	} else if errors.Is(err, cephdaemon.ErrKVStatsUnsupported) {
		r.LevelsUnsupported = true
	} else if err != nil {
		fail("dump_objectstore_kv_stats", err)
	} else {
		r.Levels = lv
	}
	opts := map[string]string{}
	ok := true
	for _, option := range []string{"bluestore_rocksdb_options", "bluestore_rocksdb_options_annex"} {
		out, err := ask.Ask(ctx, socket, cephdaemon.ConfigGet(option))
		var v string
		if err == nil {
			v, err = cephdaemon.ParseConfigGet(out, option)
		}
		var m map[string]string
		if err == nil {
			m, err = cephdaemon.ParseRocksDBOptions(v)
		}
		if err != nil {
			if option == "bluestore_rocksdb_options_annex" && strings.Contains(err.Error(), "ENOENT") {
				continue // older releases have no annex
			}
			fail("config get "+option, err)
			ok = false
			continue
		}
		maps.Copy(opts, m)
	}
	if ok {
		if l, err := dbsizing.LevelsFromOptions(opts); err != nil {
			fail("RocksDB levels", err)
		} else {
			r.RocksDB = &l
		}
	}
	return r
}

// OSDSocket is one OSD admin socket found on the node.
type OSDSocket struct {
	ID   int
	Path string
}

// FindOSDSockets lists the OSD admin sockets in dir: <cluster>-osd.<id>.asok, as Ceph names
// them ($run_dir/$cluster-$name.asok) and Rook lays them out (<dataDirHostPath>/exporter,
// mounted at /run/ceph in every Ceph pod). A missing dir is no OSD, not an error.
func FindOSDSockets(dir string) ([]OSDSocket, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing OSD admin sockets: %w", err)
	}
	var out []OSDSocket
	for _, e := range entries {
		if id, ok := osdID(e.Name()); ok && e.Type()&os.ModeSocket != 0 {
			out = append(out, OSDSocket{ID: id, Path: filepath.Join(dir, e.Name())})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// osdID reads "<cluster>-osd.<id>.asok".
func osdID(name string) (int, bool) {
	base, ok := strings.CutSuffix(name, ".asok")
	if !ok {
		return 0, false
	}
	i := strings.LastIndex(base, "-osd.")
	if i < 0 {
		return 0, false
	}
	id, err := strconv.Atoi(base[i+len("-osd."):])
	return id, err == nil && id >= 0
}
