package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// startCaches plays udev for the partitions the agents make, waits until every planned cache
// runs (on the casadm emulator) and starts the emulated IO.
func (d *demo) startCaches(ctx context.Context) error {
	d.goroutine(ctx, func(ctx context.Context) { runUdev(ctx, d.loops, d.hosts, 200*time.Millisecond) })
	var pending []string
	// A bound, not a pace: each agent's first pass reads its fast devices sparsely before their
	// first table (decision 0041), twice per device, 763,000 samples of an 800 GB loop each,
	// which took 20-40 s a read on a loaded 2-core machine; the caches follow the partitions.
	err := waitFor(ctx, 6*time.Minute, func() bool {
		pending = d.pendingCaches(ctx)
		return len(pending) == 0
	})
	if err != nil {
		return fmt.Errorf("waiting for the caches (logs in %s): %s: %w", d.dir, strings.Join(pending, "; "), err)
	}
	d.goroutine(ctx, func(ctx context.Context) {
		for burst := 0; ; burst++ {
			d.emulateIO(ctx, burst)
			select {
			case <-ctx.Done():
				return
			case <-time.After(3 * time.Second):
			}
		}
	})
	// α_cache and β reach the StorageNodes with the agents' next sync (every 10 s).
	if err := waitFor(ctx, 45*time.Second, func() bool {
		pending = d.cachesWithoutAlpha(ctx)
		return len(pending) == 0
	}); err != nil {
		return fmt.Errorf("waiting for α_cache of the caches (logs in %s): %s: %w", d.dir, strings.Join(pending, "; "), err)
	}
	return nil
}

// cachesWithoutAlpha lists the running caches whose status has no α_cache yet.
func (d *demo) cachesWithoutAlpha(ctx context.Context) []string {
	list := &prismv1.StorageNodeList{}
	if err := d.env.Client.List(ctx, list); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, sn := range list.Items {
		for _, c := range sn.Status.Caches {
			if c.WriteReduction == "" {
				out = append(out, fmt.Sprintf("%s cache %d", sn.Name, c.CacheID))
			}
		}
	}
	return out
}

// pendingCaches lists the planned caches that do not run yet, with their state.
func (d *demo) pendingCaches(ctx context.Context) []string {
	list := &prismv1.StorageNodeList{}
	if err := d.env.Client.List(ctx, list); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, sn := range list.Items {
		p := sn.Spec.Plan
		if p == nil || p.Cache == nil {
			continue
		}
		planned := 0
		for _, f := range p.FastDevices {
			if f.Cache != nil && f.CacheID != 0 {
				planned++
			}
		}
		running := 0
		for _, c := range sn.Status.Caches {
			if c.State == prismv1.CacheRunning {
				running++
			} else {
				out = append(out, fmt.Sprintf("%s cache %d %s: %s", sn.Name, c.CacheID, c.State, c.Message))
			}
		}
		if running < planned && len(sn.Status.Caches) < planned {
			out = append(out, fmt.Sprintf("%s: %d of %d caches reported", sn.Name, len(sn.Status.Caches), planned))
		}
	}
	return out
}

// ioMix is the emulated IO of one burst on every exported object: what a Ceph OSD sends its
// data device (docs/ioclass-default-policy.md), one kind per IO class of the ceph-osd policy.
// EMULATED: the emulator classifies and counts these requests; no data moves.
var ioMix = []struct {
	io    string
	count int
}{
	{"size=4096,dir=write,comm=tp_osd_tp", 48},        // small-writes: client 4 KiB writes
	{"size=4096,dir=write,comm=bstore_kv_final", 16},  // bluestore-deferred
	{"size=65536,dir=write,comm=tp_osd_tp", 8},        // large-writes: straight to QLC
	{"size=4096,dir=write,comm=rocksdb:low0", 4},      // bluefs-spillover (pinned)
	{"size=4096,dir=read,comm=tp_osd_tp", 32},         // unclassified: small reads
	{"size=65536,dir=read,comm=tp_osd_tp", 4},         // large-reads
	{"size=16384,dir=write,comm=tp_osd_tp", 8},        // small-writes, 16 KiB
	{"size=131072,dir=write,comm=bstore_kv_final", 2}, // deferred, but large: bluestore-deferred
}

// ioWindow bounds the LBAs a burst touches, so bursts overwrite earlier data (β > 1) and the
// emulator's state stays small.
const ioWindow = 16 << 20

// emulateIO sends one burst of ioMix to every core of every running cache.
func (d *demo) emulateIO(ctx context.Context, burst int) {
	list := &prismv1.StorageNodeList{}
	if err := d.env.Client.List(ctx, list); err != nil {
		return
	}
	for _, sn := range list.Items {
		h, ok := d.hosts[sn.Name]
		if !ok {
			continue
		}
		for _, c := range sn.Status.Caches {
			if c.State != prismv1.CacheRunning {
				continue
			}
			for _, core := range c.Cores {
				if core.State != prismv1.CoreReady {
					continue
				}
				for i, m := range ioMix {
					lba := ((uint64(burst*len(ioMix)+i) << 20) % ioWindow) / 512
					_, err := h.run(ctx, "--emulator-io", "--cache-id", strconv.Itoa(int(c.CacheID)), "--core-id", strconv.Itoa(int(core.CoreID)),
						"--io", fmt.Sprintf("%s,lba=%d", m.io, lba), "--count", strconv.Itoa(m.count))
					if err != nil && ctx.Err() == nil {
						logf("emulated IO on %s: %v", sn.Name, err)
					}
				}
			}
		}
	}
}
