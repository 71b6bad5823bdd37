package exporter

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/endurance"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/node/health"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

const repo = "../../.."

// homelab builds the fixture node whose Optane 900P and 660p carry recorded SMART logs.
func homelab(t *testing.T) (string, inventory.Report) {
	t.Helper()
	root := t.TempDir()
	if _, err := fixturehost.BuildNode(repo, "optane-qlc-homelab-d", root); err != nil {
		t.Fatal(err)
	}
	rep, err := inventory.Take(context.Background(), inventory.Options{Host: sysfs.Host{Root: root}})
	if err != nil {
		t.Fatal(err)
	}
	return root, rep
}

// recorded is an exporter of the fixture root's recorded SMART pages, at *now when now is set.
func recorded(root string, now *time.Time) *Exporter {
	c := health.Collector{Host: sysfs.Host{Root: root}, Logs: nvme.RecordedLogReader{Dir: filepath.Join(root, "logs")}}
	if now != nil {
		c.Now = func() time.Time { return *now }
	}
	return &Exporter{Node: "homelab", Collector: c}
}

// gather returns metric values by name and device.
func gather(t *testing.T, e *Exporter) map[string]map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, f := range families {
		out[f.GetName()] = map[string]float64{}
		for _, m := range f.GetMetric() {
			key := label(m, "device")
			if m.GetGauge() != nil {
				out[f.GetName()][key] = m.GetGauge().GetValue()
			} else {
				out[f.GetName()][key] = m.GetCounter().GetValue()
			}
			if label(m, "node") != "homelab" {
				t.Errorf("%s has node label %q", f.GetName(), label(m, "node"))
			}
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func TestExporterUnitsFromRecordedSMARTLogs(t *testing.T) {
	root, rep := homelab(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	e := recorded(root, &now)
	if err := e.Poll(context.Background(), rep.Devices); err != nil {
		t.Fatal(err)
	}
	m := gather(t, e)
	// The 900P's recording (smartctl -j): data_units_written 65516455, power_on_hours 42772,
	// temperature 31 °C, available_spare 100, percentage_used 0.
	// 65516455 units x 512000 bytes = 33544424960000 bytes; 42772 h x 3600 = 153979200 s.
	want := map[string]float64{
		"prism_device_host_written_bytes_total": 33544424960000,
		"prism_device_power_on_seconds_total":   153979200,
		"prism_device_temperature_celsius":      31,
		"prism_device_available_spare_ratio":    1,
		"prism_device_percentage_used_ratio":    0,
		"prism_device_capacity_bytes":           280065171456,
	}
	for name, v := range want {
		if got, ok := m[name]["nvme0n1"]; !ok || got != v {
			t.Errorf("%s{device=nvme0n1} = %v (present %t), want %v", name, got, ok, v)
		}
	}
	// Drives without SMART logs in the fixture fall back to /sys/block/*/stat (since boot):
	// the 870 QVO has none; the fixture's boot disk wrote 0 sectors.
	if _, ok := m["prism_device_host_written_bytes_total"]["sda"]; !ok {
		t.Error("the SATA drive must still report host writes from sysfs")
	}
	if _, ok := m["prism_device_percentage_used_ratio"]["sda"]; ok {
		t.Error("no wear figure may be invented for a drive that published none")
	}
	// One sample is not enough for a forecast.
	if _, ok := m["prism_device_wearout_timestamp_seconds"]["nvme0n1"]; ok {
		t.Error("a wear-out date from a single sample")
	}
}

func TestExporterAlphaAndForecastFromHistory(t *testing.T) {
	root, rep := homelab(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	e := recorded(root, &now)
	e.StateFile, _ = StateFiles(t.TempDir())
	if err := e.Poll(context.Background(), rep.Devices); err != nil {
		t.Fatal(err)
	}
	// A day later the recorded counters are the same: the fixture's SMART pages do not move,
	// so the forecast says "no wear" (no date) rather than inventing one.
	now = now.Add(25 * time.Hour)
	if err := e.Poll(context.Background(), rep.Devices); err != nil {
		t.Fatal(err)
	}
	m := gather(t, e)
	if _, ok := m["prism_device_wearout_timestamp_seconds"]["nvme0n1"]; ok {
		t.Error("no wear over a day must give no wear-out date")
	}
	if _, ok := m["prism_node_qlc_write_reduction_ratio"]; ok {
		t.Error("α needs writes since the agent started; none happened")
	}
	// The history survives a restart.
	h := NewHistory()
	if _, err := openHistoryFile(e.StateFile, "", h); err != nil || len(h.Series(rep.Devices[0].StablePath)) != 2 {
		t.Fatalf("history after restart: %v, %d samples", err, len(h.Series(rep.Devices[0].StablePath)))
	}
}

func sampleAt(t time.Time) endurance.Sample { return endurance.Sample{Time: t, PercentUsed: 1} }

// movingLogs serves SMART pages whose counters advance with the clock: 1 percent of wear and
// 10 TB of writes per simulated day, for the one controller of a synthetic node.
type movingLogs struct{ day *int }

func (m movingLogs) Log(_ context.Context, _ string, id uint8, length int) ([]byte, error) {
	if id != nvme.LogIDSMART {
		return nil, errNoPage
	}
	b := make([]byte, length)
	b[3], b[5] = 100, byte(10+*m.day)                                    // spare 100 %, 10 % used + 1 per day
	binary.LittleEndian.PutUint64(b[48:], uint64(*m.day+1)*10e12/512000) // data units written
	binary.LittleEndian.PutUint64(b[128:], uint64(1000+24**m.day))       // power-on hours
	return b, nil
}

var errNoPage = errors.New("no such page")

func TestExporterProjectsWearOut(t *testing.T) {
	root := t.TempDir()
	n := fixturehost.Node{Name: "n", Devices: []fixturehost.Device{{
		Name: "nvme0n1", Model: "INTEL SSDPF2NV153TZ", Serial: "PHAC0001", Bus: "nvme", SizeBytes: 15362991415296, Source: "test",
	}}}
	if err := fixturehost.Build(n, root, ""); err != nil {
		t.Fatal(err)
	}
	rep, err := inventory.Take(context.Background(), inventory.Options{Host: sysfs.Host{Root: root}})
	if err != nil {
		t.Fatal(err)
	}
	day := 0
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	e := &Exporter{Node: "homelab", Collector: health.Collector{Host: sysfs.Host{Root: root}, Logs: movingLogs{&day}, Now: func() time.Time { return now }}}
	for day = 0; day < 5; day++ {
		now = time.Date(2026, 11, 1+day, 0, 0, 0, 0, time.UTC)
		if err := e.Poll(context.Background(), rep.Devices); err != nil {
			t.Fatal(err)
		}
	}
	m := gather(t, e)
	got, ok := m["prism_device_wearout_timestamp_seconds"]["nvme0n1"]
	if !ok {
		t.Fatalf("no wear-out date after 5 days of steady wear; metrics: %v", m)
	}
	// Last sample: day 4 at 14 % used, +1 %/day, so 100 % is 86 days later (2027-01-30); the
	// writes projection has no rating here (the database publishes none for this drive).
	want := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC).Add(86 * 24 * time.Hour)
	if d := time.Unix(int64(got), 0).Sub(want); d < -time.Hour || d > time.Hour {
		t.Fatalf("wear-out %s, want %s", time.Unix(int64(got), 0).UTC(), want)
	}
}

func TestExporterSummaryForStatus(t *testing.T) {
	root, rep := homelab(t)
	e := recorded(root, nil)
	if e.Summary("nvme0n1") != nil {
		t.Fatal("a summary before any poll")
	}
	if err := e.Poll(context.Background(), rep.Devices); err != nil {
		t.Fatal(err)
	}
	s := e.Summary("nvme0n1")
	// The 900P recording: 65516455 data units x 512000 B, 0 % used.
	if s == nil || s.HostWrittenBytes != 33544424960000 || s.PercentUsed == nil || *s.PercentUsed != 0 {
		t.Fatalf("summary = %+v", s)
	}
	if sda := e.Summary("sda"); sda == nil || sda.HostWrittenBytes != 0 || sda.PercentUsed != nil {
		t.Fatalf("a sysfs-only drive has no lifetime figures: %+v", sda)
	}
}

// The agent polls every minute and keeps a sample every 5: only the polls that add one write
// the history file, and the projections of the others are those of the last sample.
func TestExporterWritesTheHistoryOnlyWhenItAddsASample(t *testing.T) {
	root, rep := homelab(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	e := recorded(root, &now)
	e.StateFile, e.LegacyStateFile = StateFiles(dir)
	size := func() int64 {
		st, err := os.Stat(e.StateFile)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	var sizes []int64
	var inodes []uint64
	for minute := range 11 {
		now = time.Date(2026, 11, 22, 6, minute, 0, 0, time.UTC)
		if err := e.Poll(context.Background(), rep.Devices); err != nil {
			t.Fatal(err)
		}
		sizes, inodes = append(sizes, size()), append(inodes, inode(t, e.StateFile))
	}
	for minute := 1; minute < len(sizes); minute++ {
		if grew := sizes[minute] > sizes[minute-1]; grew != (minute%5 == 0) || inodes[minute] != inodes[0] {
			t.Errorf("minute %d: file %d -> %d bytes, inode %d -> %d; want appends at 5 and 10 only",
				minute, sizes[minute-1], sizes[minute], inodes[0], inodes[minute])
		}
	}
}

// A projection is reused while its inputs are unchanged; a new rating (the drive database
// learned the drive) changes them without a new sample.
func TestExporterReprojectsWhenTheRatingChanges(t *testing.T) {
	root, rep := homelab(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	e := recorded(root, &now)
	if err := e.Poll(context.Background(), rep.Devices); err != nil {
		t.Fatal(err)
	}
	devices := append([]prismv1.Device(nil), rep.Devices...)
	devices[0].RatedEndurance = &prismv1.RatedEndurance{DWPD: "3", WarrantyYears: 5}
	now = now.Add(time.Minute) // no new sample
	if err := e.Poll(context.Background(), devices); err != nil {
		t.Fatal(err)
	}
	if got := gather(t, e)["prism_device_rated_dwpd"]["nvme0n1"]; got != 3 {
		t.Fatalf("rated DWPD %v after the rating changed, want 3", got)
	}
}

// A damaged history file is reported once, naming it, and the agent goes on.
func TestExporterReportsADamagedHistoryOnce(t *testing.T) {
	root, rep := homelab(t)
	dir := t.TempDir()
	e := recorded(root, nil)
	e.StateFile, _ = StateFiles(dir)
	if err := os.WriteFile(e.StateFile, []byte("PRISMWH\x01\x05garbage and more"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := e.Poll(context.Background(), rep.Devices)
	if err == nil || !strings.Contains(err.Error(), e.StateFile) {
		t.Fatalf("first poll: %v, want an error naming %s", err, e.StateFile)
	}
	if err := e.Poll(context.Background(), rep.Devices); err != nil {
		t.Fatalf("second poll: %v", err)
	}
	if _, ok := gather(t, e)["prism_device_host_written_bytes_total"]["nvme0n1"]; !ok {
		t.Error("no metrics after a damaged history")
	}
}

// TestExporterServesTheInventoryTime: the node dashboard's "Inventory age" reads
// prism_node_inventory_timestamp_seconds; it is absent until the agent has inventoried once.
func TestExporterServesTheInventoryTime(t *testing.T) {
	root, rep := homelab(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	e := recorded(root, &now)
	if err := e.Poll(context.Background(), rep.Devices); err != nil {
		t.Fatal(err)
	}
	if _, ok := gather(t, e)["prism_node_inventory_timestamp_seconds"]; ok {
		t.Fatal("an inventory time before any inventory")
	}
	e.Inventoried(now.Add(-1500 * time.Millisecond))
	if got, want := gather(t, e)["prism_node_inventory_timestamp_seconds"][""], float64(now.Unix())-1.5; got != want {
		t.Errorf("inventory time %v, want %v", got, want)
	}
}

// TestExporterServesThePolicy: prism_node_info carries the node's policy once the agent has
// read its StorageNode (dashboards and alerts join prism_osd_* to it by node), follows a
// change of policy with one series, and has an empty policy for a node no policy manages.
func TestExporterServesThePolicy(t *testing.T) {
	e := &Exporter{Node: "homelab"}
	if _, ok := gather(t, e)["prism_node_info"]; ok {
		t.Fatal("prism_node_info before the agent read its StorageNode")
	}
	policies := func() []string {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(e)
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range families {
			if f.GetName() != "prism_node_info" {
				continue
			}
			for _, m := range f.GetMetric() {
				if m.GetGauge().GetValue() != 1 || label(m, "node") != "homelab" {
					t.Errorf("prism_node_info %v", m)
				}
				out = append(out, label(m, "policy"))
			}
		}
		return out
	}
	for _, p := range []string{"qlc-hybrid", "qlc-bulk", ""} {
		e.Policy(p)
		if got := policies(); len(got) != 1 || got[0] != p {
			t.Errorf("after Policy(%q): policies %q, want one, %q", p, got, p)
		}
	}
}

// The first inventory wakes the poll loop at once: its devices do not wait a whole period.
func TestPollLoopWakesOnTheFirstInventory(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	devices := &LatestDevices{}
	polled := make(chan int, 8)
	go pollLoop(ctx, time.Hour, devices, func() { polled <- len(devices.Get()) })
	if n := <-polled; n != 0 {
		t.Fatalf("the first poll saw %d devices before any inventory", n)
	}
	devices.Set([]prismv1.Device{{Name: "nvme0n1"}})
	select {
	case n := <-polled:
		if n != 1 {
			t.Fatalf("the poll after the first inventory saw %d devices", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no poll after the first inventory; the loop waited for its period")
	}
	// Later inventories wait for the period.
	devices.Set([]prismv1.Device{{Name: "nvme0n1"}, {Name: "nvme1n1"}})
	select {
	case <-polled:
		t.Fatal("a later inventory woke the loop")
	case <-time.After(200 * time.Millisecond):
	}
}
