package advisor

import "github.com/prism-storage/prism/api/v1alpha1"

// WritesBack reports whether a cache mode keeps writes in the cache (WriteBack, WriteOnly):
// in the other modes every write reaches the capacity device, so no class choice saves any.
func WritesBack(mode v1alpha1.CacheMode) bool {
	return mode == v1alpha1.CacheWriteBack || mode == v1alpha1.CacheWriteOnly
}

// Samples reads one StorageNode's caches as the agent reported them, keyed
// "node/fast device". Only caches that run (Running, or Incomplete with a core missing)
// count; a cache's size is its planned cache partition's (0 when the plan has none).
func Samples(sn *v1alpha1.StorageNode) map[string]Sample {
	plan := sn.Spec.Plan
	if plan == nil || plan.Cache == nil || len(sn.Status.Caches) == 0 {
		return nil
	}
	sizes := map[string]int64{}
	for _, fd := range plan.FastDevices {
		if fd.Cache != nil {
			sizes[fd.StablePath] = fd.Cache.SizeBytes
		}
	}
	config := CSVHash(plan.Cache.IOClassCSV)
	out := map[string]Sample{}
	for _, c := range sn.Status.Caches {
		if c.State != v1alpha1.CacheRunning && c.State != v1alpha1.CacheIncomplete {
			continue
		}
		s := Sample{CacheID: c.CacheID, Config: config, SizeBytes: sizes[c.FastDevice],
			ExportedWritten: c.ExportedWrittenBytes, CoreWritten: c.CoreWrittenBytes, Classes: map[int32]ClassSample{}}
		for _, u := range c.IOClasses {
			s.Classes[u.ID] = ClassSample{Written: u.WrittenBytes, Occupancy: u.OccupancyBytes, Dirty: u.DirtyBytes}
		}
		out[sn.Name+"/"+c.FastDevice] = s
	}
	return out
}
