// Package plan holds Prism's pure planning functions: from StorageNode inventories and a
// HybridStoragePolicy to the devices chosen on each node. No client, no exec.
package plan

import (
	"fmt"
	"path"
	"slices"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// SelectNode chooses a node's fast and capacity devices for a policy. Fast devices are chosen
// first; a device chosen as fast is not considered for capacity. Every other device gets the
// reason it was not chosen. current is the plan already in force on the node (nil for none):
// the devices it uses stay usable although they now hold what the plan put there, and one
// whose latest inventory record is partial keeps its place in the plan (keptAs), with a
// warning naming it and the read that failed.
func SelectNode(node string, devices []prismv1.Device, spec *prismv1.HybridStoragePolicySpec, current *prismv1.NodePlan) prismv1.NodeSelection {
	sel := prismv1.NodeSelection{Node: node}
	wipe := overrides{wipe: wipeGrants(node, spec.AllowWipe), planned: plannedDevices(current)}
	ordered := byStablePath(devices)
	why := ambiguities(ordered)
	var held []prismv1.RejectedDevice
	if len(why) > 0 {
		ordered, held = holdAmbiguousNode(ordered, wipe.planned, why)
	}

	taken := newTakenSet(ordered)
	var overLimit map[string]string
	// A wipe grant covers fast devices only: the agent wipes a fast device before it writes
	// its table, but hands capacity devices to Rook as they are (decision 0020).
	// Except for bytes no format explains (ZeroHeadAndTail): Rook's prepare overwrites those
	// as it would a blank drive, which is what the grant allows (decision 0045).
	asCapacity := overrides{planned: wipe.planned, unexplained: wipe.wipe}
	// Both tiers' choices share one array: a device is chosen at most once.
	chosen := make([]prismv1.SelectedDevice, 0, len(devices))
	sel.Fast = pick(chosen, ordered, &spec.FastDevices, prismv1.TierFast, wipe, taken, &overLimit)
	sel.Capacity = pick(chosen[len(sel.Fast):len(sel.Fast)], ordered, &spec.CapacityDevices, prismv1.TierCapacity, asCapacity, taken, &overLimit)
	// Reasons are built only for the devices finally left out: most devices of a large node
	// fail one selector and pass the other, and their reason would be thrown away.
	for i, d := range ordered {
		if taken.has(i) {
			continue
		}
		fast := whyNot(d, &spec.FastDevices, prismv1.TierFast, wipe)
		capacity := whyNot(d, &spec.CapacityDevices, prismv1.TierCapacity, asCapacity)
		if wipe.wipe[d.StablePath] && strings.Contains(capacity, "not eligible") {
			capacity += " (allowWipe does not cover capacity devices: Prism wipes only the fast devices it partitions; clear this one yourself, e.g. ceph-volume lvm zap --destroy, and it is selected)"
		}
		if r, ok := overLimit[d.Name]; ok {
			capacity = r
		}
		sel.Rejected = append(sel.Rejected, prismv1.RejectedDevice{Name: d.Name, Reason: rejection(d, fast, capacity, spec)})
	}
	sel.Rejected = append(sel.Rejected, held...)
	sel.Warnings = partialWarnings(ordered, taken, spec, wipe)
	if len(why) > 0 {
		sel.Warnings = append([]string{truncateReason("the node's inventory is ambiguous, so Prism takes no new device on it and its agent writes none of these: " + strings.Join(why, "; "))}, sel.Warnings...)
	}
	switch {
	case len(devices) == 0:
		sel.Message = "the node agent reported no devices"
	case len(sel.Fast) == 0 && len(sel.Capacity) == 0:
		sel.Message = "no device matched the fast or capacity selectors"
	case len(sel.Fast) == 0:
		sel.Message = "no fast device matched: capacity devices would get no DB slot or cache"
	case len(sel.Capacity) == 0:
		sel.Message = "no capacity device matched"
	}
	return sel
}

// rejection says in one sentence why a device was chosen for neither tier: the reason of the
// selector for the device's own tier matters most (a QLC drive refused as capacity because
// it holds data, not because it is not fast).
func rejection(d *prismv1.Device, fast, capacity string, spec *prismv1.HybridStoragePolicySpec) string {
	switch {
	case fast == capacity:
		return fast
	case d.Tier == prismv1.TierFast && !strings.HasPrefix(fast, tierMismatch):
		return fast
	case d.Tier == prismv1.TierCapacity && !strings.HasPrefix(capacity, tierMismatch):
		return capacity
	case strings.HasPrefix(fast, tierMismatch) && strings.HasPrefix(capacity, tierMismatch):
		s := &spec.CapacityDevices
		if d.InferredTier != nil && d.InferredTier.Tier == prismv1.TierFast {
			s = &spec.FastDevices
		}
		return fmt.Sprintf("%s%s matches neither selector: %s%s", tierMismatch, d.Tier, d.TierReason, inferredNote(d, s))
	}
	return "fast: " + fast + "; capacity: " + capacity
}

// Complete reports whether a node has both tiers.
func Complete(sel prismv1.NodeSelection) bool { return len(sel.Fast) > 0 && len(sel.Capacity) > 0 }

// takenSet marks the devices a selector took, by index in the ordered devices. A device is
// taken with every other of the same kernel name (a selection names devices by it); real
// nodes have none, so the names are compared only once, to find out.
type takenSet struct {
	taken   []bool
	devices []*prismv1.Device
	// sharedNames: some devices have the same name.
	sharedNames bool
}

func newTakenSet(devices []*prismv1.Device) takenSet {
	t := takenSet{taken: make([]bool, len(devices)), devices: devices}
	// The names side by side on the stack: each Device is read once.
	var stack [64]string
	names := stack[:0]
	for _, d := range devices {
		names = append(names, d.Name)
	}
	for i := range names {
		for j := i + 1; j < len(names) && !t.sharedNames; j++ {
			t.sharedNames = names[i] == names[j]
		}
	}
	return t
}

func (t takenSet) has(i int) bool { return t.taken[i] }

func (t takenSet) take(i int) {
	t.taken[i] = true
	if !t.sharedNames {
		return
	}
	for j, d := range t.devices {
		if d.Name == t.devices[i].Name {
			t.taken[j] = true
		}
	}
}

// byStablePath orders pointers to the devices (a Device is large and a node may have dozens)
// by sortKey, stably.
func byStablePath(devices []prismv1.Device) []*prismv1.Device {
	// The keys are read once into an array on the stack and sorted there: a comparison then
	// touches no Device, and a move no heap memory.
	type keyed struct {
		key string
		i   int
	}
	var stack [64]keyed
	keys := stack[:0]
	for i := range devices {
		keys = append(keys, keyed{sortKey(&devices[i]), i})
	}
	slices.SortStableFunc(keys, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	ordered := make([]*prismv1.Device, len(devices))
	for i, k := range keys {
		ordered[i] = &devices[k.i]
	}
	return ordered
}

func sortKey(d *prismv1.Device) string {
	if d.StablePath != "" {
		return d.StablePath
	}
	return "~" + d.Name // devices without a stable path sort last
}

// whyNot says why a selector does not take a device ("" when it would).
func whyNot(d *prismv1.Device, s *prismv1.DeviceSelector, defaultTier prismv1.Tier, wipe overrides) string {
	tier, kept := wipe.keptAs(d)
	if !kept {
		if reason := mismatch(d, s, defaultTier); reason != "" {
			return reason
		}
	}
	reason := unusable(d, wipe)
	if reason == "" && kept && tier != defaultTier {
		return "the node's plan has it as " + string(tier) + " and its inventory record is partial"
	}
	return reason
}

// selects says whether a selector takes a device by what its record says: a device the
// node's plan uses and whose latest record is partial is taken by the selector of the tier
// the plan gives it, and by no other, whatever its record says (keptAs); any other device by
// matches.
func selects(d *prismv1.Device, s *prismv1.DeviceSelector, defaultTier prismv1.Tier, wipe overrides) bool {
	if tier, ok := wipe.keptAs(d); ok {
		return tier == defaultTier
	}
	return matches(d, s, defaultTier)
}

// maxPartialWarnings bounds the warnings about partial records (status.nodes[].warnings holds
// 64): a failed udev database read makes every device of a node partial at once.
const maxPartialWarnings = 5

// partialWarnings name each taken device the node's plan keeps although its record is
// partial, the read that failed, and what the record would have changed.
func partialWarnings(ordered []*prismv1.Device, taken takenSet, spec *prismv1.HybridStoragePolicySpec, wipe overrides) []string {
	var out []string
	n := 0
	for i, d := range ordered {
		tier, ok := wipe.keptAs(d)
		if !ok || !taken.has(i) {
			continue
		}
		if n++; n > maxPartialWarnings {
			continue
		}
		readable, _ := d.PartialRecord()
		s, role := &spec.CapacityDevices, "capacity"
		if tier == prismv1.TierFast {
			s, role = &spec.FastDevices, "fast"
		}
		w := fmt.Sprintf("%s (%s) keeps its place in the plan as a %s device although its latest inventory record is partial, which changes no plan", d.Name, d.StablePath, role)
		var asRecorded []string
		if reason := mismatch(d, s, tier); reason != "" {
			asRecorded = append(asRecorded, reason)
		}
		for _, r := range d.Eligibility.Reasons {
			if partialOverrides[r.Filter] {
				asRecorded = append(asRecorded, r.Filter+": "+r.Message)
			}
		}
		if len(asRecorded) > 0 {
			w += " (as recorded: " + strings.Join(asRecorded, "; ") + ")"
		}
		out = append(out, prismv1.Truncate(w+"; Readable: "+readable, 1024))
	}
	if n > maxPartialWarnings {
		out = append(out, fmt.Sprintf("and %d more devices of the plan with a partial inventory record keep their place", n-maxPartialWarnings))
	}
	return out
}

// pick appends the devices a selector takes to chosen, whose capacity holds every device; nil
// when it takes none. The result's capacity is its length, so that appending to it never
// writes into what follows in chosen's array.
func pick(chosen []prismv1.SelectedDevice, devs []*prismv1.Device, s *prismv1.DeviceSelector, defaultTier prismv1.Tier, wipe overrides, taken takenSet, overLimit *map[string]string) []prismv1.SelectedDevice {
	for i, d := range devs {
		if taken.has(i) || !selects(d, s, defaultTier, wipe) || !usableAsIs(d, wipe) {
			continue
		}
		if s.Limit != nil && len(chosen) >= int(*s.Limit) {
			if *overLimit == nil {
				*overLimit = map[string]string{}
			}
			(*overLimit)[d.Name] = fmt.Sprintf("beyond limit %d", *s.Limit)
			continue
		}
		taken.take(i)
		chosen = append(chosen, prismv1.SelectedDevice{Name: d.Name, StablePath: d.StablePath, Model: d.Model, SizeBytes: d.SizeBytes,
			AllowWipe: !d.Eligibility.Eligible && wipe.planned[d.StablePath] == "" && (wipe.wipe[d.StablePath] || wipe.unexplained[d.StablePath])})
	}
	if len(chosen) == 0 {
		return nil
	}
	return chosen[:len(chosen):len(chosen)]
}

const tierMismatch = "tier "

func tierList(tiers []prismv1.Tier) string {
	if len(tiers) == 1 {
		return "[" + string(tiers[0]) + "]"
	}
	s := make([]string, len(tiers))
	for i, t := range tiers {
		s[i] = string(t)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// matches is mismatch without building the reason.
func matches(d *prismv1.Device, s *prismv1.DeviceSelector, defaultTier prismv1.Tier) bool {
	if len(s.Paths) > 0 {
		return slices.Contains(s.Paths, d.StablePath)
	}
	if len(s.Tiers) > 0 || (len(s.Models) == 0 && len(s.Vendors) == 0) {
		tiers := s.Tiers
		if len(tiers) == 0 {
			tiers = []prismv1.Tier{defaultTier}
		}
		if !slices.Contains(tiers, effectiveTier(d, s)) {
			return false
		}
	}
	return mismatch(d, s, defaultTier) == ""
}

// effectiveTier is the tier a selector sees: the drive database's, or, when the selector sets
// inferredTiers: Accept and the database does not know the drive (tier Other), the tier the
// agent inferred from its evidence with Medium or High confidence (decision 0022). A Low
// confidence inference is shown but never used.
func effectiveTier(d *prismv1.Device, s *prismv1.DeviceSelector) prismv1.Tier {
	if s.InferredTiers == prismv1.InferredTiersAccept && d.Tier == prismv1.TierOther && d.InferredTier != nil &&
		d.InferredTier.Confidence != prismv1.ConfidenceLow {
		return d.InferredTier.Tier
	}
	return d.Tier
}

// inferredNote says why an inferred tier did not count.
func inferredNote(d *prismv1.Device, s *prismv1.DeviceSelector) string {
	switch {
	case d.InferredTier == nil:
		return ""
	case s.InferredTiers != prismv1.InferredTiersAccept:
		return "; the selector does not set inferredTiers: Accept"
	case d.InferredTier.Confidence == prismv1.ConfidenceLow:
		return "; a Low confidence inference is never used"
	}
	return ""
}

// usableAsIs is unusable without building the reason.
func usableAsIs(d *prismv1.Device, wipe overrides) bool {
	for _, r := range d.Eligibility.Reasons {
		if !wipe.overridden(d, r.Filter) {
			return false
		}
	}
	return true
}

// mismatch says why a device does not match a selector, or "" when it matches.
func mismatch(d *prismv1.Device, s *prismv1.DeviceSelector, defaultTier prismv1.Tier) string {
	if len(s.Paths) > 0 {
		if slices.Contains(s.Paths, d.StablePath) {
			return ""
		}
		return "not in paths"
	}
	tiers := s.Tiers
	if len(tiers) == 0 && len(s.Models) == 0 && len(s.Vendors) == 0 {
		tiers = []prismv1.Tier{defaultTier}
	}
	if len(tiers) > 0 && !slices.Contains(tiers, effectiveTier(d, s)) {
		return tierMismatch + string(d.Tier) + " is not in " + tierList(tiers) + " (" + d.TierReason + inferredNote(d, s) + ")"
	}
	if len(s.Models) > 0 && !globAny(s.Models, d.Model) {
		return fmt.Sprintf("model %q matches none of %q", d.Model, s.Models)
	}
	if len(s.Vendors) > 0 && !globAny(s.Vendors, d.Vendor) {
		return fmt.Sprintf("vendor %q matches none of %q", d.Vendor, s.Vendors)
	}
	if s.Size != "" {
		r, err := ParseSizeRange(s.Size)
		if err != nil {
			return err.Error()
		}
		if !r.Contains(d.SizeBytes) {
			return sizeMismatch(d.SizeBytes, s.Size, r)
		}
	}
	if s.Rotational != nil && *s.Rotational != d.Rotational {
		return fmt.Sprintf("rotational is %t", d.Rotational)
	}
	return ""
}

// unusable says why a matching device cannot be used: it failed an eligibility filter that
// neither a wipe grant nor the node's current plan overrides.
func unusable(d *prismv1.Device, wipe overrides) string {
	var msgs []string
	for _, r := range d.Eligibility.Reasons {
		if wipe.overridden(d, r.Filter) {
			continue // the policy lists this device for wiping, or the plan already uses it
		}
		msgs = append(msgs, r.Filter+": "+r.Message)
	}
	if len(msgs) == 0 {
		return ""
	}
	return "not eligible: " + strings.Join(msgs, "; ")
}

// wipeOverrides are the filters that fail only because a device holds data: an explicit wipe
// grant overrides exactly these, never read-only, in-use (holders) or unreadable devices.
var wipeOverrides = map[string]bool{prismv1.FilterNoPartitions: true, prismv1.FilterNoSignatures: true, prismv1.FilterZeroHeadAndTail: true}

// plannedOverrides are the filters a device fails once the node's plan is carried out: its
// fast device gets Prism's partitions, its capacity devices an OSD (BlueStore or LVM, with
// device-mapper holders). Without this override the operator would drop a node's plan as soon
// as the agent carried it out. Readable too: a read of a planned device that failed says
// nothing new about it, and dropping it would take its slot's data device out of the plan (the
// agent would then remove its cache core under the OSD on it). Never overridden: read-only,
// removable, too small, no stable path. It is safe because the agent re-reads a device before
// every write and only adds partitions to a device that is empty or holds exactly Prism's
// partitions, and adds as a new core only a device its inventory read completely.
var plannedOverrides = map[string]bool{prismv1.FilterNoPartitions: true, prismv1.FilterNoSignatures: true, prismv1.FilterZeroHeadAndTail: true, prismv1.FilterNoHolders: true, prismv1.FilterReadable: true}

// partialOverrides are the filters a planned device whose record is partial is not refused
// for either: a size that could not be read is reported as 0, which MinimumSize refuses.
// Read-only, removable and no stable path still refuse it: a failed read sets none of them.
var partialOverrides = map[string]bool{prismv1.FilterMinimumSize: true}

// overrides are the devices whose data does not make them unusable: wipe grants, and the
// devices of the node's current plan.
type overrides struct {
	wipe map[string]bool // by stable path
	// planned are the tiers the current plan gives its devices, by stable path.
	planned map[string]prismv1.Tier
	// unexplained are the grants that override ZeroHeadAndTail alone (capacity devices).
	unexplained map[string]bool
}

func (o overrides) overridden(d *prismv1.Device, filter string) bool {
	if wipeOverrides[filter] && o.wipe[d.StablePath] {
		return true
	}
	if filter == prismv1.FilterZeroHeadAndTail && o.unexplained[d.StablePath] {
		return true
	}
	if o.planned[d.StablePath] == "" {
		return false
	}
	if plannedOverrides[filter] {
		return true
	}
	_, isPartial := d.PartialRecord()
	return partialOverrides[filter] && isPartial
}

// keptAs is the tier the node's plan gives a device whose latest inventory record is partial
// (false for any other device). Such a record says nothing new of the device: a field whose
// read failed is empty or zero (model "", so tier Other; size 0; not rotational), and judged
// on it the device would leave the plan, its slot would lose its data device, and its OSD's
// device set and volumes would be withdrawn. So it keeps its place, and selectors judge it
// again once it is read completely. A device outside the plan is judged on its record.
func (o overrides) keptAs(d *prismv1.Device) (prismv1.Tier, bool) {
	tier := o.planned[d.StablePath]
	if tier == "" {
		return "", false
	}
	_, ok := d.PartialRecord()
	return tier, ok
}

// plannedDevices are the stable paths a plan uses, with their tier: its fast devices and its
// slots' data devices (capacity).
func plannedDevices(p *prismv1.NodePlan) map[string]prismv1.Tier {
	if p == nil || len(p.FastDevices) == 0 {
		return nil
	}
	m := map[string]prismv1.Tier{}
	for _, f := range p.FastDevices {
		m[f.StablePath] = prismv1.TierFast
		for _, s := range f.Slots {
			if s.DataDevice != "" {
				m[s.DataDevice] = prismv1.TierCapacity
			}
		}
	}
	return m
}

func wipeGrants(node string, grants []prismv1.WipeGrant) map[string]bool {
	var m map[string]bool
	for _, g := range grants {
		if g.Node == node {
			if m == nil {
				m = map[string]bool{}
			}
			m[g.Path] = true
		}
	}
	return m
}

func globAny(patterns []string, s string) bool {
	s = strings.ToLower(s)
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), s); ok {
			return true
		}
	}
	return false
}
