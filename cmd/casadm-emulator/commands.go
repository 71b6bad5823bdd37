package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/ioclass"
)

// Limits of the emulated (master) casadm.
const (
	maxCacheID    = casadm.MaxCacheID
	maxCoreID     = casadm.MaxCoreID
	maxClassID    = 33 // master: OCF_USER_IO_CLASS_MAX 34
	coreIDInvalid = -1
)

// args are the parsed options of one command.
type args struct {
	cacheID, coreID, classID int
	cacheDevice, coreDevice  string
	force, load, noFlush     bool
	byID                     bool
	mode                     string
	lineKiB                  int
	flush                    int // -1 not given, 0 no, 1 yes
	csv                      bool
	filters                  int
	classStats               bool
	// -C
	ioSub                          string
	file                           string
	cacheIDSet, fileSet, formatSet bool
	// -X
	params map[string]string
	// -X/-G: the namespace (-n NAME)
	ns string
}

func newArgs() args {
	return args{cacheID: 0, coreID: coreIDInvalid, classID: -1, flush: -1, filters: 0, params: map[string]string{}}
}

var cacheModes = []struct{ short, long string }{
	{"wt", "Write-Through"}, {"wb", "Write-Back"}, {"wa", "Write-Around"}, {"pt", "Pass-Through"}, {"wo", "Write-Only"},
}

func validMode(s string) bool {
	for _, m := range cacheModes {
		if m.short == s {
			return true
		}
	}
	return false
}

func longMode(s string) string {
	for _, m := range cacheModes {
		if m.short == s {
			return m.long
		}
	}
	return "??"
}

// cacheMode takes -c: one of the modes' short names, else the option fails
// without a message of its own.
func (c *cli) cacheMode(s string) bool {
	if !validMode(s) {
		return false
	}
	c.a.mode = s
	return true
}

func lazyWrite(mode string) bool { return mode == "wb" || mode == "wo" }

// commonOpt is casadm's command_handle_option.
func commonOpt(c *cli, long string, a []string) bool {
	switch long {
	case "cache-id":
		v, ok := c.validateNum(first(a), "cache id", 1, maxCacheID)
		c.a.cacheID = int(v)
		return ok
	case "core-id":
		v, ok := c.validateNum(first(a), "core id", 0, maxCoreID)
		c.a.coreID = int(v)
		return ok
	case "core-device":
		c.a.coreDevice = first(a)
		return c.validateDevice(first(a))
	case "cache-device":
		c.a.cacheDevice = first(a)
		return c.validateDevice(first(a))
	case "no-data-flush":
		c.a.noFlush = true
	case "output-format":
		return c.outputFormat(first(a))
	case "by-id-path":
		c.a.byID = true
	default:
		return false
	}
	return true
}

func first(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return a[0]
}

func (c *cli) outputFormat(s string) bool {
	switch s {
	case "csv":
		c.a.csv = true
	case "table":
		c.a.csv = false
	default:
		return false
	}
	return true
}

var (
	optCacheIDReq = opt{'i', "cache-id", "ID", true, false}
	optCacheID    = opt{'i', "cache-id", "ID", false, false}
	optCoreIDReq  = opt{'j', "core-id", "ID", true, false}
	optCoreID     = opt{'j', "core-id", "ID", false, false}
	optFormat     = opt{'o', "output-format", "FORMAT", false, false}
)

var commands []command

func init() {
	setNS := func(name string, core bool, extra ...opt) nsEntry {
		o := []opt{optCacheIDReq}
		if core {
			o = append(o, optCoreID)
		}
		return nsEntry{name, append(o, extra...)}
	}
	getNS := func(name string, core bool) nsEntry {
		o := []opt{optCacheIDReq}
		if core {
			o = append(o, optCoreIDReq)
		}
		return nsEntry{name, append(o, optFormat)}
	}
	commands = []command{
		{short: 'S', long: "start-cache", opts: []opt{
			{'d', "cache-device", "DEVICE", true, false}, optCacheID, {'l', "load", "", false, false},
			{'f', "force", "", false, false}, {'c', "cache-mode", "NAME", false, false}, {'x', "cache-line-size", "NUMBER", false, false},
		}, handleOpt: startOpt, run: (*cli).start},
		{long: "attach-cache", opts: []opt{{'d', "cache-device", "DEVICE", true, false}, optCacheIDReq, {'f', "force", "", false, false}},
			handleOpt: func(*cli, string, string, []string) bool { return true }, run: notEmulated("--attach-cache")},
		{long: "detach-cache", opts: []opt{optCacheIDReq},
			handleOpt: func(*cli, string, string, []string) bool { return true }, run: notEmulated("--detach-cache")},
		{short: 'T', long: "stop-cache", opts: []opt{optCacheIDReq, {'n', "no-data-flush", "", false, false}},
			handleOpt: func(c *cli, _, l string, a []string) bool { return commonOpt(c, l, a) }, run: (*cli).stop},
		{short: 'X', long: "set-param", ns: []nsEntry{
			setNS("seq-detect", true, opt{0, "promotion-count", "NUMBER", false, false}, opt{0, "promotion-threshold", "KiB", false, false}),
			setNS("seq-cutoff", true, opt{'t', "threshold", "KiB", false, false}, opt{'p', "policy", "POLICY", false, false}),
			setNS("prefetch", false, opt{'p', "policy", "POLICY", false, false}),
			setNS("prefetch-readahead", false, opt{'t', "threshold", "KiB", false, false}),
			setNS("cleaning", false, opt{'p', "policy", "POLICY", false, false}),
			setNS("promotion", false, opt{'p', "policy", "POLICY", false, false}),
			setNS("promotion-nhit", false, opt{'t', "threshold", "NUMBER", false, false}, opt{'o', "trigger", "NUMBER", false, false}),
			setNS("cleaning-alru", false, opt{'w', "wake-up", "NUMBER", false, false}, opt{'s', "staleness-time", "NUMBER", false, false},
				opt{'b', "flush-max-buffers", "NUMBER", false, false}, opt{'t', "activity-threshold", "NUMBER", false, false},
				opt{'d', "dirty-ratio-threshold", "NUMBER", false, false}, opt{0, "dirty-ratio-inertia", "NUMBER", false, false}),
			setNS("cleaning-acp", false, opt{'w', "wake-up", "NUMBER", false, false}, opt{'b', "flush-max-buffers", "NUMBER", false, false}),
		}, handleOpt: setParamOpt, run: (*cli).setParam},
		{short: 'G', long: "get-param", ns: []nsEntry{
			getNS("seq-detect", true), getNS("seq-cutoff", true), getNS("prefetch", false), getNS("prefetch-readahead", false),
			getNS("cleaning", false), getNS("cleaning-alru", false), getNS("cleaning-acp", false), getNS("promotion", false),
			getNS("promotion-nhit", false),
		}, handleOpt: getParamOpt, run: (*cli).getParam},
		{short: 'Q', long: "set-cache-mode", opts: []opt{{'c', "cache-mode", "NAME", true, false}, optCacheIDReq, {'f', "flush-cache", "yes|no", false, false}},
			handleOpt: setModeOpt, run: (*cli).setMode},
		{short: 'A', long: "add-core", opts: []opt{optCacheIDReq, optCoreID, {'d', "core-device", "DEVICE", true, false}},
			handleOpt: func(c *cli, _, l string, a []string) bool { return commonOpt(c, l, a) }, run: (*cli).addCore},
		{short: 'R', long: "remove-core", opts: []opt{optCacheIDReq, optCoreIDReq, {'f', "force", "", false, false}},
			handleOpt: removeOpt, run: (*cli).removeCore},
		{long: "remove-inactive", opts: []opt{optCacheIDReq, optCoreIDReq, {'f', "force", "", false, false}},
			handleOpt: removeOpt, run: (*cli).removeInactive},
		{long: "remove-detached", opts: []opt{{'d', "device", "DEVICE", true, false}},
			handleOpt: func(*cli, string, string, []string) bool { return true }, run: notEmulated("--remove-detached")},
		{short: 'L', long: "list-caches", opts: []opt{optFormat, {'b', "by-id-path", "", false, false}},
			handleOpt: func(c *cli, _, l string, a []string) bool { return commonOpt(c, l, a) }, run: (*cli).list},
		{short: 'P', long: "stats", opts: []opt{optCacheIDReq, optCoreID, {'d', "io-class-id", "ID", false, true},
			{'f', "filter", "FILTER-SPEC", false, false}, optFormat, {'b', "by-id-path", "", false, false}},
			handleOpt: statsOpt, run: (*cli).stats},
		{short: 'Z', long: "reset-counters", opts: []opt{optCacheIDReq, optCoreID},
			handleOpt: func(c *cli, _, l string, a []string) bool { return commonOpt(c, l, a) }, run: (*cli).resetCounters},
		{short: 'F', long: "flush-cache", opts: []opt{optCacheIDReq, {'j', "core-id", "ID", false, true}},
			handleOpt: func(c *cli, _, l string, a []string) bool { return commonOpt(c, l, a) }, run: (*cli).flushCmd},
		{short: 'C', long: "io-class", opts: []opt{
			{'C', "load-config", "", false, false}, {'L', "list", "", false, false}, optCacheID, {'f', "file", "FILE", false, false},
			optFormat, {'d', "io-class-id", "ID", false, false}, {'p', "priority", "0-255", false, false}, {'m', "min-size", "SIZE", false, false},
			{'x', "max-size", "SIZE", false, false}, {'n', "name", "NAME", false, false}, {'c', "cache-mode", "NAME", false, false},
		}, handleOpt: ioClassOpt, run: (*cli).ioClass},
		{short: 'V', long: "version", opts: []opt{optFormat},
			handleOpt: func(c *cli, _, l string, a []string) bool { return commonOpt(c, l, a) }, run: (*cli).version},
		{short: 'H', long: "help", run: func(c *cli) int { c.mainHelp(); return 0 }},
		{long: "zero-metadata", opts: []opt{{'d', "device", "DEVICE", true, false}, {'f', "force", "", false, false}},
			handleOpt: zeroOpt, run: (*cli).zeroMetadata},
	}
	for i := range commands {
		if commands[i].handleOpt == nil {
			commands[i].handleOpt = func(*cli, string, string, []string) bool { return true }
		}
	}
}

func notEmulated(name string) func(*cli) int {
	return func(c *cli) int {
		c.errf("casadm-emulator: %s is not emulated\n", name)
		return 1
	}
}

// ---------------------------------------------------------------- start

func startOpt(c *cli, _, long string, a []string) bool {
	switch long {
	case "force":
		c.a.force = true
	case "cache-id", "cache-device":
		return commonOpt(c, long, a)
	case "load":
		c.a.load = true
	case "cache-mode":
		return c.cacheMode(first(a))
	case "cache-line-size":
		v, ok := c.validateNum(first(a), "cache line size", 4, 64)
		if ok && v&(v-1) != 0 {
			c.errf("Invalid cache line size, must be a power of 2.\n")
			ok = false
		}
		c.a.lineKiB = int(v)
		return ok
	}
	return true
}

func (c *cli) start() int {
	if c.a.load && (c.a.force || c.a.lineKiB != 0 || c.a.mode != "" || c.a.cacheID != 0) {
		c.errf("Use of 'load' with 'force', 'cache-id', 'cache-mode' or 'cache-line-size' simultaneously is forbidden.\n")
		return 1
	}
	if !c.a.load {
		if c.a.lineKiB == 0 {
			c.a.lineKiB = 4
		}
		if c.a.mode == "" {
			c.a.mode = "wt"
		}
	}
	path := c.a.cacheDevice
	dev := c.st.device(path)
	// validate_cache_path: fsck finds a filesystem.
	if dev.Filesystem != "" {
		if !c.a.force {
			c.errf("A filesystem exists on %s. Specify the --force option if you wish to add the cache anyway.\nNote: this may result in loss of data\n", path)
			return 1
		}
		c.outf("A filesystem existed on %s. Data may have been lost\n", path)
	}
	// set_device_path: by-id only.
	if !casadm.IsByID(path) {
		c.errf("Please use correct by-id path to the device %s.\n", path)
		return 1
	}
	id := c.a.cacheID
	fail := func(msg string) int {
		c.errf("Error inserting cache %d\n", id)
		if other := c.cacheOnDevice(dev.Path); other != nil {
			c.errf("Cache device '%s' is already used as cache.\n", path)
			return 1
		}
		c.errf("%s\n", msg)
		return 1
	}
	if c.cacheOnDevice(dev.Path) != nil {
		return fail("")
	}
	if c.coreOnDevice(dev.Path) != nil {
		return fail("Cannot open device exclusively")
	}
	if c.a.load {
		md := dev.Metadata
		if md == nil {
			return fail("No metadata found on device")
		}
		id = md.ID
		if c.st.cache(md.ID) != nil {
			return fail("Cache ID already exists")
		}
		ca := loadCache(md)
		for _, k := range ca.Cores {
			if kd := c.st.Devices[k.Device]; kd == nil || c.coreOnDevice(k.Device) != nil || c.cacheOnDevice(k.Device) != nil {
				k.Inactive = true
			}
		}
		dev.Metadata = nil
		c.st.addCache(ca)
		c.dirty = true
		if ca.incomplete() {
			c.errf("WARNING: Cache is in incomplete state - at least one core is inactive\n")
		}
		c.outf("Successfully added cache instance %d\n", ca.ID)
		return 0
	}
	if id == 0 {
		for id = 1; c.st.cache(id) != nil; id++ {
		}
	}
	if c.st.cache(id) != nil {
		return fail("Cache ID already exists")
	}
	if dev.Partitions && !c.a.force {
		return fail("Device contains partitions.\nIf you want to continue, please use --force option.\nWarning: all data will be lost!")
	}
	if dev.Metadata != nil && !c.a.force {
		c.errf("Error inserting cache %d\n", id)
		c.errf("Old metadata found on device\n")
		c.errf("Please load cache metadata using --load option or use --force to\n discard on-disk metadata and start fresh cache instance.\n")
		return 1
	}
	ca := newCache(id, dev, c.a.mode, c.a.lineKiB, c.rel.classes == ioclass.Master)
	if ca.Lines == 0 {
		return fail("Device does not meet requirements. See dmesg for more information")
	}
	if dev.Metadata != nil {
		c.st.LostDirtyBytes += dirtyLines(dev.Metadata, -1) * uint64(dev.Metadata.LineKiB) * kib
	}
	dev.Metadata, dev.Filesystem, dev.Partitions = nil, "", false
	c.st.addCache(ca)
	c.dirty = true
	c.outf("Successfully added cache instance %d\n", id)
	return 0
}

// loadCache restores a cache from the metadata on its device: mode, line
// size, classes, parameters, cores and lines (dirty ones included) come
// back; statistics start from zero. After a dirty shutdown OCF's recovery
// puts every line in class 0 (seen on the real v26.03.2 module: 1028 lines
// of class 11 and 0 were all class 0 after the load).
func loadCache(md *Cache) *Cache {
	var ca Cache
	b, _ := json.Marshal(md)
	_ = json.Unmarshal(b, &ca)
	if ca.DirtyShutdown {
		for i := range ca.Blocks {
			ca.Blocks[i].Class = 0
		}
	}
	ca.DirtyShutdown = false
	ca.EvictQuota = nil // OCF starts the eviction quotas from zero (ocf_lru_init)
	for _, k := range ca.Cores {
		k.Stats, k.StreamEnd, k.StreamBytes, k.Inactive = nil, 0, 0, false
	}
	return &ca
}

func (c *Cache) incomplete() bool {
	for _, k := range c.Cores {
		if k.Inactive {
			return true
		}
	}
	return false
}

func (c *cli) cacheOnDevice(path string) *Cache {
	for _, ca := range c.st.Caches {
		if ca.Device == path {
			return ca
		}
	}
	return nil
}

func (c *cli) coreOnDevice(path string) *Cache {
	for _, ca := range c.st.Caches {
		for _, k := range ca.Cores {
			if k.Device == path && !k.Inactive {
				return ca
			}
		}
	}
	return nil
}

// ---------------------------------------------------------------- stop

func (c *cli) stop() int {
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Error while stopping cache %d\n", c.a.cacheID)
		c.errf("Cache ID does not exist\n")
		return 1
	}
	m := newModel(ca, c.now)
	if ca.Failed {
		return c.stopFailed(ca, m)
	}
	if !c.a.noFlush && !m.flush(-1) {
		m.commit()
		c.dirty = true
		c.errf("Error while stopping cache %d\n", ca.ID)
		c.errf("I/O error\n")
		return 1
	}
	m.commit()
	dev := c.st.Devices[ca.Device]
	saved := *ca
	saved.Failed = false
	if dev != nil {
		dev.Metadata = &saved
	}
	c.st.removeCache(ca.ID)
	c.dirty = true
	c.outf("Successfully stopped cache %d\n", ca.ID)
	return 0
}

// stopFailed stops a cache whose device failed, as the real v26.03.2 module does with -n:
// the cache goes, rc 1, and the metadata last written to the device (dirty lines included)
// stays there for a load once the device is back. With a flush the real module hits a
// kernel BUG when dirty data is left (BUG_ON(ocf_mngt_cache_is_dirty) in
// cache_mngt_exit_instance, seen in the guest): the emulator refuses instead, loudly.
func (c *cli) stopFailed(ca *Cache, m *model) int {
	if !c.a.noFlush && m.dirtyLines() > 0 {
		c.errf("casadm-emulator: -T without -n on a failed cache holding dirty data: the real v26.03.2 module hits a kernel BUG here (docs/opencas-real-module.md); not emulated\n")
		return 1
	}
	m.commit()
	saved := *ca
	saved.Failed, saved.DirtyShutdown = false, true
	if dev := c.st.Devices[ca.Device]; dev != nil {
		dev.Metadata = &saved
	}
	c.st.removeCache(ca.ID)
	c.dirty = true
	c.errf("Stopped cache %d with errors\n", ca.ID)
	c.errf("Error while writing to cache device\n")
	return 1
}

// ---------------------------------------------------------------- mode

func setModeOpt(c *cli, _, long string, a []string) bool {
	switch long {
	case "cache-mode":
		return c.cacheMode(first(a))
	case "cache-id":
		return commonOpt(c, long, a)
	case "flush-cache":
		switch first(a) {
		case "yes":
			c.a.flush = 1
		case "no":
			c.a.flush = 0
		default:
			c.errf("Error: 'yes' or 'no' required as an argument for -f option.\n")
			return false
		}
	}
	return true
}

func (c *cli) setMode() int {
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Cache ID does not exist\n")
		c.errf("Error while retrieving cache properties.\n")
		return 1
	}
	required := lazyWrite(ca.Mode) && !lazyWrite(c.a.mode)
	flush := c.a.flush
	if flush == -1 {
		if required {
			c.errf("Error: Required parameter (‘--flush-cache’) was not specified.\n")
			return 1
		}
		flush = 0
	}
	if required {
		if flush == 1 {
			c.outf("CAS is currently flushing dirty data to primary storage devices.\n")
		} else {
			c.outf("CAS is currently migrating from %s to %s mode.\nDirty data are being flushed to primary storage device in background.\nPlease find flushing progress via statistics command (‘casadm -P’).\n",
				longMode(ca.Mode), longMode(c.a.mode))
		}
	}
	if required && ca.incomplete() {
		c.errf("Error while setting cache state for cache %d\n", ca.ID)
		c.errf("Cache is in incomplete state - at least one core is inactive\n")
		return 1
	}
	if ca.Failed {
		// The new mode has to be saved on the cache device (real v26.03.2, -f no).
		c.errf("Error while setting cache state for cache %d\n", ca.ID)
		c.errf("Error while writing to cache device\n")
		return 1
	}
	m := newModel(ca, c.now)
	// With -f yes the flush happens before the switch; with -f no OCF's
	// cleaner writes the dirty data back in the background, which the
	// emulator does at once. Either way no dirty data is dropped.
	if required && !m.flush(-1) {
		m.commit()
		c.dirty = true
		c.errf("Error while setting cache state for cache %d\n", ca.ID)
		c.errf("I/O error\n")
		return 1
	}
	m.commit()
	ca.Mode = c.a.mode
	c.dirty = true
	return 0
}

// ---------------------------------------------------------------- cores

func (c *cli) addCore() int {
	path := c.a.coreDevice
	if !casadm.IsByID(path) {
		c.errf("Please use correct by-id path to the device %s.\n", path)
		return 1
	}
	ca := c.st.cache(c.a.cacheID)
	fail := func(msg string) int {
		c.errf("Error while adding core device to cache instance %d\n", c.a.cacheID)
		c.errf("%s\n", msg)
		return 1
	}
	if ca == nil {
		return fail("Cache ID does not exist")
	}
	if c.coreOnDevice(path) != nil {
		return fail(fmt.Sprintf("Core device '%s' is already cached.", path))
	}
	if c.cacheOnDevice(path) != nil {
		return fail(fmt.Sprintf("Failed to open '%s' device exclusively. Please close all applications accessing it or unmount the device.", path))
	}
	id := c.a.coreID
	if id == coreIDInvalid {
		// The kernel's find_free_core_id: the lowest free id from 1.
		for id = 1; ca.core(id) != nil; id++ {
		}
	} else if ca.core(id) != nil {
		return fail("Core id already used")
	}
	// Re-attaching an inactive core that reappeared.
	for _, k := range ca.Cores {
		if k.Device == path && k.Inactive {
			return fail("Device already added as a core")
		}
	}
	ca.Cores = append(ca.Cores, newCore(id, path))
	slices.SortFunc(ca.Cores, func(a, b *Core) int { return a.ID - b.ID })
	c.dirty = true
	c.outf("Successfully added core %d to cache instance %d\n", id, ca.ID)
	return 0
}

func removeOpt(c *cli, _, long string, a []string) bool {
	switch long {
	case "cache-id", "core-id":
		return commonOpt(c, long, a)
	case "force":
		c.a.force = true
	}
	return true
}

func (c *cli) removeCore() int {
	ca, k, fail := c.coreToRemove("core device")
	switch {
	case ca == nil:
		return fail("Cache ID does not exist")
	case k == nil:
		return fail("Core ID does not exist")
	case k.Inactive:
		c.errf("Core is inactive. To manage the inactive core use '--remove-inactive' command.\n")
		return 1
	}
	m := newModel(ca, c.now)
	// Without -f the kernel flushes the core's dirty data, then removes it.
	if !c.a.force && !m.flush(k.ID) {
		m.commit()
		c.dirty = true
		return fail("I/O error")
	}
	c.dropCore(ca, k, m)
	return 0
}

func (c *cli) removeInactive() int {
	ca, k, fail := c.coreToRemove("inactive core device")
	switch {
	case ca == nil:
		return fail("Cache ID does not exist")
	case k == nil:
		return fail("Core ID does not exist")
	case !k.Inactive:
		c.errf("Core is active. To manage the active core use '--remove-core' command.\n")
		return 1
	case dirtyLines(ca, k.ID) > 0 && !c.a.force:
		return fail("The cache contains dirty data assigned to the core. If you want to continue, please use --force option.\nWarning: the data will be lost")
	}
	c.dropCore(ca, k, newModel(ca, c.now))
	return 0
}

// coreToRemove finds the cache and core a remove command names (nil when they do not
// exist), and fail prints casadm's error for it: "Error while removing <what> <core> from
// cache instance <cache>", then why.
func (c *cli) coreToRemove(what string) (*Cache, *Core, func(msg string) int) {
	fail := func(msg string) int {
		c.errf("Error while removing %s %d from cache instance %d\n", what, c.a.coreID, c.a.cacheID)
		c.errf("%s\n", msg)
		return 1
	}
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		return nil, nil, fail
	}
	return ca, ca.core(c.a.coreID), fail
}

// dropCore takes a core out of its cache; what it still had dirty is lost.
func (c *cli) dropCore(ca *Cache, k *Core, m *model) {
	m.dropCore(k.ID)
	m.commit()
	c.st.LostDirtyBytes += m.lost
	ca.Cores = slices.DeleteFunc(ca.Cores, func(x *Core) bool { return x.ID == k.ID })
	c.dirty = true
}

// ---------------------------------------------------------------- flush, reset

func (c *cli) flushCmd() int {
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Cache ID does not exist\n")
		return 1
	}
	core := -1
	if c.a.coreID != coreIDInvalid {
		k := ca.core(c.a.coreID)
		if k == nil {
			c.errf("Core ID does not exist\n")
			return 1
		}
		if k.Inactive {
			c.errf("Core device is in inactive state\n")
			return 1
		}
		core = k.ID
	} else if ca.incomplete() {
		c.errf("Cache is in incomplete state - at least one core is inactive\n")
		return 1
	}
	m := newModel(ca, c.now)
	ok := m.flush(core)
	m.commit()
	c.dirty = true
	if !ok {
		c.errf("I/O error\n")
		return 1
	}
	return 0
}

func (c *cli) resetCounters() int {
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Cache ID does not exist\n")
		return 1
	}
	for _, k := range ca.Cores {
		if c.a.coreID == coreIDInvalid || k.ID == c.a.coreID {
			k.Stats = nil
		}
	}
	c.dirty = true
	return 0
}

// ---------------------------------------------------------------- params

func setParamOpt(c *cli, ns, long string, a []string) bool {
	v := first(a)
	num := func(what string, min, max uint64) bool {
		n, ok := c.validateNum(v, what, min, max)
		if ok {
			c.a.params[long] = strconv.FormatUint(n, 10)
		}
		return ok
	}
	policy := func(valid ...string) bool {
		if !slices.Contains(valid, v) {
			c.errf("Error: Invalid policy name.\n")
			return false
		}
		c.a.params[long] = v
		return true
	}
	switch long {
	case "cache-id", "core-id":
		return commonOpt(c, long, a)
	}
	if r, ok := numericParams[ns+"/"+long]; ok {
		return num(r.what, r.min, r.max)
	}
	switch ns + "/" + long {
	case "seq-cutoff/policy":
		return policy("always", "full", "never")
	case "cleaning/policy":
		return policy("nop", "alru", "acp")
	case "promotion/policy":
		return policy("always", "nhit")
	case "prefetch/policy":
		for _, t := range strings.Split(v, ",") {
			if v != "none" && t != "readahead" {
				c.errf("Error: Invalid prefetch policy name '%s'.\n", t)
				return false
			}
		}
		c.a.params[long] = v
		return true
	}
	return false
}

// numericParams are the numeric -X parameters by namespace/option: what casadm calls the
// value in its messages, and its range.
var numericParams = map[string]struct {
	what     string
	min, max uint64
}{
	"seq-cutoff/threshold":                {"sequential cutoff threshold", 1, 4294841344 / kib},
	"seq-detect/promotion-count":          {"sequence detector promotion request count", 0, 1000},
	"seq-detect/promotion-threshold":      {"sequence detector promotion threshold", 0, 4194304},
	"prefetch-readahead/threshold":        {"readahead threshold", 0, 4194304},
	"promotion-nhit/threshold":            {"threshold", 2, 1000},
	"promotion-nhit/trigger":              {"trigger", 0, 100},
	"cleaning-alru/wake-up":               {"wake-up time", 0, 3600},
	"cleaning-alru/staleness-time":        {"staleness time", 1, 3600},
	"cleaning-alru/flush-max-buffers":     {"flush max buffers", 1, 10000},
	"cleaning-alru/activity-threshold":    {"activity threshold", 0, 1000000},
	"cleaning-alru/dirty-ratio-threshold": {"dirty ratio trigger threshold", 0, 100},
	"cleaning-alru/dirty-ratio-inertia":   {"dirty ratio trigger inertia", 0, 4095},
	"cleaning-acp/wake-up":                {"wake-up time", 0, 10000},
	"cleaning-acp/flush-max-buffers":      {"flush max buffers", 1, 10000},
}

func (c *cli) setParam() int {
	if len(c.a.params) == 0 {
		c.errf("Error: No parameters specified!\n")
		return 1
	}
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Cache ID does not exist\n")
		c.errf("Setting runtime parameter failed!\n")
		return 1
	}
	if ca.Mode == "pt" {
		c.errf("Changing parameters for core in Pass-Through mode. New values will be saved but will not be effective until switching to another cache mode.\n")
	}
	u := func(k string) uint64 { v, _ := strconv.ParseUint(c.a.params[k], 10, 64); return v }
	has := func(k string) bool { _, ok := c.a.params[k]; return ok }
	p := &ca.Params
	switch {
	case has("threshold") && c.cmdNS() == "seq-cutoff", has("policy") && c.cmdNS() == "seq-cutoff",
		has("promotion-count"), has("promotion-threshold"):
		var cores []*Core
		if c.a.coreID == coreIDInvalid {
			cores = ca.Cores
		} else if k := ca.core(c.a.coreID); k != nil {
			cores = []*Core{k}
		} else {
			c.errf("Setting runtime parameter failed!\n")
			return 1
		}
		for _, k := range cores {
			if has("threshold") {
				k.SeqCutoffBytes = u("threshold") * kib
			}
			if has("policy") {
				k.SeqCutoffPolicy = c.a.params["policy"]
			}
			if has("promotion-count") {
				k.SeqPromotionCount = u("promotion-count")
			}
			if has("promotion-threshold") {
				k.SeqPromotionBytes = u("promotion-threshold") * kib
			}
		}
	default:
		switch c.cmdNS() {
		case "cleaning":
			p.Cleaning = c.a.params["policy"]
		case "promotion":
			p.Promotion = c.a.params["policy"]
		case "prefetch":
			p.Prefetch = c.a.params["policy"]
		case "prefetch-readahead":
			p.ReadaheadKiB = u("threshold")
		case "promotion-nhit":
			if has("threshold") {
				p.NhitThreshold = u("threshold")
			}
			if has("trigger") {
				p.NhitTrigger = u("trigger")
			}
		case "cleaning-alru":
			for k, dst := range map[string]*uint64{"wake-up": &p.AlruWakeUp, "staleness-time": &p.AlruStaleness,
				"flush-max-buffers": &p.AlruFlushMaxBuffers, "activity-threshold": &p.AlruActivityThreshold,
				"dirty-ratio-threshold": &p.AlruDirtyRatioThreshold, "dirty-ratio-inertia": &p.AlruDirtyRatioInertiaMiB} {
				if has(k) {
					*dst = u(k)
				}
			}
		case "cleaning-acp":
			if has("wake-up") {
				p.AcpWakeUp = u("wake-up")
			}
			if has("flush-max-buffers") {
				p.AcpFlushMaxBuffers = u("flush-max-buffers")
			}
		}
	}
	c.dirty = true
	return 0
}

// cmdNS is the namespace of the -X/-G command being run.
func (c *cli) cmdNS() string { return c.a.ns }

func getParamOpt(c *cli, _, long string, a []string) bool {
	switch long {
	case "cache-id", "core-id", "output-format":
		return commonOpt(c, long, a)
	}
	return false
}

func (c *cli) getParam() int {
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Cache id %d not running\n", c.a.cacheID)
		c.errf("Getting runtime parameter failed!\n")
		return 1
	}
	p := ca.Params
	n := func(v uint64) string { return strconv.FormatUint(v, 10) }
	var ps casadm.Params
	add := func(title, v string) { ps = append(ps, casadm.Param{Title: title, Value: v}) }
	switch c.cmdNS() {
	case "seq-detect", "seq-cutoff":
		k := ca.core(c.a.coreID)
		if k == nil || k.Inactive {
			c.errf("Core id %d not available\n", c.a.coreID)
			c.errf("Getting runtime parameter failed!\n")
			return 1
		}
		if c.cmdNS() == "seq-cutoff" {
			add(casadm.SeqCutoffThreshold.Title, n(k.SeqCutoffBytes/kib))
			add(casadm.SeqCutoffPolicy.Title, k.SeqCutoffPolicy)
			if c.rel.seqCutoffPromotionRow {
				add("Sequential cutoff promotion request count threshold", n(k.SeqPromotionCount))
			}
		} else {
			add("Sequence detector promotion request count", n(k.SeqPromotionCount))
			add("Sequence detector promotion threshold [KiB]", n(k.SeqPromotionBytes/kib))
		}
	case "prefetch":
		add("Prefetch policy", p.Prefetch)
	case "prefetch-readahead":
		add("Readahead threshold [KiB]", n(p.ReadaheadKiB))
	case "cleaning":
		add(casadm.CleaningPolicy.Title, p.Cleaning)
	case "cleaning-alru":
		add(casadm.AlruWakeUp.Title, n(p.AlruWakeUp))
		add(casadm.AlruStaleBuffer.Title, n(p.AlruStaleness))
		add(casadm.AlruFlushMaxBuffers.Title, n(p.AlruFlushMaxBuffers))
		add(casadm.AlruActivityThreshold.Title, n(p.AlruActivityThreshold))
		add("Dirty ratio trigger threshold [%]", n(p.AlruDirtyRatioThreshold))
		add("Dirty ratio trigger inertia [MiB]", n(p.AlruDirtyRatioInertiaMiB))
	case "cleaning-acp":
		add(casadm.AcpWakeUp.Title, n(p.AcpWakeUp))
		add(casadm.AcpFlushMaxBuffers.Title, n(p.AcpFlushMaxBuffers))
	case "promotion":
		add(casadm.PromotionPolicy.Title, p.Promotion)
	case "promotion-nhit":
		add(casadm.NhitThreshold.Title, n(p.NhitThreshold))
		add(casadm.NhitTrigger.Title, n(p.NhitTrigger))
	}
	if c.a.csv {
		c.outf("%s", ps.CSV())
		return 0
	}
	g := grid{header: []string{"Parameter name", "Value"}}
	for _, x := range ps {
		g.rows = append(g.rows, []string{x.Title, x.Value})
	}
	c.outf("%s", g.render())
	return 0
}

// ---------------------------------------------------------------- list

// shown is how casadm shows a device path: the resolved kernel name
// without -b, else (or when it cannot resolve) the by-id link.
func (c *cli) shown(path string, byID bool) (string, bool) {
	if byID {
		return path, true
	}
	if d := c.st.Devices[path]; d != nil && d.Kernel != "" {
		return d.Kernel, true
	}
	return path, false
}

func (c *cli) list() int {
	var l casadm.List
	var warnings []string
	for _, ca := range c.st.Caches {
		for _, k := range ca.Cores {
			if _, ok := c.shown(k.Device, c.a.byID); !ok {
				warnings = append(warnings, fmt.Sprintf("WARNING: Can not resolve path to core %d from cache %d. By-id path will be shown for that core.\n", k.ID, ca.ID))
			}
		}
	}
	for _, w := range warnings {
		c.errf("%s", w)
	}
	for _, ca := range c.st.Caches {
		disk, ok := c.shown(ca.Device, c.a.byID)
		if !ok {
			c.errf("WARNING: Cannot resolve path to cache %d. By-id path will be shown for that cache.\n", ca.ID)
		}
		state := casadm.StateRunning
		switch {
		case ca.Failed:
			state = casadm.StateNotRunning
		case ca.incomplete():
			state = casadm.StateIncomplete
		}
		lc := casadm.Cache{ID: ca.ID, Disk: disk, Status: casadm.Status{State: state}, WritePolicy: ca.Mode}
		for _, k := range ca.Cores {
			kd, _ := c.shown(k.Device, c.a.byID)
			core := casadm.Core{ID: k.ID, Disk: kd, Status: casadm.Status{State: casadm.StateActive}, Device: exportedObject(ca.ID, k.ID)}
			if k.Inactive {
				core.Status.State = casadm.StateInactive
			}
			lc.Cores = append(lc.Cores, core)
		}
		l.Caches = append(l.Caches, lc)
	}
	if len(l.Caches) == 0 {
		c.outf("%s\n", casadm.NoCaches)
		return 0
	}
	if c.a.csv {
		c.outf("%s", l.CSV())
		return 0
	}
	// Table form: casadm's tree view, without its line breaking.
	rows := [][]string{{"type", "id", "disk", "status", "write policy", "device"}}
	for _, lc := range l.Caches {
		rows = append(rows, []string{"cache", strconv.Itoa(lc.ID), lc.Disk, lc.Status.String(), lc.WritePolicy, "-"})
		for i, k := range lc.Cores {
			branch := "├core"
			if i == len(lc.Cores)-1 {
				branch = "└core"
			}
			rows = append(rows, []string{branch, strconv.Itoa(k.ID), k.Disk, k.Status.String(), "-", orDash(k.Device)})
		}
	}
	w := make([]int, 6)
	for _, r := range rows {
		for j, f := range r {
			w[j] = max(w[j], len([]rune(f)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for j, f := range r {
			b.WriteString(f)
			if j < len(r)-1 {
				b.WriteString(strings.Repeat(" ", w[j]-len([]rune(f))+3))
			}
		}
		c.outf("%s\n", strings.TrimRight(b.String(), " "))
	}
	return 0
}

func exportedObject(cache, core int) string { return fmt.Sprintf("/dev/cas%d-%d", cache, core) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ---------------------------------------------------------------- version

func (c *cli) version() int {
	rows := [][2]string{{"CAS Cache Kernel Module", emulatorModuleVersion}, {"CAS CLI Utility", emulatorCLIVersion}}
	if c.a.csv {
		c.outf("Name,Version\n")
		for _, r := range rows {
			c.outf("%s,%s\n", r[0], r[1])
		}
		return 0
	}
	g := grid{header: []string{"Name", "Version"}}
	for _, r := range rows {
		g.rows = append(g.rows, []string{r[0], r[1]})
	}
	c.outf("%s", g.render())
	return 0
}

// ---------------------------------------------------------------- io classes

func ioClassOpt(c *cli, _, long string, a []string) bool {
	if c.a.ioSub == "" && (long == "load-config" || long == "list") {
		c.a.ioSub = long
		return true
	}
	switch long {
	case "cache-id":
		if !commonOpt(c, long, a) {
			return false
		}
		c.a.cacheIDSet = true
	case "file":
		f := first(a)
		if f == "" {
			c.errf("Empty path\n")
			return false
		}
		if len(f) >= 4096 {
			c.errf("File path too long\n")
			return false
		}
		c.a.file, c.a.fileSet = f, true
	case "output-format":
		if !c.outputFormat(first(a)) {
			return false
		}
		c.a.formatSet = true
	}
	return true
}

func (c *cli) ioClass() int {
	if c.a.ioSub == "" {
		c.errf("Invalid or missing first sub-command parameter. Expected one of the: {--load-config|--list}\n")
		return 1
	}
	bad := false
	check := func(set bool, name string, allowed, required bool) {
		switch {
		case set && !allowed:
			c.errf("Option '%s' is not allowed\n", name)
			bad = true
		case !set && required:
			c.errf("Option '%s' is missing\n", name)
			bad = true
		}
	}
	load := c.a.ioSub == "load-config"
	check(c.a.cacheIDSet, "--cache-id (-i)", true, true)
	check(c.a.fileSet, "--file (-f)", load, load)
	check(c.a.formatSet, "--output-format (-o)", !load, false)
	if bad {
		return 1
	}
	if load {
		return c.loadClasses()
	}
	return c.listClasses()
}

func (c *cli) loadClasses() int {
	var in io.Reader
	if c.a.file == "-" {
		in = c.stdin
	} else {
		f, err := os.Open(c.a.file)
		if err != nil {
			c.errf("Cannot open configuration file %s\n", c.a.file)
			return 1
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(in)
	if err != nil {
		c.errf("Cannot open configuration file %s\n", c.a.file)
		return 1
	}
	cfg, err := ioclass.ParseCSVDialect(bytes.NewReader(data), c.rel.classes)
	if err != nil {
		if ce, ok := err.(*ioclass.CSVError); ok {
			c.errf("%s", ce.Output())
		} else {
			c.errf("Cannot parse configuration file.\n")
		}
		return 1
	}
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Cache ID does not exist\n")
		return 1
	}
	// The kernel builds the classifier rules; a refused rule leaves the
	// previous table unchanged.
	if _, err := ioclass.NewEvaluator(cfg); err != nil {
		msg := ioclass.ErrInvalidSyntax.Error()
		var re *ioclass.RuleError
		if asRuleError(err, &re) && re.Category == ioclass.ErrUnknownCondition {
			msg = ioclass.ErrUnknownCondition.Error()
		}
		c.errf("%s\n", msg)
		return 1
	}
	// The file replaces the table; class 0 stays when not listed.
	var classes []Class
	if old := ca.class(0); old != nil {
		if _, listed := cfg.Class(0); !listed {
			classes = append(classes, *old)
		}
	}
	for _, cl := range cfg.Classes {
		prio := -1
		if cl.Priority != nil {
			prio = *cl.Priority
		}
		classes = append(classes, Class{ID: cl.ID, Name: cl.Rule, Priority: prio, MaxSize: cl.MaxSizePercent()})
	}
	slices.SortFunc(classes, func(a, b Class) int { return a.ID - b.ID })
	ca.Classes = classes
	c.dirty = true
	return 0
}

func (c *cli) listClasses() int {
	ca := c.st.cache(c.a.cacheID)
	if ca == nil {
		c.errf("Cache ID does not exist\n")
		return 1
	}
	prio := func(cl Class, csv bool) string {
		if cl.Priority < 0 {
			if csv {
				return ""
			}
			return "Pinned"
		}
		return strconv.Itoa(cl.Priority)
	}
	alloc := func(cl Class) string { return fmt.Sprintf("%d.%02d", cl.MaxSize/100, cl.MaxSize%100) }
	if c.a.csv {
		c.outf("IO class id,IO class name,Eviction priority,Allocation\n")
		for _, cl := range ca.Classes {
			c.outf("%d,%s,%s,%s\n", cl.ID, cl.Name, prio(cl, true), alloc(cl))
		}
		return 0
	}
	g := grid{header: []string{"IO class id", "IO class name", "Eviction priority", "Allocation"}}
	for _, cl := range ca.Classes {
		g.rows = append(g.rows, []string{strconv.Itoa(cl.ID), cl.Name, prio(cl, false), alloc(cl)})
	}
	c.outf("%s", g.render())
	return 0
}

// ---------------------------------------------------------------- zero metadata

func zeroOpt(c *cli, _, long string, a []string) bool {
	switch long {
	case "device":
		c.a.cacheDevice = first(a)
	case "force":
		c.a.force = true
	}
	return true
}

func (c *cli) zeroMetadata() int {
	path := c.a.cacheDevice
	dev := c.st.device(path)
	if dev == nil || c.cacheOnDevice(dev.Path) != nil || c.coreOnDevice(dev.Path) != nil {
		c.errf("Error while opening '%s'exclusively. This can be due to\ncache instance running on this device. In such case please stop the cache and try again.\n", path)
		return 1
	}
	md := dev.Metadata
	if md == nil {
		c.errf("Device '%s' does not contain OpenCAS's metadata.\n", path)
		return 1
	}
	dirty := dirtyLines(md, -1)
	switch {
	case md.DirtyShutdown && !c.a.force:
		c.errf("Cache instance did not shut down cleanly. It might contain dirty data. \nClearing metadata might result in loss of dirty data. Please recover cache instance\nby loading it and flush dirty data in order to preserve them on the core device.\nAlternatively, if you wish to clear metadata anyway, please use '--force' option. \n")
		return 1
	case md.DirtyShutdown:
		c.errf("Clearing metadata after dirty shutdown - potential loss of dirty data.\n")
	case dirty > 0 && !c.a.force:
		c.errf("Cache instance contains dirty data. Clearing metadata will result in loss of dirty data.\nPlease load cache instance and flush dirty data in order to preserve them on the core device.\nAlternatively, if you wish to clear metadata anyway, please use '--force' option. \n")
		return 1
	case dirty > 0:
		c.errf("Clearing metadata for dirty pages - dirty cache data is being discarded. \n")
	}
	c.st.LostDirtyBytes += dirty * uint64(md.LineKiB) * kib
	dev.Metadata = nil
	c.dirty = true
	c.outf("OpenCAS's metadata wiped successfully from device '%s'.\n", path)
	return 0
}
