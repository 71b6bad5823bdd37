package opencas

import (
	"fmt"
	"slices"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/ioclass"
)

// Decide compares the desired cache with the observed one and returns the steps that get
// there, or refusals. Pure: it reads only its arguments.
func Decide(d Desired, o Observed) Plan {
	var p Plan
	if d.LineSizeKiB == 0 {
		d.LineSizeKiB = 4
	}
	if err := d.validate(); err != nil {
		p.Refusals = append(p.Refusals, "the desired cache is not valid: "+err.Error())
		p.Conditions = append(p.Conditions, Condition{ConditionDesiredInvalid, err.Error()})
		return p
	}
	mode, _ := casadmMode(d.Mode)
	if mode == "" {
		return decideNone(d, o)
	}
	if o.Cache == nil {
		return decideAbsent(d, o, mode)
	}
	return decidePresent(d, o, mode)
}

// decideNone: no cache is wanted. A running one is stopped with its flush, after its lines
// leave opencas.conf (so a reboot in between does not bring it back).
func decideNone(d Desired, o Observed) Plan {
	p := Plan{}
	id := d.CacheID
	if o.Cache != nil {
		id = o.Cache.ID
	}
	conf := MergeConf(o.Conf, id, d.Partition, nil, nil)
	if o.Conf != "" && conf != o.Conf {
		p.Steps = append(p.Steps, Step{Kind: StepWriteFile, Path: ConfPath, Content: conf, Why: "remove the cache from opencas.conf"})
	}
	if o.Cache == nil {
		return p
	}
	p.CacheID = id
	c := o.Cache
	if failed, why := cacheFailed(c); failed {
		p.Steps = nil
		p.Conditions = append(p.Conditions, Condition{ConditionCacheFailed, why})
		p.Refusals = append(p.Refusals, fmt.Sprintf("cache %d is not stopped: %s; stopping it would need a flush the failed device cannot do. %s", id, why, failedCacheAdvice(id)))
		p.Cores = failedCores(c, why)
		return p
	}
	for _, k := range c.Cores {
		st := CoreStatus{Device: k.Disk, CoreID: k.ID, State: CoreRemoving, Message: "the cache is being stopped (mode None)"}
		if k.Status.State == casadm.StateInactive && coreDirty(c, k.ID) {
			st.State, st.Message = CoreRefused, "inactive core with dirty data: stopping the cache would strand it"
			p.Cores = append(p.Cores, st)
			p.Refusals = append(p.Refusals, fmt.Sprintf("cache %d is not stopped: inactive core %d (%s) holds dirty data that cannot be flushed; it stays in opencas.conf so a reboot brings it back", id, k.ID, k.Disk))
			p.Steps = nil
			return p
		}
		p.Cores = append(p.Cores, st)
	}
	p.Steps = append(p.Steps, Step{Kind: StepStop, Argv: casadm.StopArgv(id),
		Why: "mode None: stop the cache (casadm flushes its dirty data first)"})
	return p
}

// decideAbsent: no cache runs on the partition; start one (or load the one its metadata
// holds), then configure it as decidePresent would a default cache.
func decideAbsent(d Desired, o Observed, mode string) Plan {
	p := Plan{CacheID: d.CacheID}
	refuse := func(why string) Plan {
		p.CacheID = 0
		p.Refusals = append(p.Refusals, why)
		for _, c := range d.Cores {
			p.Cores = append(p.Cores, CoreStatus{Device: c, State: CoreRefused, Message: why})
		}
		return p
	}
	if !d.PartitionScanned {
		return refuse(fmt.Sprintf("no cache is started on %s: the partition has not been scanned for signatures, and Prism never starts a cache blind", d.Partition))
	}
	var cas, foreign []string
	for _, s := range d.Signatures {
		if s.Kind == prismv1.SignatureOpenCAS {
			cas = append(cas, s.Name)
		} else {
			foreign = append(foreign, describe([]prismv1.DeviceSignature{s}))
		}
	}
	switch {
	case len(foreign) > 0:
		return refuse(fmt.Sprintf("no cache is started on %s: it holds %s; Prism starts a cache only on a partition without signatures", d.Partition, strings.Join(foreign, ", ")))
	case len(cas) > 0:
		// Existing Open CAS metadata may hold dirty data: load it, never re-initialise.
		p.CacheID = 0
		p.Steps = append(p.Steps, Step{Kind: StepLoad, Argv: casadm.LoadArgv(d.Partition), Barrier: true,
			Why: "the partition holds Open CAS metadata: load it (its dirty data, classes and cores come back)"})
		for _, c := range d.Cores {
			p.Cores = append(p.Cores, CoreStatus{Device: c, State: CorePending, Message: "waiting for the cache to be loaded"})
		}
		return p
	}
	if d.Unexplained != "" && !d.StartCutShort {
		return refuse(fmt.Sprintf("no cache is started on %s: it holds %s that no format explains, and casadm -S --force would overwrite them; Prism starts a cache only over zeros (clear the partition's first and last MiB if the data is not wanted)", d.Partition, d.Unexplained))
	}
	for _, c := range o.List.Caches {
		if c.ID == d.CacheID {
			return refuse(fmt.Sprintf("no cache is started on %s: cache id %d is taken by the cache on %s", d.Partition, d.CacheID, c.Disk))
		}
	}
	p.Steps = append(p.Steps, Step{Kind: StepStart, Path: d.Partition,
		Argv: casadm.StartArgv(d.Partition, d.CacheID, mode, d.LineSizeKiB),
		Why:  "the partition holds no signature and reads zero in its first and last MiB (or holds what Prism's own start cut short left)"})
	// A fresh cache: defaults everywhere, no cores, only the default IO classes.
	fresh := &ObservedCache{Cache: casadm.Cache{ID: d.CacheID, Disk: d.Partition, Mode: mode, Status: casadm.Status{State: casadm.StateRunning}}}
	rest := configure(d, o, fresh, true)
	p.Steps = append(p.Steps, rest.Steps...)
	p.Refusals = append(p.Refusals, rest.Refusals...)
	p.Conditions = append(p.Conditions, rest.Conditions...)
	p.Cores = rest.Cores
	return p
}

// decidePresent: the cache runs; bring its mode, cores, parameters, classes and conf to
// the desired ones.
func decidePresent(d Desired, o Observed, mode string) Plan {
	c := o.Cache
	p := Plan{CacheID: c.ID}
	if failed, why := cacheFailed(c); failed {
		p.Conditions = append(p.Conditions, Condition{ConditionCacheFailed, why})
		p.Refusals = append(p.Refusals, fmt.Sprintf("cache %d has failed (%s): Prism changes nothing on it. %s", c.ID, why, failedCacheAdvice(c.ID)))
		p.Cores = failedCores(c, why)
		return p
	}
	if c.ID != d.CacheID {
		p.Conditions = append(p.Conditions, Condition{ConditionCacheID,
			fmt.Sprintf("the cache on %s runs as cache %d (from its metadata), not %d; its exported objects are /dev/cas%d-*", d.Partition, c.ID, d.CacheID, c.ID)})
	}
	incomplete := c.Status.State == casadm.StateIncomplete
	if incomplete {
		p.Conditions = append(p.Conditions, Condition{ConditionCacheIncomplete, fmt.Sprintf("cache %d is incomplete: at least one core device is missing", c.ID)})
	}
	if c.Stats != nil && c.Stats.Cache != nil && c.Stats.Cache.LineSizeKiB != 0 && c.Stats.Cache.LineSizeKiB != d.LineSizeKiB {
		msg := fmt.Sprintf("cache %d has %d KiB lines, the policy asks for %d KiB: the line size is fixed when a cache starts; Prism does not re-create a running cache (flush, stop it and clear its metadata by hand to change it)",
			c.ID, c.Stats.Cache.LineSizeKiB, d.LineSizeKiB)
		p.Conditions = append(p.Conditions, Condition{ConditionLineSize, msg})
		p.Refusals = append(p.Refusals, msg)
	}
	if c.Mode != mode {
		leaving := lazyWrite(c.Mode) && !lazyWrite(mode)
		switch {
		case leaving && incomplete:
			p.Refusals = append(p.Refusals, fmt.Sprintf("cache %d stays in %s: leaving it needs a flush, which an incomplete cache cannot do", c.ID, c.Mode))
		case leaving:
			p.Steps = append(p.Steps, Step{Kind: StepSetMode, Argv: casadm.SetModeArgv(c.ID, mode, true),
				Why: fmt.Sprintf("leave %s for %s, flushing the dirty data first", c.Mode, mode)})
		default:
			p.Steps = append(p.Steps, Step{Kind: StepSetMode, Argv: casadm.SetModeArgv(c.ID, mode, false),
				Why: fmt.Sprintf("switch %s to %s", c.Mode, mode)})
		}
	}
	rest := configure(d, o, c, false)
	p.Steps = append(p.Steps, rest.Steps...)
	p.Refusals = append(p.Refusals, rest.Refusals...)
	p.Conditions = append(p.Conditions, rest.Conditions...)
	p.Cores = rest.Cores
	return p
}

// configure plans cores, parameters, IO classes and the conf of a running (or just
// started, fresh) cache.
func configure(d Desired, o Observed, c *ObservedCache, fresh bool) Plan {
	var p Plan
	id := c.ID
	want := map[string]bool{}
	for _, k := range d.Cores {
		want[k] = true
	}
	// Cores that go: flush, then remove. Never -f on an active core; an inactive one's
	// dirty data is dropped only when allowed.
	for _, k := range c.Cores {
		if want[k.Disk] {
			continue
		}
		st := CoreStatus{Device: k.Disk, CoreID: k.ID, State: CoreRemoving}
		dirty := coreDirty(c, k.ID)
		switch {
		case k.Status.State == casadm.StateInactive && dirty && !d.AllowDirtyDataLoss:
			st.State = CoreRefused
			st.Message = fmt.Sprintf("core %d (%s) is not in the plan but is inactive and holds dirty data that cannot be flushed; set allowDirtyDataLoss to drop it", k.ID, k.Disk)
			p.Refusals = append(p.Refusals, st.Message)
		case k.Status.State == casadm.StateInactive:
			argv := casadm.RemoveInactiveArgv(id, k.ID, dirty)
			why := "remove the inactive core"
			if dirty {
				why = "remove the inactive core, dropping its dirty data (allowDirtyDataLoss)"
			}
			p.Steps = append(p.Steps, Step{Kind: StepRemoveInactive, Argv: argv, Why: why})
			st.Message = why
		default:
			if dirty {
				p.Steps = append(p.Steps, Step{Kind: StepFlushCore, Argv: casadm.FlushCoreArgv(id, k.ID),
					Why: "flush the dirty data of a core that leaves the cache"})
			}
			p.Steps = append(p.Steps, Step{Kind: StepRemoveCore, Argv: casadm.RemoveCoreArgv(id, k.ID),
				Why: "the core is not in the plan (casadm flushes again before removing; never -f)"})
			st.Message = "not in the plan: flushed, then removed"
		}
		p.Cores = append(p.Cores, st)
	}
	// Cores that stay or come.
	used := map[int]bool{}
	have := map[string]casadm.Core{}
	for _, k := range c.Cores {
		used[k.ID] = true
		have[k.Disk] = k
	}
	elsewhere := map[string]int{}
	for _, other := range o.List.Caches {
		if other.Disk == c.Disk || other.ID == c.ID {
			continue
		}
		for _, k := range other.Cores {
			elsewhere[k.Disk] = other.ID
		}
	}
	var desiredStatus []CoreStatus
	var confCores []ConfCore
	var newCores []int
	next := 1
	for _, dev := range d.Cores {
		if k, ok := have[dev]; ok {
			st := CoreStatus{Device: dev, CoreID: k.ID, ExportedObject: orEmpty(k.Device, exported(id, k.ID)), State: CoreReady}
			if k.Status.State == casadm.StateInactive {
				st.State, st.ExportedObject = CoreInactive, ""
				st.Message = fmt.Sprintf("core %d's device %s is missing: the cache is incomplete until it comes back", k.ID, dev)
				p.Conditions = append(p.Conditions, Condition{ConditionCoreInactive, st.Message})
			}
			desiredStatus = append(desiredStatus, st)
			confCores = append(confCores, ConfCore{CacheID: id, CoreID: k.ID, Device: dev, Params: []ConfParam{{"lazy_startup", "true"}}})
			continue
		}
		if other, busy := elsewhere[dev]; busy {
			msg := fmt.Sprintf("%s is already a core of cache %d; Prism does not move it", dev, other)
			p.Refusals = append(p.Refusals, msg)
			desiredStatus = append(desiredStatus, CoreStatus{Device: dev, State: CoreRefused, Message: msg})
			continue
		}
		if why, unread := d.CoreUnreadable[dev]; unread {
			msg := fmt.Sprintf("%s is not added as a core: the inventory %s", dev, why)
			p.Refusals = append(p.Refusals, msg)
			desiredStatus = append(desiredStatus, CoreStatus{Device: dev, State: CoreRefused, Message: msg})
			continue
		}
		if sigs := d.CoreSignatures[dev]; len(sigs) > 0 {
			msg := fmt.Sprintf("%s holds %s; Prism adds only empty devices as cores, so whatever is on it stays on the raw device", dev, describe(sigs))
			p.Refusals = append(p.Refusals, msg)
			desiredStatus = append(desiredStatus, CoreStatus{Device: dev, State: CoreRefused, Message: msg})
			continue
		}
		for used[next] {
			next++
		}
		used[next] = true
		p.Steps = append(p.Steps, Step{Kind: StepAddCore, Argv: casadm.AddCoreArgv(id, dev, next),
			Why: "add the QLC device as a core"})
		desiredStatus = append(desiredStatus, CoreStatus{Device: dev, CoreID: next, ExportedObject: exported(id, next), State: CorePending,
			Message: "to be added as core " + itoa(next)})
		confCores = append(confCores, ConfCore{CacheID: id, CoreID: next, Device: dev, Params: []ConfParam{{"lazy_startup", "true"}}})
		newCores = append(newCores, next)
	}
	p.Cores = append(desiredStatus, p.Cores...)

	p.Steps = append(p.Steps, paramSteps(d.Params, c, id, fresh)...)
	p.Steps = append(p.Steps, seqCutoffSteps(d.Params.SeqCutoff, c, id, fresh, desiredStatus, newCores)...)

	if d.IOClassCSV != "" {
		want, _ := parseClasses(d.IOClassCSV)
		if fresh || c.IOClasses == nil || !sameClasses(want, *c.IOClasses) {
			p.Steps = append(p.Steps, Step{Kind: StepLoadIOClasses, Argv: casadm.LoadIOClassesArgv(id, "-"),
				Stdin: []byte(d.IOClassCSV), Why: "load the ClassificationPolicy's IO classes"})
		}
		file := IOClassFilePath(id)
		if o.IOClassFile != d.IOClassCSV {
			p.Steps = append(p.Steps, Step{Kind: StepWriteFile, Path: file, Content: d.IOClassCSV, Why: "keep the IO class file opencas.conf names"})
		}
	}
	mode, _ := casadmMode(d.Mode)
	cc := &ConfCache{ID: id, Device: d.Partition, Mode: mode}
	if d.IOClassCSV != "" {
		cc.Params = append(cc.Params, ConfParam{"ioclass_file", IOClassFilePath(id)})
	}
	if d.Params.CleaningPolicy != "" {
		cc.Params = append(cc.Params, ConfParam{"cleaning_policy", d.Params.CleaningPolicy})
	}
	if d.Params.PromotionPolicy != "" {
		cc.Params = append(cc.Params, ConfParam{"promotion_policy", d.Params.PromotionPolicy})
	}
	cc.Params = append(cc.Params, ConfParam{"cache_line_size", itoa(d.LineSizeKiB)}, ConfParam{"lazy_startup", "true"})
	if conf := MergeConf(o.Conf, id, d.Partition, cc, confCores); conf != o.Conf {
		p.Steps = append(p.Steps, Step{Kind: StepWriteFile, Path: ConfPath, Content: conf, Why: "persist the cache in opencas.conf"})
	}
	return p
}

// describe names signatures for a message.
func describe(sigs []prismv1.DeviceSignature) string {
	var parts []string
	for _, s := range sigs {
		parts = append(parts, fmt.Sprintf("%s (%s) at offset %d", s.Name, s.Kind, s.OffsetBytes))
	}
	return strings.Join(parts, ", ")
}

func orEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// cacheFailed says whether the cache device failed. The real module (v26.03.2) keeps
// calling such a cache Running until OCF meets a metadata error, then "Not running"; so the
// evidence is the cache error counters (reset with casadm -Z once the device is sound), or a
// state a working cache never has.
func cacheFailed(c *ObservedCache) (bool, string) {
	switch c.Status.State {
	case casadm.StateRunning, casadm.StateIncomplete, casadm.StateFlushing:
	case casadm.StateNotRunning:
		return true, fmt.Sprintf("casadm reports the cache %s (OCF stopped it after a metadata error on the cache device)", c.Status)
	default:
		return true, fmt.Sprintf("casadm reports the cache %s", c.Status)
	}
	if c.Stats != nil && c.Stats.Errors != nil && c.Stats.Errors.CacheTotal != nil && c.Stats.Errors.CacheTotal.Value > 0 {
		e := c.Stats.Errors
		return true, fmt.Sprintf("the cache device reported %d errors (%s read, %s write)", e.CacheTotal.Value, counterValue(e.CacheRead), counterValue(e.CacheWrite))
	}
	return false, ""
}

func counterValue(c *casadm.Counter) string {
	if c == nil {
		return "?"
	}
	return utoa(c.Value)
}

// failedCores reports every core of a failed cache. Nothing moves them to pass-through: on
// the real module casadm -Q cannot save the new mode on a dead device ("Error while writing
// to cache device"), and IO that needs the device fails (docs/opencas-real-module.md).
func failedCores(c *ObservedCache, why string) []CoreStatus {
	var out []CoreStatus
	dirty := ""
	if c.Stats != nil && c.Stats.Usage != nil && c.Stats.Usage.Dirty != nil && c.Stats.Usage.Dirty.Value > 0 {
		dirty = fmt.Sprintf("; %d dirty 4 KiB blocks are stranded on the cache device", c.Stats.Usage.Dirty.Value)
	}
	for _, k := range c.Cores {
		out = append(out, CoreStatus{Device: k.Disk, CoreID: k.ID, ExportedObject: k.Device, State: CoreCacheFailed,
			Message: fmt.Sprintf("%s: IO to %s that needs the cache device fails (writes the IO classes cache, reads of cached blocks); only pass-through IO reaches %s%s",
				why, orEmpty(k.Device, exported(c.ID, k.ID)), k.Disk, dirty)})
	}
	return out
}

// failedCacheAdvice is what to do by hand, as the real module showed it: casadm -T with its
// flush hits a kernel BUG on a failed cache holding dirty data; -T -n stops it (rc 1, "with
// errors") and leaves the metadata last written on the device, so a device that comes back
// loads with its dirty data (casadm -S --load, or casctl at boot).
func failedCacheAdvice(id int) string {
	return fmt.Sprintf("Do not run casadm -T -i %d with its flush (v26.03.2 hits a kernel BUG with dirty data); stop it with casadm -T -i %d -n: if the device comes back, casadm -S -d <partition> --load (or a reboot) brings the cache back with its dirty data; if not, the dirty blocks are lost and the cores hold older data there", id, id)
}

// coreDirty says whether a core may hold dirty data; unknown counts as dirty.
func coreDirty(c *ObservedCache, core int) bool {
	u, ok := c.CoreUsage[core]
	if !ok || u == nil || u.Dirty == nil {
		return true
	}
	return u.Dirty.Value > 0
}

// sameClasses compares IO class tables as the kernel holds them. Class 0 counts only when
// the desired table lists it (casadm keeps class 0 when a file omits it).
func sameClasses(want, have ioclass.Config) bool {
	type key struct {
		rule     string
		prio     int
		maxSize  int
		presence bool
	}
	norm := func(cfg ioclass.Config, skip0 bool) map[int]key {
		m := map[int]key{}
		for _, c := range cfg.Classes {
			if c.ID == 0 && skip0 {
				continue
			}
			prio := -1
			if c.Priority != nil {
				prio = *c.Priority
			}
			m[c.ID] = key{c.Rule, prio, c.MaxSizePercent(), true}
		}
		return m
	}
	_, has0 := want.Class(0)
	w, h := norm(want, !has0), norm(have, !has0)
	if len(w) != len(h) {
		return false
	}
	for id, k := range w {
		if h[id] != k {
			return false
		}
	}
	return true
}

// paramValue reads one observed parameter.
func paramValue(c *ObservedCache, ns, title string) (string, bool) {
	ps, ok := c.Params[ns]
	if !ok {
		return "", false
	}
	p, ok := ps.Get(title)
	return p.Value, ok
}

// paramOpt is one desired parameter value.
type paramOpt struct {
	spec  casadm.ParamSpec
	value string
}

// ParamNamespaces lists the -G namespaces the desired parameters need read.
func (p Params) ParamNamespaces() []string {
	var ns []string
	if p.CleaningPolicy != "" {
		ns = append(ns, "cleaning")
	}
	if p.Alru != nil {
		ns = append(ns, "cleaning-alru")
	}
	if p.Acp != nil {
		ns = append(ns, "cleaning-acp")
	}
	if p.PromotionPolicy != "" {
		ns = append(ns, "promotion")
	}
	if p.Nhit != nil {
		ns = append(ns, "promotion-nhit")
	}
	return ns
}

func (p Params) wanted() map[string][]paramOpt {
	out := map[string][]paramOpt{}
	add := func(spec casadm.ParamSpec, v *uint64) {
		if v != nil {
			out[spec.Namespace] = append(out[spec.Namespace], paramOpt{spec, utoa(*v)})
		}
	}
	if p.CleaningPolicy != "" {
		out["cleaning"] = []paramOpt{{casadm.CleaningPolicy, p.CleaningPolicy}}
	}
	if a := p.Alru; a != nil {
		add(casadm.AlruWakeUp, a.WakeUpSeconds)
		add(casadm.AlruStaleBuffer, a.StaleBufferSeconds)
		add(casadm.AlruFlushMaxBuffers, a.FlushMaxBuffers)
		add(casadm.AlruActivityThreshold, a.ActivityThresholdMs)
	}
	if a := p.Acp; a != nil {
		add(casadm.AcpWakeUp, a.WakeUpMs)
		add(casadm.AcpFlushMaxBuffers, a.FlushMaxBuffers)
	}
	if p.PromotionPolicy != "" {
		out["promotion"] = []paramOpt{{casadm.PromotionPolicy, p.PromotionPolicy}}
	}
	if n := p.Nhit; n != nil {
		add(casadm.NhitThreshold, n.Threshold)
		add(casadm.NhitTrigger, n.TriggerPercent)
	}
	return out
}

// paramSteps sets the cache parameters that differ (on a fresh cache: from OCF's defaults).
// The policy type goes before its parameters.
func paramSteps(p Params, c *ObservedCache, id int, fresh bool) []Step {
	want := p.wanted()
	var steps []Step
	for _, ns := range casadm.CacheParamNamespaces {
		var set []string
		for _, o := range want[ns] {
			have, ok := o.spec.Default, true
			if !fresh {
				have, ok = paramValue(c, ns, o.spec.Title)
			}
			if !ok || have != o.value {
				set = append(set, o.spec.Flag, o.value)
			}
		}
		if len(set) > 0 {
			steps = append(steps, Step{Kind: StepSetParam, Argv: casadm.SetParamsArgv(ns, id, set...), Why: "set " + ns + " parameters"})
		}
	}
	return steps
}

// seqCutoffSteps sets the sequential cut-off of every desired core that differs (new cores
// start with OCF's defaults).
func seqCutoffSteps(s *SeqCutoff, c *ObservedCache, id int, fresh bool, cores []CoreStatus, newCores []int) []Step {
	if s == nil || (s.ThresholdKiB == 0 && s.Policy == "") {
		return nil
	}
	var steps []Step
	for _, k := range cores {
		if k.State != CoreReady && k.State != CorePending {
			continue
		}
		get := func(spec casadm.ParamSpec) (string, bool) {
			if fresh || slices.Contains(newCores, k.CoreID) {
				return spec.Default, true
			}
			ps, ok := c.SeqCutoff[k.CoreID]
			if !ok {
				return "", false
			}
			p, ok := ps.Get(spec.Title)
			return p.Value, ok
		}
		var set []string
		if s.Policy != "" {
			if v, ok := get(casadm.SeqCutoffPolicy); !ok || v != s.Policy {
				set = append(set, casadm.SeqCutoffPolicy.Flag, s.Policy)
			}
		}
		if s.ThresholdKiB != 0 {
			if v, ok := get(casadm.SeqCutoffThreshold); !ok || v != utoa(s.ThresholdKiB) {
				set = append(set, casadm.SeqCutoffThreshold.Flag, utoa(s.ThresholdKiB))
			}
		}
		if len(set) > 0 {
			steps = append(steps, Step{Kind: StepSetParam, Argv: casadm.SetCoreParamsArgv(casadm.SeqCutoffPolicy.Namespace, id, k.CoreID, set...),
				Why: "set the sequential cut-off of core " + itoa(k.CoreID)})
		}
	}
	return steps
}
