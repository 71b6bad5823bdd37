//go:build linux

package ceph

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/dbsizing"
	"github.com/prism-storage/prism/internal/host/cephdaemon"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/node/osdstats"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
)

const (
	// osdTableDBSize is the DB slot of TestCephOSDTable: small, so that a few minutes of
	// 4 KiB object writes fill it and BlueFS spills onto the data device.
	osdTableDBSize = 640 * plan.MiB
	// osdTableRocksDBOptions are Ceph 16.2's bluestore_rocksdb_options with 16 MiB write
	// buffers instead of 256 MiB and a 64 MiB L1: the database then grows in small steps
	// (flushes of 16 MiB memtables) instead of one 256 MiB WAL, and the slot advice has
	// levels to tell apart (L1 fits the slot, L2 does not).
	osdTableRocksDBOptions = "compression=kNoCompression,max_write_buffer_number=4,min_write_buffer_number_to_merge=1," +
		"recycle_log_file_num=4,write_buffer_size=16777216,writable_file_max_buffer_size=0,compaction_readahead_size=2097152," +
		"max_background_compactions=2,max_total_wal_size=1073741824,max_bytes_for_level_base=67108864"
	// recordDir is where PRISM_UPDATE_CEPHDAEMON=1 writes the replies, relative to this package.
	recordDir = "../../internal/host/cephdaemon/testdata"
	// osdTableSample is how often the test reads the OSD while it fills the slot.
	osdTableSample = 3 * time.Second
	// osdTableWindow is the shortest span a forecast is made from in the test (the agent's is
	// dbsizing.MinWindow).
	osdTableWindow = 30 * time.Second
)

// oneSmallSlotOSD builds a cluster with one OSD whose DB is a slot of dbSize bytes on a
// fast loop device, and a clean pool on it.
func oneSmallSlotOSD(t *testing.T, e *env, dbSize int64, before func(c *cluster)) (*cluster, *osd, string, *loopDev, *loopDev) {
	fast := e.attachLoop("fast", traceFastSize, true)
	slowDev := e.attachLoop("qlc0", slowSize, false)
	devices, _ := inventory(fast, []*loopDev{slowDev})
	slot := prismv1.DBSlot{Partition: prismv1.PlannedPartition{Number: 1, Label: "prism-db-00", StartBytes: plan.MiB, SizeBytes: dbSize},
		DataDevice: slowDev.stablePath}
	fp := prismv1.FastDevicePlan{StablePath: fast.stablePath, SlotSizeBytes: dbSize, Slots: []prismv1.DBSlot{slot}}
	if _, err := partitionFast(e.ctx, hostexec.Local{Timeout: slow}, prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{fp}}, devices); err != nil {
		t.Fatalf("partitioning %s: %v", fast.dev, err)
	}
	checkPartitions(e, fast, fp)
	kernel := map[string]string{slowDev.stablePath: slowDev.dev, prismv1.PartitionPath(fp.StablePath, 1): fast.partitionDev(1)}
	c := e.bootstrap()
	if before != nil {
		before(c)
	}
	o := c.createOSD(rook.RookDevice{Name: slowDev.stablePath, Config: rook.DeviceConfigOf(map[string]string{
		"metadataDevice": prismv1.PartitionPath(fp.StablePath, 1), "databaseSizeMB": strconv.FormatInt(dbSize/plan.MiB, 10), "deviceClass": deviceClass,
	})}, kernel, fp)
	c.waitOSDsUpIn([]*osd{o})
	return c, o, c.createPool(), fast, slowDev
}

// TestCephOSDTable reads a real OSD through Prism's admin socket client (cephdaemon.Socket),
// checks each reply against the Ceph CLI's, records them (PRISM_UPDATE_CEPHDAEMON=1), then
// fills the OSD's small DB slot with 4 KiB object writes until BlueFS spills, forecasting the
// spill from the readings as the agent does, and compares the forecasts with the real spill.
// About 5-8 minutes.
func TestCephOSDTable(t *testing.T) {
	began := time.Now()
	e := newEnv(t)
	c, o, pool, _, _ := oneSmallSlotOSD(t, e, osdTableDBSize, func(c *cluster) {
		c.mustCeph("config", "set", "osd", "bluestore_rocksdb_options", osdTableRocksDBOptions)
	})
	sock := c.path("run", clusterName+"-"+o.name()+".asok")
	ask := cephdaemon.Socket{Timeout: 30 * time.Second}
	t.Logf("%s up, pool %s clean (%.0f s since start)", o.name(), pool, time.Since(began).Seconds())

	found, err := osdstats.FindOSDSockets(c.path("run"))
	if err != nil || len(found) != 1 || found[0].ID != o.id || found[0].Path != sock {
		t.Fatalf("FindOSDSockets(%s) = %+v, %v; want osd %d at %s", c.path("run"), found, err, o.id, sock)
	}
	rec := &recorder{c: c, ask: ask, sock: sock}
	rec.record(cephdaemon.Version(), "version")
	rec.record(cephdaemon.PerfDump("bluefs"), "perf-dump-bluefs-fresh")
	rec.record(cephdaemon.PerfDump("bluestore"), "perf-dump-bluestore-fresh")
	rec.record(cephdaemon.BlueFSStatsCommand(), "bluefs-stats-fresh")
	rec.record(cephdaemon.KVStats(), "kv-stats-off")
	rec.record(cephdaemon.ConfigGet("bluestore_rocksdb_options"), "config-get-bluestore_rocksdb_options")
	rec.record(cephdaemon.ConfigGet("bluestore_rocksdb_options_annex"), "config-get-bluestore_rocksdb_options_annex")

	first := osdstats.ReadOSD(e.ctx, ask, o.id, sock, time.Now)
	if len(first.Errors) > 0 || !first.LevelsOff || first.RocksDB == nil {
		t.Fatalf("first reading: errors %v, levels off %v, RocksDB %+v", first.Errors, first.LevelsOff, first.RocksDB)
	}
	lv := *first.RocksDB
	if lv.WriteBufferBytes != 16<<20 || lv.BaseBytes != 64<<20 || lv.Multiplier != 10 || lv.L0Trigger != dbsizing.DefaultL0Trigger {
		t.Fatalf("RocksDB levels from the OSD's configuration: %+v", lv)
	}
	dbTotal, _ := first.BlueFS.Get("db_total_bytes")
	adv := dbsizing.Advise(lv, uint64(traceFastSize), 1, dbTotal)
	t.Logf("slot advice: db_total %d MiB keeps L0..L%d; options %+v", dbTotal>>20, adv.Current, adv.Options[:4])
	// The WAL alone may grow to max_total_wal_size (1 GiB): this slot cannot hold it.
	if adv.Current != -1 || adv.Options[0].SlotBytes != lv.SlotBytes(0) || lv.SlotBytes(0) != uint64(1146*plan.MiB) {
		t.Errorf("a %d MiB DB keeps L0..L%d, WAL and L0 need a %d MiB slot; want none (-1) and 1146 MiB ((1 GiB WAL + 4 × 16 MiB L0) ÷ 0.95)", dbTotal>>20, adv.Current, lv.SlotBytes(0)>>20)
	}

	// RocksDB's per-level statistics, which Ceph 16.2 collects only when told to.
	c.mustCeph("config", "set", "osd", "rocksdb_perf", "true")
	c.mustCeph("config", "set", "osd", "rocksdb_collect_compaction_stats", "true")
	e.waitFor(time.Minute, "dump_objectstore_kv_stats to answer", func() (bool, string) {
		r := osdstats.ReadOSD(e.ctx, ask, o.id, sock, time.Now)
		return len(r.Levels) > 0, fmt.Sprintf("%v %v", r.LevelsOff, r.Errors)
	})

	metrics := c.startOSDMetrics(ask)
	alertChecked := false
	bench := e.startDaemon("rados-bench", "rados", "--cluster", clusterName, "-c", c.conf, "-p", pool,
		"bench", "1500", "write", "-b", "4096", "-t", "8", "--no-cleanup", "--run-name", "prismspill")
	// The fill starts when the workload's writes reach the OSD (rados bench took from a few
	// seconds to 50 s to get going on a busy machine): the forecast is of a steady workload,
	// and readings of the idle OSD before would only say how long rados bench took to start.
	written := func() uint64 {
		r := osdstats.ReadOSD(e.ctx, ask, o.id, sock, time.Now)
		big, _ := r.Store.Get("bluestore_write_big_bytes")
		small, _ := r.Store.Get("bluestore_write_small_bytes")
		return big + small
	}
	idle := written()
	e.waitFor(3*time.Minute, "the workload's first 16 MiB to reach the OSD", func() (bool, string) {
		w := written()
		return w >= idle+16<<20, fmt.Sprintf("%d bytes written since the OSD was idle", w-idle)
	})
	var samples []dbsizing.Sample
	type made struct {
		at time.Time
		f  dbsizing.Forecast
	}
	var forecasts []made
	var prev *osdstats.Reading
	var spillAt time.Time
	deadline := time.Now().Add(20 * time.Minute)
	for time.Now().Before(deadline) && bench.running() {
		r := osdstats.ReadOSD(e.ctx, ask, o.id, sock, time.Now)
		if len(r.Errors) > 0 {
			t.Fatalf("reading %s during the workload: %v", o.name(), r.Errors)
		}
		if err := metrics.collector.Poll(e.ctx); err != nil {
			t.Fatalf("the agent's collector: %v", err)
		}
		used, _ := r.BlueFS.Get("db_used_bytes")
		slowUsed, _ := r.BlueFS.Get("slow_used_bytes")
		samples = append(samples, dbsizing.Sample{Time: r.Time, DBUsedBytes: used, SlowUsedBytes: slowUsed})
		f := dbsizing.SpillForecast(samples, dbTotal, lv.WriteBufferBytes, osdTableWindow)
		forecasts = append(forecasts, made{r.Time, f})
		t.Logf("t=%4.0fs db_used %4d MiB slow_used %4d MiB forecast %s; %s", r.Time.Sub(samples[0].Time).Seconds(), used>>20, slowUsed>>20,
			describeForecast(f, r.Time), rowsLine(osdstats.Table(prev, r)))
		prev = &r
		if col := metrics.collector.OSDs(); !alertChecked && len(col) == 1 && col[0].Forecast.Known && time.Since(col[0].Forecast.Date) < 0 &&
			r.Time.Sub(samples[0].Time) > 2*osdTableWindow {
			// Once Prometheus has scraped the collector's forecast, the alert's expression
			// selects the OSD (the forecast is minutes away, well within 14 days). Waited for,
			// not slept: a loaded machine scrapes late.
			away := time.Until(col[0].Forecast.Date).Round(time.Second)
			got := metrics.waitAlertSelects(osdSpillAlert, []string{nodeName + "/" + o.name()}, "node", "ceph_daemon")
			t.Logf("%s's expression selects %v (forecast %s away)", osdSpillAlert, got, away)
			// The policy's one OSD is forecast to spill within 7 days: a share of 1.
			metrics.waitAlertSelects(policySpillAlert, []string{osdPolicy}, "policy")
			alertChecked = true
			// Every panel has data while the slot fills (after the spill the forecast is gone).
			metrics.checkPanels(o)
		}
		if slowUsed > 0 {
			spillAt = r.Time
			break
		}
		time.Sleep(osdTableSample)
	}
	bench.stop(t)
	if !alertChecked {
		t.Errorf("%s was never evaluated with a forecast", osdSpillAlert)
	}
	if spillAt.IsZero() {
		t.Fatalf("BlueFS did not spill within the workload (last db_used %d of %d)", samples[len(samples)-1].DBUsedBytes, dbTotal)
	}
	if err := metrics.collector.Poll(e.ctx); err != nil {
		t.Fatal(err)
	}
	// A spilled OSD has no forecast (PrismBlueFSSpillover covers it): once Prometheus has
	// scraped the collector after the spill, the expression selects nothing.
	metrics.waitAlertSelects(osdSpillAlert, nil, "node", "ceph_daemon")
	// Per policy a spilled OSD still counts: it is the policy's evidence that its slot is too small.
	metrics.waitAlertSelects(policySpillAlert, []string{osdPolicy}, "policy")
	rec.record(cephdaemon.PerfDump("bluefs"), "perf-dump-bluefs-spilled")
	rec.record(cephdaemon.PerfDump("bluestore"), "perf-dump-bluestore-spilled")
	rec.record(cephdaemon.BlueFSStatsCommand(), "bluefs-stats-spilled")
	rec.record(cephdaemon.KVStats(), "kv-stats-on")
	spilledAfter := spillAt.Sub(samples[0].Time)
	t.Logf("BlueFS spilled %s after the workload's writes reached the OSD (between two readings %s apart)", spilledAfter.Round(time.Second), osdTableSample)

	// How good were the forecasts? Each one made before the spill, against the spill. The
	// ones from the last quarter of the fill must be within 35 % of the time the slot took to
	// fill; the earlier ones are logged. The DB grows in steps (WAL files, memtable flushes,
	// compactions) at a rate that changed within these few minutes, and a straight line
	// through an accelerating series is late: in one run the forecasts of the second half were
	// up to 398 s late for a 200 s fill, those of the last quarter 58 s (docs/osd-table.md).
	checked, worstEarly, worstLate := 0, time.Duration(0), time.Duration(0)
	for _, m := range forecasts {
		if !m.f.Known || !m.at.Before(spillAt) {
			continue
		}
		lead := spillAt.Sub(m.at)
		miss := m.f.Date.Sub(spillAt)
		t.Logf("forecast made %s before the spill: %s after the start (error %+.0f s, %+.0f %% of the lead time, %+.0f %% of the fill time), growth %.0f MiB/day",
			lead.Round(time.Second), m.f.Date.Sub(samples[0].Time).Round(time.Second), miss.Seconds(), 100*miss.Seconds()/lead.Seconds(),
			100*miss.Seconds()/spilledAfter.Seconds(), m.f.GrowthBytesPerDay/(1<<20))
		if since := m.at.Sub(samples[0].Time); since < 2*osdTableWindow || since < spilledAfter*3/4 {
			continue
		}
		checked++
		worstEarly, worstLate = min(worstEarly, miss), max(worstLate, miss)
		if miss.Abs() > spilledAfter*35/100 {
			t.Errorf("forecast made %s before the spill missed it by %s, more than 35 %% of the %s the slot took to fill", lead.Round(time.Second), miss.Round(time.Second), spilledAfter.Round(time.Second))
		}
	}
	if checked == 0 {
		t.Errorf("no forecast was made in the last quarter of the fill")
	}
	t.Logf("forecasts of the last quarter of the fill: %d, from %s early to %s late (%.0f %% / %.0f %% of the fill time)", checked,
		(-worstEarly).Round(time.Second), worstLate.Round(time.Second), -100*worstEarly.Seconds()/spilledAfter.Seconds(), 100*worstLate.Seconds()/spilledAfter.Seconds())
	// The spill came within the reserve: BlueFS filled the slot to within a write buffer.
	before := samples[len(samples)-2]
	if before.DBUsedBytes+lv.WriteBufferBytes >= dbTotal {
		t.Logf("the reading before the spill was already within a write buffer of db_total")
	}
	t.Logf("last reading before the spill: db_used %d MiB of %d MiB (%d MiB free; the forecast's reserve is %d MiB)",
		before.DBUsedBytes>>20, dbTotal>>20, (dbTotal-before.DBUsedBytes)>>20, lv.WriteBufferBytes>>20)
	t.Logf("total %.0f s", time.Since(began).Seconds())
}

func describeForecast(f dbsizing.Forecast, now time.Time) string {
	switch {
	case f.Spilled:
		return "spilled"
	case f.Known:
		return fmt.Sprintf("in %s", f.Date.Sub(now).Round(time.Second))
	default:
		return "none (" + f.Reason + ")"
	}
}

func rowsLine(rows []osdstats.Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s:", r.Class)
		if r.Occupied != nil {
			fmt.Fprintf(&b, " occ %.1fMiB", float64(*r.Occupied)/(1<<20))
		}
		if r.Share != nil {
			fmt.Fprintf(&b, " share %.2f", *r.Share)
		}
		if r.Beta != nil {
			fmt.Fprintf(&b, " beta %.1f", *r.Beta)
		}
		b.WriteString("; ")
	}
	return b.String()
}
