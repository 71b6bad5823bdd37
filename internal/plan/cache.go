package plan

import (
	"fmt"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/advisor"
)

// defaultLineSizeKiB is Open CAS's default cache line size.
const defaultLineSizeKiB = 4

// CachePlan builds the node-level cache plan of a policy: its mode, line size and settings,
// and the IO classes of the ClassificationPolicy it names, compiled to the CSV casadm loads.
// classes is that ClassificationPolicy (nil when the policy names none, or when it was not
// found). It returns nil when the policy's cache is off, and an error naming the field when
// the plan cannot be built: then no node gets a cache plan, rather than a cache without the
// classes the user asked for.
func CachePlan(spec *prismv1.HybridStoragePolicySpec, classes *prismv1.ClassificationPolicy) (*prismv1.NodeCachePlan, error) {
	c := spec.Cache
	if c.Mode == "" || c.Mode == prismv1.CacheNone {
		return nil, nil
	}
	p := &prismv1.NodeCachePlan{
		Mode:                     c.Mode,
		LineSizeKiB:              c.LineSizeKiB,
		CacheSettings:            *c.CacheSettings.DeepCopy(),
		ClassificationPolicyName: c.ClassificationPolicyName,
	}
	if p.LineSizeKiB == 0 {
		p.LineSizeKiB = defaultLineSizeKiB
	}
	if p.DirtyData == "" {
		p.DirtyData = prismv1.DirtyDataPreserve
	}
	if c.ClassificationPolicyName == "" {
		return p, nil
	}
	if classes == nil || classes.Name != c.ClassificationPolicyName {
		return nil, fmt.Errorf("spec.cache.classificationPolicyName: ClassificationPolicy %q not found", c.ClassificationPolicyName)
	}
	// What the nodes load: the classes as written, or with the advisor's recommendations
	// when the ClassificationPolicy opts in (spec.advisor.apply: Automatic).
	nc, err := advisor.NodeConfig(classes)
	if err != nil {
		return nil, fmt.Errorf("spec.cache.classificationPolicyName: ClassificationPolicy %q does not compile: %w", c.ClassificationPolicyName, err)
	}
	p.IOClassCSV = nc.Config.CSV()
	return p, nil
}

// assignCacheIDs gives every fast device with a cache partition a casadm cache id. A device
// keeps the id its previous plan gave it (exported objects /dev/cas<id>-<core> must not be
// renamed under an OSD); a new one takes the lowest id no other device of the node uses.
func assignCacheIDs(devs []prismv1.FastDevicePlan, prev *prismv1.NodePlan) {
	used := map[int32]bool{}
	for i := range devs {
		if devs[i].Cache == nil {
			continue
		}
		if old := previousDevice(prev, devs[i].StablePath); old != nil && old.CacheID > 0 && !used[old.CacheID] {
			devs[i].CacheID = old.CacheID
			used[old.CacheID] = true
		}
	}
	next := int32(1)
	for i := range devs {
		if devs[i].Cache == nil || devs[i].CacheID > 0 {
			continue
		}
		for used[next] {
			next++
		}
		devs[i].CacheID = next
		used[next] = true
	}
}
