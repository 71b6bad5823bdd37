//go:build linux

package ceph

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// minAllocConfig is one place in the mon's config database where bluestore_min_alloc_size
// can be set.
type minAllocConfig struct{ who, option string }

func (m minAllocConfig) String() string { return "ceph config set " + m.who + " " + m.option }

// minAllocCandidates are tried in order: Prism's section first (rook.CephConfigSection, what
// Rook's cephConfig gets), then the alternatives, until one takes effect at mkfs.
func minAllocCandidates(section string) []minAllocConfig {
	return []minAllocConfig{
		{section, "bluestore_min_alloc_size"},
		{"osd", "bluestore_min_alloc_size"},
		{section, "bluestore_min_alloc_size_ssd"},
		{"osd", "bluestore_min_alloc_size_ssd"},
	}
}

// probeResult is what one candidate gave the OSD made under it.
type probeResult struct {
	config minAllocConfig
	// persisted is `ceph osd metadata` bluestore_min_alloc_size: the value BlueStore wrote into
	// its superblock at mkfs and reads back at every start; it never changes afterwards.
	persisted string
	// running is `ceph daemon osd.N config get bluestore_min_alloc_size` once the OSD is up:
	// what the configuration says now, which no longer matters to an existing OSD.
	running string
	// log is the min_alloc_size BlueStore logged when the OSD opened its superblock.
	log string
	// mon is `ceph config get osd.N bluestore_min_alloc_size`: what the mon's config
	// database resolves for the OSD (masks included); class is its CRUSH device class.
	mon, class string
}

// createFirstOSDProbing creates the first OSD under each candidate configuration in turn,
// keeping it under the first that BlueStore persisted at mkfs; an OSD made under a
// configuration that did not take effect is purged and its devices zapped. The winning
// setting stays in the config database for the other OSDs. PRISM_CEPH_PROBE_ALL=1 tries
// every candidate (about 20 s each) and then re-creates the OSD under the first that worked.
func (c *cluster) createFirstOSDProbing(d rook.RookDevice, kernel map[string]string, fp prismv1.FastDevicePlan, section string, want int64) (*osd, minAllocConfig, []probeResult) {
	t := c.e.t
	all := os.Getenv("PRISM_CEPH_PROBE_ALL") != ""
	var results []probeResult
	var winner *minAllocConfig
	for i, cand := range minAllocCandidates(section) {
		o, r := c.probe(d, kernel, fp, cand, want)
		results = append(results, r)
		t.Logf("min_alloc probe %d: %s %d before mkfs -> %s persisted min_alloc_size %s (OSD log: %s; running config %s; mon resolves %s for this OSD of class %s)",
			i+1, cand, want, o.name(), r.persisted, r.log, r.running, r.mon, r.class)
		ok := r.persisted == strconv.FormatInt(want, 10)
		if ok && !all {
			return o, cand, results
		}
		if ok && winner == nil {
			winner = &cand
		}
		c.destroyOSD(o)
		c.mustCeph("config", "rm", cand.who, cand.option)
	}
	if winner == nil {
		t.Fatalf("no configuration made BlueStore persist min_alloc_size %d at mkfs: %+v", want, results)
	}
	o, _ := c.probe(d, kernel, fp, *winner, want)
	return o, *winner, results
}

// probe sets one candidate, creates the OSD and reads back what it persisted.
func (c *cluster) probe(d rook.RookDevice, kernel map[string]string, fp prismv1.FastDevicePlan, cand minAllocConfig, want int64) (*osd, probeResult) {
	t := c.e.t
	c.mustCeph("config", "set", cand.who, cand.option, strconv.FormatInt(want, 10))
	checkConfigDump(c, cand, want)
	o := c.createOSD(d, kernel, fp)
	c.waitOSDsUpIn([]*osd{o})
	r := probeResult{config: cand, persisted: c.metadata(o)["bluestore_min_alloc_size"], log: c.superMetaMinAlloc(o)}
	var cfg map[string]string
	if err := c.adminSocket(&cfg, o.name(), "config", "get", "bluestore_min_alloc_size"); err != nil {
		t.Errorf("%s: config get bluestore_min_alloc_size: %v", o.name(), err)
	}
	r.running = cfg["bluestore_min_alloc_size"]
	r.mon = strings.TrimSpace(c.mustCeph("config", "get", o.name(), "bluestore_min_alloc_size"))
	r.class = strings.TrimSpace(c.mustCeph("osd", "crush", "get-device-class", o.name()))
	return o, r
}

// superMetaMinAlloc is the min_alloc_size BlueStore logged when it last opened the OSD's
// superblock ("_open_super_meta min_alloc_size 0x10000", log level 1), in decimal.
func (c *cluster) superMetaMinAlloc(o *osd) string {
	data, err := os.ReadFile(c.path("log", fmt.Sprintf("%s-%s.log", clusterName, o.name())))
	if err != nil {
		return "no log: " + err.Error()
	}
	const marker = "_open_super_meta min_alloc_size 0x"
	text := string(data)
	i := strings.LastIndex(text, marker)
	if i < 0 {
		return "not logged"
	}
	hex, _, _ := strings.Cut(text[i+len(marker):], "\n")
	n, err := strconv.ParseInt(strings.TrimSpace(hex), 16, 64)
	if err != nil {
		return "unparsable: " + hex
	}
	return strconv.FormatInt(n, 10)
}

// destroyOSD stops an OSD, removes it from the cluster and zaps its devices so that
// ceph-volume takes them again.
func (c *cluster) destroyOSD(o *osd) {
	t := c.e.t
	o.daemon.stop(t)
	delete(c.daemons, o.name())
	c.mustCeph("osd", "purge", strconv.Itoa(o.id), "--yes-i-really-mean-it")
	for _, dev := range []string{o.data, o.db} {
		zap(t, dev)
	}
	if err := os.RemoveAll(c.path("varlib", "osd", fmt.Sprintf("%s-%d", clusterName, o.id))); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s purged, %s and %s zapped", o.name(), o.data, o.db)
}

// zap overwrites the first 10 MiB of dev (the BlueStore label and BlueFS superblock), as
// ceph-volume's zap does after wipefs.
func zap(t interface{ Fatalf(string, ...any) }, dev string) {
	f, err := os.OpenFile(dev, os.O_WRONLY|os.O_SYNC, 0)
	if err != nil {
		t.Fatalf("zap %s: %v", dev, err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 10<<20)); err != nil {
		t.Fatalf("zap %s: %v", dev, err)
	}
}

// checkMinAlloc asserts that every OSD persisted the wanted min_alloc_size, and reports
// whether Prism's own section was the configuration that achieved it.
func checkMinAlloc(c *cluster, osds []*osd, section string, chosen minAllocConfig, probes []probeResult, want int64) {
	t := c.e.t
	for _, o := range osds {
		md := c.metadata(o)
		if got := md["bluestore_min_alloc_size"]; got != strconv.FormatInt(want, 10) {
			t.Errorf("%s: persisted min_alloc_size (ceph osd metadata bluestore_min_alloc_size) %s, want %d from %s", o.name(), got, want, chosen)
		}
		if got := c.superMetaMinAlloc(o); got != strconv.FormatInt(want, 10) {
			t.Errorf("%s: the OSD log's _open_super_meta min_alloc_size is %s, want %d", o.name(), got, want)
		}
	}
	var lines []string
	for _, p := range probes {
		lines = append(lines, fmt.Sprintf("%s %d -> persisted %s (metadata) / %s (OSD log), running config %s, mon resolves %s (class %s)",
			p.config, want, p.persisted, p.log, p.running, p.mon, p.class))
	}
	prism := minAllocConfig{section, "bluestore_min_alloc_size"}
	t.Logf("bluestore_min_alloc_size at mkfs: %s took effect.\n  %s", chosen, strings.Join(lines, "\n  "))
	if chosen != prism {
		msg := fmt.Sprintf("Prism's cephConfig (%s %d, rook.CephConfigSection) does NOT take effect at mkfs on this Ceph; %s does", prism, want, chosen)
		if os.Getenv("PRISM_CEPH_REQUIRE_CLASS_MASK") != "" {
			t.Error(msg)
		} else {
			t.Log("FINDING: " + msg + " (set PRISM_CEPH_REQUIRE_CLASS_MASK=1 to make this fail)")
		}
	}
}
