package opencas

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/ioclass"
)

// Desired is the cache Prism wants on one fast device.
type Desired struct {
	// CacheID is the casadm cache id (1-16384) a new cache gets. A cache loaded from its
	// metadata keeps the id recorded there.
	CacheID int
	// Partition is the cache partition's stable path (/dev/disk/by-id/...-partN): casadm
	// accepts nothing else, and opencas.conf must survive device renames.
	Partition string
	// PartitionScanned says Signatures is what reading the partition found (nil then means
	// "nothing"). Without a scan Prism never starts a cache on the partition.
	PartitionScanned bool
	// Signatures are the on-disk signatures found on the partition.
	Signatures []prismv1.DeviceSignature
	// Unexplained says what the partition holds that no signature explains: non-zero bytes in
	// its first or last MiB (ScanHeadAndTail, read when the scan found no signature); "" when
	// they are zeros. casadm -S --force would overwrite them: no cache is started over them,
	// unless StartCutShort.
	Unexplained string
	// Pin, when set, is the partition as it was scanned, held open (PinPartition): a cache is
	// started on Partition only while that path still names it.
	Pin *os.File
	// StartCutShort is set when Prism recorded starting a cache on the partition and has not
	// seen it run since (Runner.IntentDir): the bytes there are its own start cut short.
	StartCutShort bool
	// Mode is the cache mode; CacheNone (or "") means no cache: a running one is stopped.
	Mode prismv1.CacheMode
	// LineSizeKiB is the cache line size (4, 8, 16, 32, 64; 0 means 4), fixed at start.
	LineSizeKiB int
	// Cores are the QLC data devices' stable paths, in the order their core ids are given.
	Cores []string
	// CoreSignatures are the signatures the inventory found on each core device. A device
	// with any is not added as a new core: it holds data Prism did not put there (an OSD
	// created on the raw device stays there). A device missing from the map is taken as
	// empty, so callers pass every core.
	CoreSignatures map[string][]prismv1.DeviceSignature
	// CoreUnreadable are the core devices the inventory could not read completely (its
	// Readable filter failed: the device did not open, or its signatures or libblkid's probe
	// could not be read), with why. No signature in CoreSignatures then proves nothing: such a
	// device is not added as a new core.
	CoreUnreadable map[string]string
	// IOClassCSV is the IO class configuration (ioclass.Config.CSV); "" leaves the cache's
	// classes alone.
	IOClassCSV string
	// Params are the runtime parameters; nil fields are left as the cache has them.
	Params Params
	// AllowDirtyDataLoss lets Prism drop dirty data that cannot be flushed (the data of an
	// inactive core it removes). Never needed when the data can be flushed.
	AllowDirtyDataLoss bool
}

// Params are the runtime parameters Prism sets (FORMATS.md §5). Nil means "leave as is".
type Params struct {
	// CleaningPolicy is nop, alru or acp.
	CleaningPolicy string
	Alru           *AlruParams
	Acp            *AcpParams
	// PromotionPolicy is always or nhit.
	PromotionPolicy string
	Nhit            *NhitParams
	// SeqCutoff applies to every core.
	SeqCutoff *SeqCutoff
}

// AlruParams are the cleaning-alru parameters.
type AlruParams struct {
	WakeUpSeconds       *uint64 // 0-3600
	StaleBufferSeconds  *uint64 // 1-3600
	FlushMaxBuffers     *uint64 // 1-10000
	ActivityThresholdMs *uint64 // 0-1000000
}

// AcpParams are the cleaning-acp parameters.
type AcpParams struct {
	WakeUpMs        *uint64 // 0-10000
	FlushMaxBuffers *uint64 // 1-10000
}

// NhitParams are the promotion-nhit parameters.
type NhitParams struct {
	Threshold      *uint64 // 2-1000
	TriggerPercent *uint64 // 0-100
}

// SeqCutoff is the sequential cut-off of every core.
type SeqCutoff struct {
	// ThresholdKiB is 1-4194181 (0: leave as is).
	ThresholdKiB uint64
	// Policy is always, full or never ("": leave as is).
	Policy string
}

// Ptr returns a pointer to v, for the optional parameter fields.
func Ptr(v uint64) *uint64 { return &v }

// casadmMode maps the API's mode to casadm's; "" for None.
func casadmMode(m prismv1.CacheMode) (string, error) {
	switch m {
	case "", prismv1.CacheNone:
		return "", nil
	case prismv1.CacheWriteThrough:
		return "wt", nil
	case prismv1.CacheWriteBack:
		return "wb", nil
	case prismv1.CacheWriteAround:
		return "wa", nil
	case prismv1.CachePassThrough:
		return "pt", nil
	case prismv1.CacheWriteOnly:
		return "wo", nil
	}
	return "", fmt.Errorf("unknown cache mode %q", m)
}

// lazyWrite modes keep dirty data in the cache.
func lazyWrite(mode string) bool { return mode == "wb" || mode == "wo" }

// Observed is what casadm and the host report, as the runner reads it.
type Observed struct {
	// List is `casadm -L -o csv -b`.
	List casadm.List
	// Cache is the cache running on Desired.Partition; nil when none does.
	Cache *ObservedCache
	// Conf is /etc/opencas/opencas.conf under the host root ("" when absent).
	Conf string
	// IOClassFile is the IO class file the conf names for this cache ("" when absent).
	IOClassFile string
}

// ObservedCache is the cache on the partition, as casadm reports it.
type ObservedCache struct {
	// Cache is its `casadm -L` entry, cores included.
	casadm.Cache
	// Stats is `casadm -P -i N -o csv` (nil when it could not be read).
	Stats *casadm.Stats
	// CoreUsage is `casadm -P -i N -j M -f usage -o csv` per core id (absent: unknown).
	CoreUsage map[int]*casadm.Usage
	// Params is `casadm -G -n NS -i N -o csv` per namespace read.
	Params map[string]casadm.Params
	// SeqCutoff is `casadm -G -n seq-cutoff -i N -j M -o csv` per core id read.
	SeqCutoff map[int]casadm.Params
	// IOClasses is `casadm -C -L -i N -o csv` (nil when not read).
	IOClasses *ioclass.Config
}

// StepKind names what a step does.
type StepKind string

// Step kinds.
const (
	StepStart          StepKind = "StartCache"
	StepLoad           StepKind = "LoadCache"
	StepSetMode        StepKind = "SetCacheMode"
	StepFlushCore      StepKind = "FlushCore"
	StepRemoveCore     StepKind = "RemoveCore"
	StepRemoveInactive StepKind = "RemoveInactiveCore"
	StepAddCore        StepKind = "AddCore"
	StepSetParam       StepKind = "SetParam"
	StepLoadIOClasses  StepKind = "LoadIOClasses"
	StepStop           StepKind = "StopCache"
	StepWriteFile      StepKind = "WriteFile"
)

// Step is one action: a casadm command, or a file written under the host root.
type Step struct {
	Kind StepKind
	// Argv is the casadm command line.
	Argv []string
	// Stdin feeds the command (the IO class CSV for `-C -C -f -`).
	Stdin []byte
	// Path (absolute on the host) and Content are a WriteFile step's file; Path is a Start
	// step's partition, for the record Prism writes before it (Runner.IntentDir).
	Path    string
	Content string
	// Barrier steps change the state in ways Decide cannot foresee (a load restores
	// whatever the metadata holds): the runner looks again before going on.
	Barrier bool
	// Why explains the step.
	Why string
}

func (s Step) String() string {
	if s.Kind == StepWriteFile {
		return fmt.Sprintf("%s %s", s.Kind, s.Path)
	}
	return fmt.Sprintf("%s: %s", s.Kind, strings.Join(s.Argv, " "))
}

// CoreState is where a desired (or removed) core stands: the API's states, so that the
// agent publishes Decide's verdict as it is.
type CoreState = prismv1.CoreState

// Core states (see prismv1.CoreState).
const (
	CoreReady       = prismv1.CoreReady       // active; its exported object carries the OSD
	CorePending     = prismv1.CorePending     // a step will add it
	CoreCacheFailed = prismv1.CoreCacheFailed // the cache device failed; IO that needs it fails
	CoreInactive    = prismv1.CoreInactive    // casadm lists it but its device is missing
	CoreRefused     = prismv1.CoreRefused     // Prism will not add or remove it (see Message)
	CoreRemoving    = prismv1.CoreRemoving    // not desired; steps flush and remove it
)

// CoreStatus is one core's state.
type CoreStatus struct {
	// Device is the core device's stable path.
	Device string
	// CoreID and ExportedObject (/dev/cas<cache>-<core>) once known.
	CoreID         int
	ExportedObject string
	State          CoreState
	Message        string
}

// Condition is a fact about the cache worth a status condition.
type Condition struct {
	Type    string
	Message string
}

// Condition types.
const (
	ConditionCacheFailed     = "CacheFailed"
	ConditionCoreInactive    = "CoreInactive"
	ConditionCacheIncomplete = "CacheIncomplete"
	ConditionLineSize        = "LineSizeMismatch"
	ConditionCacheID         = "CacheIDFromMetadata"
	ConditionDesiredInvalid  = "DesiredInvalid"
)

// Plan is what Decide wants done.
type Plan struct {
	// CacheID is the id of the cache the steps act on (0 when there is none yet and none
	// will be started).
	CacheID int
	Steps   []Step
	// Refusals say what Prism will not do, and why.
	Refusals []string
	// Conditions are facts to report.
	Conditions []Condition
	// Cores is every desired core, then every core being removed.
	Cores []CoreStatus
}

// Conf paths, relative to the host root.
const (
	ConfPath  = "/etc/opencas/opencas.conf"
	confDir   = "/etc/opencas"
	ioFileFmt = "/etc/opencas/prism-cache%d-ioclass.csv"
)

// IOClassFilePath is the IO class file opencas.conf names for a cache. It is lower-case:
// opencas.py lower-cases the extra-fields column before reading it.
func IOClassFilePath(cacheID int) string { return fmt.Sprintf(ioFileFmt, cacheID) }

// validate checks a Desired; the message says what is wrong.
func (d Desired) validate() error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if _, err := casadmMode(d.Mode); err != nil {
		add("%v", err)
	}
	if d.CacheID < 1 || d.CacheID > casadm.MaxCacheID {
		add("cache id %d is not within 1-%d", d.CacheID, casadm.MaxCacheID)
	}
	if err := checkPath(d.Partition); err != nil {
		add("cache partition: %v", err)
	}
	if !slices.Contains([]int{0, 4, 8, 16, 32, 64}, d.LineSizeKiB) {
		add("line size %d KiB is not one of 4, 8, 16, 32, 64", d.LineSizeKiB)
	}
	seen := map[string]bool{}
	for _, c := range d.Cores {
		if err := checkPath(c); err != nil {
			add("core %q: %v", c, err)
		}
		if seen[c] {
			add("core %s is listed twice", c)
		}
		if c == d.Partition {
			add("core %s is the cache partition", c)
		}
		seen[c] = true
	}
	if len(d.Cores) > casadm.MaxCoreID {
		add("%d cores: a cache takes at most %d", len(d.Cores), casadm.MaxCoreID)
	}
	if d.IOClassCSV != "" {
		if _, err := parseClasses(d.IOClassCSV); err != nil {
			var ce *ioclass.CSVError
			if errors.As(err, &ce) {
				// What casadm itself would print for this file.
				add("IO classes: casadm refuses the file: %s", strings.ReplaceAll(strings.TrimSpace(ce.Output()), "\n", " "))
			} else {
				add("IO classes: the kernel refuses a rule: %v", err)
			}
		}
	}
	if err := d.Params.validate(); err != nil {
		add("%v", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// checkPath accepts a /dev/disk/by-id link opencas.conf can carry: no white space (the
// conf is white-space split) and no '#' (it starts a comment there).
func checkPath(p string) error {
	switch {
	case !casadm.IsByID(p) || len(p) <= len("/dev/disk/by-id/"):
		return fmt.Errorf("%q is not a /dev/disk/by-id path (casadm takes only by-id paths)", p)
	case strings.ContainsAny(p, " \t\n\v\f\r#,"):
		return fmt.Errorf("%q holds white space, '#' or ',' which opencas.conf cannot carry", p)
	case strings.Contains(p[len("/dev/disk/by-id/"):], "/"):
		return fmt.Errorf("%q is not a link directly under /dev/disk/by-id", p)
	}
	return nil
}

// parseClasses reads a CSV with casadm's rules and the kernel's rule check.
func parseClasses(csv string) (ioclass.Config, error) {
	cfg, err := ioclass.ParseCSV(strings.NewReader(csv))
	if err != nil {
		return cfg, err
	}
	if _, err := ioclass.NewEvaluator(cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (p Params) validate() error {
	var errs []string
	inRange := func(name string, v *uint64, min, max uint64) {
		if v != nil && (*v < min || *v > max) {
			errs = append(errs, fmt.Sprintf("%s %d is not within %d-%d", name, *v, min, max))
		}
	}
	oneOf := func(name, v string, valid ...string) {
		if v != "" && !slices.Contains(valid, v) {
			errs = append(errs, fmt.Sprintf("%s %q is not one of %s", name, v, strings.Join(valid, ", ")))
		}
	}
	oneOf("cleaning policy", p.CleaningPolicy, "nop", "alru", "acp")
	oneOf("promotion policy", p.PromotionPolicy, "always", "nhit")
	if a := p.Alru; a != nil {
		inRange("alru wake-up", a.WakeUpSeconds, 0, 3600)
		inRange("alru staleness time", a.StaleBufferSeconds, 1, 3600)
		inRange("alru flush max buffers", a.FlushMaxBuffers, 1, 10000)
		inRange("alru activity threshold", a.ActivityThresholdMs, 0, 1000000)
	}
	if a := p.Acp; a != nil {
		inRange("acp wake-up", a.WakeUpMs, 0, 10000)
		inRange("acp flush max buffers", a.FlushMaxBuffers, 1, 10000)
	}
	if n := p.Nhit; n != nil {
		inRange("nhit threshold", n.Threshold, 2, 1000)
		inRange("nhit trigger", n.TriggerPercent, 0, 100)
	}
	if s := p.SeqCutoff; s != nil {
		if s.ThresholdKiB != 0 {
			inRange("seq-cutoff threshold", &s.ThresholdKiB, 1, 4194181)
		}
		oneOf("seq-cutoff policy", s.Policy, "always", "full", "never")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func itoa(v int) string        { return strconv.Itoa(v) }
func utoa(v uint64) string     { return strconv.FormatUint(v, 10) }
func exported(c, k int) string { return fmt.Sprintf("/dev/cas%d-%d", c, k) }
