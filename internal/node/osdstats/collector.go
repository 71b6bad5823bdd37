package osdstats

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prism-storage/prism/internal/dbsizing"
	"github.com/prism-storage/prism/internal/host/cephdaemon"
)

// DefaultSocketDir is where Rook puts the Ceph daemons' admin sockets on the host:
// <dataDirHostPath>/exporter (default /var/lib/rook), mounted at /run/ceph in every Ceph pod
// (Rook pkg/operator/ceph/controller/spec.go, daemonSocketsSubPath; its ceph-exporter reads
// them there).
const DefaultSocketDir = "/var/lib/rook/exporter"

// maxSamples bounds each OSD's forecast history (a week at the default 5-minute period).
const maxSamples = 2016

// OSD is what the collector knows about one OSD after a poll.
type OSD struct {
	ID     int
	Socket string
	// Last is the latest reading; prev the one before (rates).
	Last, prev *Reading
	Rows       []Row
	// DBTotal, DBUsed and SlowUsed are BlueFS's counters (0 with Known false: never read).
	DBTotal, DBUsed, SlowUsed uint64
	Known                     bool
	Levels                    *dbsizing.Levels
	Advice                    *dbsizing.Advice
	Forecast                  dbsizing.Forecast
	// Errors are the last poll's failures ("" parts read); the previous values stay.
	Errors  []string
	samples []dbsizing.Sample
}

// Collector polls every OSD admin socket under HostRoot/SocketDir and serves prism_osd_*.
type Collector struct {
	Node      string
	HostRoot  string
	SocketDir string
	Ask       cephdaemon.Asker
	Now       func() time.Time
	// MinWindow is the shortest span of readings a forecast uses (dbsizing.MinWindow when 0).
	MinWindow time.Duration

	mu      sync.Mutex
	osds    map[int]*OSD
	listErr string
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Poll reads every OSD whose socket is present. An OSD whose socket is gone is dropped (its
// daemon stopped or moved); an OSD that fails to answer keeps its previous values, with the
// error. A failed listing changes nothing.
func (c *Collector) Poll(ctx context.Context) error {
	dir := filepath.Join(c.HostRoot, c.SocketDir)
	socks, err := FindOSDSockets(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.osds == nil {
		c.osds = map[int]*OSD{}
	}
	if err != nil {
		c.listErr = err.Error()
		return err
	}
	c.listErr = ""
	seen := map[int]bool{}
	var failed []string
	for _, s := range socks {
		seen[s.ID] = true
		o, ok := c.osds[s.ID]
		if !ok {
			o = &OSD{ID: s.ID}
			c.osds[s.ID] = o
		}
		o.Socket = s.Path
		c.mu.Unlock()
		r := ReadOSD(ctx, c.Ask, s.ID, s.Path, c.now)
		c.mu.Lock()
		c.update(o, r)
		if len(r.Errors) > 0 {
			failed = append(failed, fmt.Sprintf("osd.%d: %s", s.ID, r.Errors[0]))
		}
	}
	for id := range c.osds {
		if !seen[id] {
			delete(c.osds, id)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("reading OSD admin sockets: %v", failed)
	}
	return nil
}

// update folds a reading into the OSD: parts that failed keep their previous values.
func (c *Collector) update(o *OSD, r Reading) {
	o.Errors = r.Errors
	merged := r
	if o.Last != nil {
		if merged.BlueFS == nil {
			merged.BlueFS = o.Last.BlueFS
		}
		if merged.Store == nil {
			merged.Store = o.Last.Store
		}
		if merged.Stats == nil {
			merged.Stats = o.Last.Stats
		}
		if merged.Levels == nil && !merged.LevelsOff && !merged.LevelsUnsupported {
			merged.Levels = o.Last.Levels
		}
		if merged.RocksDB == nil {
			merged.RocksDB = o.Last.RocksDB
		}
	}
	if r.BlueFS != nil && r.Store != nil {
		// Rows and rates need both counter sets from this very reading; otherwise the rows
		// of the last complete reading stay.
		o.prev, o.Last = o.Last, &merged
		o.Rows = Table(o.prev, merged)
	} else {
		o.Last = &merged
	}
	o.Levels = merged.RocksDB
	if b := merged.BlueFS; b != nil {
		o.DBTotal, _ = b.Get("db_total_bytes")
		o.DBUsed, _ = b.Get("db_used_bytes")
		o.SlowUsed, _ = b.Get("slow_used_bytes")
		o.Known = true
	}
	if r.BlueFS != nil {
		o.samples = append(o.samples, dbsizing.Sample{Time: r.Time, DBUsedBytes: o.DBUsed, SlowUsedBytes: o.SlowUsed})
		if len(o.samples) > maxSamples {
			o.samples = o.samples[len(o.samples)-maxSamples:]
		}
	}
	if o.Levels != nil && o.Known {
		a := dbsizing.Advise(*o.Levels, 0, 1, o.DBTotal)
		o.Advice = &a
		w := c.MinWindow
		if w == 0 {
			w = dbsizing.MinWindow
		}
		o.Forecast = dbsizing.SpillForecast(o.samples, o.DBTotal, o.Levels.WriteBufferBytes, w)
	}
}

// OSDs returns a copy of what the last polls found, by OSD id.
func (c *Collector) OSDs() []OSD {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]OSD, 0, len(c.osds))
	for _, o := range c.osds {
		cp := *o
		cp.samples = nil
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
