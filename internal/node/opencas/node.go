package opencas

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/casadm"
)

// blockBytes is casadm's statistics unit: 4 KiB blocks whatever the line size.
const blockBytes = 4096

// NodeResult is one pass over a node's caches.
type NodeResult struct {
	// Caches is one status per fast device whose plan has a cache partition.
	Caches []prismv1.CacheStatus
	// WriteReduction is α_cache over every cache of the node ("" before any write).
	WriteReduction string
	// Changed is true when a step ran on the host.
	Changed bool
	// Unobserved are the fast devices (stable paths) whose cache this pass could not observe
	// (Result.Unobserved): their statuses say why, and list no cores, which proves nothing.
	Unobserved []string
}

// ReconcileNode realises the caches of a node plan: for every fast device with a cache
// partition that the agent reports Ready, it starts (or keeps) the cache with the plan's
// mode, settings and IO classes in front of the capacity devices of that device's DB slots.
// In any mode but Apply it only reports what it would do. devices is the node's inventory
// (signatures of the core devices); partitions is the provisioning result.
func (r Runner) ReconcileNode(ctx context.Context, p *prismv1.NodePlan, devices []prismv1.Device, partitions []prismv1.PartitionStatus, mode prismv1.PolicyMode) NodeResult {
	var out NodeResult
	if p == nil {
		return out
	}
	r.DryRun = r.DryRun || mode != prismv1.ModeApply
	for _, f := range p.FastDevices {
		if f.Cache == nil || f.CacheID == 0 {
			continue
		}
		part, why := readyPartition(f, partitions)
		if part == "" {
			out.Caches = append(out.Caches, prismv1.CacheStatus{FastDevice: f.StablePath, State: prismv1.CachePending, Message: why})
			continue
		}
		if p.Cache == nil {
			// The cache is off but its partition stays in the plan: stop the cache (with
			// its flush) if one runs there.
			res := r.Reconcile(ctx, Desired{CacheID: int(f.CacheID), Partition: part, Mode: prismv1.CacheNone})
			out.Changed = out.Changed || res.Changed
			if res.Unobserved {
				out.Unobserved = append(out.Unobserved, f.StablePath)
			}
			out.Caches = append(out.Caches, stoppedStatus(f, res, r.DryRun))
			continue
		}
		d := DesiredFor(p.Cache, f, part, devices)
		pin, err := PinPartition(r.HostRoot, part)
		var sigs []prismv1.DeviceSignature
		if err == nil {
			sigs, err = ScanPartition(r.HostRoot, part)
		}
		if err == nil && len(sigs) == 0 {
			d.Unexplained, err = ScanHeadAndTail(r.HostRoot, part)
		}
		if err == nil {
			err = checkPinned(pin, filepath.Join(cmp.Or(r.HostRoot, "/"), part)) // the scans read the pinned partition
		}
		d.PartitionScanned, d.Signatures, d.Pin = err == nil, sigs, pin
		d.StartCutShort = r.startRecorded(part)
		res := r.Reconcile(ctx, d)
		if pin != nil {
			pin.Close()
		}
		out.Changed = out.Changed || res.Changed
		if res.Unobserved {
			out.Unobserved = append(out.Unobserved, f.StablePath)
		}
		st := StatusOf(f, res, r.DryRun)
		if err != nil && res.Err == nil {
			st.Message = strings.Join(slices.DeleteFunc([]string{st.Message, err.Error()}, func(s string) bool { return s == "" }), "; ")
		}
		out.Caches = append(out.Caches, st)
	}
	if anyStarted(out.Caches) {
		// Statistics are a report, not a decision: a failed read leaves them out.
		if stats, err := Stats(ctx, r.Exec); err == nil {
			out.WriteReduction = WithStats(out.Caches, stats)
		} else {
			logf.FromContext(ctx).V(1).Info("Reading cache statistics failed", "error", err.Error())
		}
	}
	return out
}

func anyStarted(caches []prismv1.CacheStatus) bool {
	for _, c := range caches {
		if c.CacheID != 0 && c.State != prismv1.CacheRefused {
			return true
		}
	}
	return false
}

// readyPartition is the stable path of f's cache partition when provisioning reports it
// Ready, or why not.
func readyPartition(f prismv1.FastDevicePlan, partitions []prismv1.PartitionStatus) (string, string) {
	for _, ps := range partitions {
		if ps.Device != f.StablePath || ps.Number != f.Cache.Number {
			continue
		}
		if ps.State == prismv1.PartitionReady && ps.Path != "" {
			return ps.Path, ""
		}
		return "", fmt.Sprintf("waiting for cache partition %d (%s)", f.Cache.Number, ps.State)
	}
	return "", fmt.Sprintf("waiting for cache partition %d (not provisioned yet)", f.Cache.Number)
}

// DesiredFor is the cache a fast device's plan asks for on partition. Pure.
func DesiredFor(c *prismv1.NodeCachePlan, f prismv1.FastDevicePlan, partition string, devices []prismv1.Device) Desired {
	d := Desired{
		CacheID: int(f.CacheID), Partition: partition, Mode: c.Mode, LineSizeKiB: int(c.LineSizeKiB),
		Cores: f.CacheCores(), IOClassCSV: c.IOClassCSV, Params: paramsOf(c.CacheSettings),
		AllowDirtyDataLoss: c.DirtyData == prismv1.DirtyDataAllowLoss,
		CoreSignatures:     map[string][]prismv1.DeviceSignature{},
	}
	for _, dev := range devices {
		if dev.StablePath != "" && len(dev.Signatures) > 0 {
			d.CoreSignatures[dev.StablePath] = dev.Signatures
		}
		if why, partial := dev.PartialRecord(); partial && dev.StablePath != "" {
			if d.CoreUnreadable == nil {
				d.CoreUnreadable = map[string]string{}
			}
			d.CoreUnreadable[dev.StablePath] = why
		}
	}
	return d
}

// paramsOf maps the API's settings to casadm's parameters.
func paramsOf(s prismv1.CacheSettings) Params {
	var p Params
	u := func(v *int32) *uint64 {
		if v == nil {
			return nil
		}
		return Ptr(uint64(*v))
	}
	if c := s.Cleaning; c != nil {
		p.CleaningPolicy = strings.ToLower(string(c.Policy))
		if a := c.Alru; a != nil {
			p.Alru = &AlruParams{WakeUpSeconds: u(a.WakeUpSeconds), StaleBufferSeconds: u(a.StaleBufferSeconds),
				FlushMaxBuffers: u(a.FlushMaxBuffers), ActivityThresholdMs: u(a.ActivityThresholdMs)}
		}
		if a := c.Acp; a != nil {
			p.Acp = &AcpParams{WakeUpMs: u(a.WakeUpMs), FlushMaxBuffers: u(a.FlushMaxBuffers)}
		}
	}
	if pr := s.Promotion; pr != nil {
		p.PromotionPolicy = strings.ToLower(string(pr.Policy))
		if n := pr.Nhit; n != nil {
			p.Nhit = &NhitParams{Threshold: u(n.Threshold), TriggerPercent: u(n.TriggerPercent)}
		}
	}
	if sc := s.SequentialCutoff; sc != nil {
		p.SeqCutoff = &SeqCutoff{Policy: strings.ToLower(string(sc.Policy))}
		if sc.ThresholdKiB != nil {
			p.SeqCutoff.ThresholdKiB = uint64(*sc.ThresholdKiB)
		}
	}
	return p
}

// stoppedStatus reports a Reconcile towards no cache. Pure.
func stoppedStatus(f prismv1.FastDevicePlan, res Result, dryRun bool) prismv1.CacheStatus {
	st := StatusOf(f, res, dryRun)
	if st.State == prismv1.CacheRunning {
		// Nothing left to do: no cache runs on the partition.
		st.State, st.CacheID, st.Cores = prismv1.CacheStopped, 0, nil
	}
	return st
}

// StatusOf reports one cache Reconcile. Pure.
func StatusOf(f prismv1.FastDevicePlan, res Result, dryRun bool) prismv1.CacheStatus {
	st := prismv1.CacheStatus{FastDevice: f.StablePath, CacheID: int32(res.CacheID)}
	for _, c := range res.Cores {
		st.Cores = append(st.Cores, prismv1.CacheCoreStatus{Device: c.Device, CoreID: int32(c.CoreID),
			ExportedObject: c.ExportedObject, State: c.State, Message: prismv1.Truncate(c.Message, 1024)})
	}
	has := func(typ string) (string, bool) {
		for _, c := range res.Conditions {
			if c.Type == typ {
				return c.Message, true
			}
		}
		return "", false
	}
	notReady := 0
	for _, c := range res.Cores {
		if c.State != CoreReady && c.State != CoreRemoving {
			notReady++
		}
	}
	var msgs []string
	switch failed, isFailed := has(ConditionCacheFailed); {
	case isFailed:
		st.State, msgs = prismv1.CacheFailed, append(msgs, failed)
	case res.Err != nil:
		st.State, msgs = prismv1.CachePending, append(msgs, "retrying: "+res.Err.Error())
	case res.CacheID == 0 && len(res.Refusals) > 0:
		st.State = prismv1.CacheRefused
	case dryRun && len(res.Pending) > 0:
		st.State, msgs = prismv1.CachePending, append(msgs, fmt.Sprintf("dry run: %d steps not taken, first: %s", len(res.Pending), res.Pending[0].Why))
	case res.Stopped:
		st.State, msgs = prismv1.CachePending, append(msgs, fmt.Sprintf("stopped after a step limit with %d steps to go", len(res.Pending)))
	default:
		if m, incomplete := has(ConditionCacheIncomplete); incomplete {
			st.State, msgs = prismv1.CacheIncomplete, append(msgs, m)
		} else if notReady > 0 {
			st.State, msgs = prismv1.CachePending, append(msgs, fmt.Sprintf("%d of %d cores not ready", notReady, len(res.Cores)))
		} else {
			st.State = prismv1.CacheRunning
		}
	}
	msgs = append(msgs, res.Refusals...)
	st.Message = prismv1.Truncate(strings.Join(msgs, "; "), 4096)
	return st
}

// WithStats adds casadm's statistics (Stats' records) to the cache statuses: per cache the
// exported-object and core writes and α_cache, per IO class occupancy, dirty data, writes and β.
// It returns the node's α_cache over every cache ("" before any write). Pure.
func WithStats(caches []prismv1.CacheStatus, stats []casadm.Stats) string {
	byID := map[int][]casadm.Stats{}
	id := 0
	for _, s := range stats {
		if s.Cache != nil {
			id = s.Cache.ID
		}
		byID[id] = append(byID[id], s)
	}
	var node Absorption
	for i := range caches {
		c := &caches[i]
		recs := byID[int(c.CacheID)]
		if c.CacheID == 0 || len(recs) == 0 {
			continue
		}
		a := Absorbed(recs)
		node.ExportedWrites += a.ExportedWrites
		node.QLCWrites += a.QLCWrites
		c.ExportedWrittenBytes, c.CoreWrittenBytes = int64(a.ExportedWrites*blockBytes), int64(a.QLCWrites*blockBytes)
		c.WriteReduction = ratio(Alpha(recs))
		c.IOClasses = nil
		for _, b := range Beta(recs) {
			u := prismv1.IOClassUsage{ID: int32(b.ClassID), Name: prismv1.Truncate(b.Name, 1024),
				OccupancyBytes: int64(b.Occupancy * blockBytes), WrittenBytes: int64(b.Writes * blockBytes)}
			if b.Defined {
				u.WriteInvalidation = strconv.FormatFloat(b.Beta, 'f', 3, 64)
			}
			u.DirtyBytes = classDirty(recs, b.ClassID)
			c.IOClasses = append(c.IOClasses, u)
		}
	}
	if node.ExportedWrites == 0 {
		return ""
	}
	return strconv.FormatFloat(1-float64(node.QLCWrites)/float64(node.ExportedWrites), 'f', 4, 64)
}

func classDirty(recs []casadm.Stats, class int) int64 {
	for _, s := range recs {
		if s.Class != nil && s.Class.ID == class && s.Usage != nil {
			return int64(value(s.Usage.Dirty) * blockBytes)
		}
	}
	return 0
}

func ratio(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}
