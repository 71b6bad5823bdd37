package opencas

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/ioclass"
)

const (
	part = "/dev/disk/by-id/nvme-OPTANE_1-part3"
	q1   = "/dev/disk/by-id/wwn-0x5000000000000001"
	q2   = "/dev/disk/by-id/wwn-0x5000000000000002"
	q3   = "/dev/disk/by-id/wwn-0x5000000000000003"
)

const classes = "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n1,request_size:ge:1048576&done,255,0\n2,io_direction:write&done,1,1\n"

func desired() Desired {
	return Desired{
		CacheID: 1, Partition: part, PartitionScanned: true, Mode: prismv1.CacheWriteBack, LineSizeKiB: 4,
		Cores: []string{q1, q2}, IOClassCSV: classes,
		Params: Params{CleaningPolicy: "alru", Alru: &AlruParams{WakeUpSeconds: Ptr(5), StaleBufferSeconds: Ptr(30)},
			SeqCutoff: &SeqCutoff{Policy: "never"}},
	}
}

func argvs(p Plan) []string {
	var out []string
	for _, s := range p.Steps {
		if s.Kind == StepWriteFile {
			out = append(out, "write "+s.Path)
			continue
		}
		out = append(out, strings.Join(s.Argv, " "))
	}
	return out
}

func mustClasses(t *testing.T, csv string) *ioclass.Config {
	t.Helper()
	cfg, err := ioclass.ParseCSVDialect(strings.NewReader(csv), ioclass.Master)
	if err != nil {
		t.Fatal(err)
	}
	return &cfg
}

func counter(v uint64) *casadm.Counter { return &casadm.Counter{Value: v} }

// running is the observed state of a cache exactly as desired() wants it, with
// coreDirty dirty blocks on each core.
func running(t *testing.T, d Desired, mode string, coreDirty ...uint64) Observed {
	t.Helper()
	c := &ObservedCache{
		Cache: casadm.Cache{ID: 1, Disk: d.Partition, Status: casadm.Status{State: casadm.StateRunning}, Mode: mode, WritePolicy: mode},
		Stats: &casadm.Stats{Cache: &casadm.CacheInfo{ID: 1, LineSizeKiB: 4}, Usage: &casadm.Usage{Dirty: counter(0)},
			Errors: &casadm.Errors{CacheRead: counter(0), CacheWrite: counter(0), CacheTotal: counter(0)}},
		CoreUsage: map[int]*casadm.Usage{},
		Params: map[string]casadm.Params{
			"cleaning":      {{Title: "Cleaning policy type", Value: "alru"}},
			"cleaning-alru": {{Title: "Wake up time [s]", Value: "5"}, {Title: "Stale buffer time [s]", Value: "30"}, {Title: "Flush max buffers", Value: "100"}},
		},
		SeqCutoff: map[int]casadm.Params{},
		IOClasses: mustClasses(t, classes),
	}
	var cores []ConfCore
	for i, k := range d.Cores {
		id := i + 1
		c.Cores = append(c.Cores, casadm.Core{ID: id, Disk: k, Status: casadm.Status{State: casadm.StateActive}, Device: exported(1, id)})
		dirty := uint64(0)
		if i < len(coreDirty) {
			dirty = coreDirty[i]
		}
		c.CoreUsage[id] = &casadm.Usage{Dirty: counter(dirty)}
		c.SeqCutoff[id] = casadm.Params{{Title: "Sequential cutoff threshold [KiB]", Value: "1024"}, {Title: "Sequential cutoff policy", Value: "never"}}
		cores = append(cores, ConfCore{CacheID: 1, CoreID: id, Device: k, Params: []ConfParam{{"lazy_startup", "true"}}})
	}
	o := Observed{List: casadm.List{Caches: []casadm.Cache{c.Cache}}, Cache: c, IOClassFile: d.IOClassCSV}
	cc := &ConfCache{ID: 1, Device: d.Partition, Mode: mode, Params: []ConfParam{{"ioclass_file", IOClassFilePath(1)},
		{"cleaning_policy", "alru"}, {"cache_line_size", "4"}, {"lazy_startup", "true"}}}
	o.Conf = MergeConf("", 1, d.Partition, cc, cores)
	return o
}

func TestDecideBarePartition(t *testing.T) {
	p := Decide(desired(), Observed{})
	want := []string{
		"casadm -S -d " + part + " -i 1 -c wb -x 4 --force",
		"casadm -A -i 1 -d " + q1 + " -j 1",
		"casadm -A -i 1 -d " + q2 + " -j 2",
		"casadm -X -n cleaning-alru -i 1 -w 5 -s 30",
		"casadm -X -n seq-cutoff -i 1 -j 1 -p never",
		"casadm -X -n seq-cutoff -i 1 -j 2 -p never",
		"casadm -C -C -i 1 -f -",
		"write " + IOClassFilePath(1),
		"write " + ConfPath,
	}
	if got := argvs(p); !reflect.DeepEqual(got, want) {
		t.Fatalf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if string(p.Steps[6].Stdin) != classes {
		t.Errorf("IO classes fed: %q", p.Steps[6].Stdin)
	}
	if len(p.Refusals) != 0 || p.CacheID != 1 {
		t.Errorf("refusals %v, cache %d", p.Refusals, p.CacheID)
	}
	for i, c := range p.Cores {
		if c.State != CorePending || c.ExportedObject != exported(1, i+1) {
			t.Errorf("core %d: %+v", i, c)
		}
	}
	conf, err := ParseConf(p.Steps[8].Content)
	if err != nil {
		t.Fatalf("the conf Prism writes does not parse: %v\n%s", err, p.Steps[8].Content)
	}
	if len(conf.Caches) != 1 || conf.Caches[0].Device != part || conf.Caches[0].Mode != "wb" || len(conf.Cores) != 2 {
		t.Errorf("conf: %+v", conf)
	}
}

func TestDecideIdempotent(t *testing.T) {
	d := desired()
	if p := Decide(d, running(t, d, "wb")); len(p.Steps) != 0 || len(p.Refusals) != 0 {
		t.Fatalf("steps on the desired state: %v %v", argvs(p), p.Refusals)
	}
	p := Decide(d, running(t, d, "wb"))
	for i, c := range p.Cores {
		if c.State != CoreReady || c.ExportedObject != exported(1, i+1) {
			t.Errorf("core %d: %+v", i, c)
		}
	}
}

func TestDecideNoBlindStart(t *testing.T) {
	d := desired()
	d.PartitionScanned = false
	p := Decide(d, Observed{})
	if len(p.Steps) != 0 || len(p.Refusals) != 1 || !strings.Contains(p.Refusals[0], "never starts a cache blind") {
		t.Errorf("unscanned: %v %v", argvs(p), p.Refusals)
	}
	d = desired()
	d.Signatures = []prismv1.DeviceSignature{{Kind: prismv1.SignatureFilesystem, Name: "xfs"}}
	p = Decide(d, Observed{})
	if len(p.Steps) != 0 || len(p.Refusals) != 1 || !strings.Contains(p.Refusals[0], "xfs") {
		t.Errorf("foreign signature: %v %v", argvs(p), p.Refusals)
	}
	for _, c := range p.Cores {
		if c.State != CoreRefused {
			t.Errorf("core %+v", c)
		}
	}
	// Open CAS metadata: load, never --force.
	d = desired()
	d.Signatures = []prismv1.DeviceSignature{{Kind: prismv1.SignatureOpenCAS, Name: "open_cas"}}
	p = Decide(d, Observed{})
	if got := argvs(p); !reflect.DeepEqual(got, []string{"casadm -S -d " + part + " -l"}) || !p.Steps[0].Barrier {
		t.Errorf("metadata: %v", got)
	}
	// Bytes no signature explains: --force would overwrite them. Unless Prism's own start,
	// cut short, left them.
	d = desired()
	d.Unexplained = "non-zero bytes at byte 65536"
	p = Decide(d, Observed{})
	if len(p.Steps) != 0 || len(p.Refusals) != 1 || !strings.Contains(p.Refusals[0], "non-zero bytes at byte 65536 that no format explains") {
		t.Errorf("unexplained bytes: %v %v", argvs(p), p.Refusals)
	}
	d.StartCutShort = true
	if p = Decide(d, Observed{}); len(p.Steps) == 0 || p.Steps[0].Kind != StepStart || p.Steps[0].Path != part {
		t.Errorf("Prism's start cut short: %v %v", argvs(p), p.Refusals)
	}
	// Cache id taken by another partition's cache.
	d = desired()
	p = Decide(d, Observed{List: casadm.List{Caches: []casadm.Cache{{ID: 1, Disk: "/dev/disk/by-id/other-part3"}}}})
	if len(p.Steps) != 0 || !strings.Contains(strings.Join(p.Refusals, ""), "cache id 1 is taken") {
		t.Errorf("id taken: %v %v", argvs(p), p.Refusals)
	}
}

func TestDecideLeaveWriteBackFlushesFirst(t *testing.T) {
	d := desired()
	d.Mode = prismv1.CacheWriteThrough
	p := Decide(d, running(t, d, "wb", 100))
	got := argvs(p)
	if len(got) == 0 || got[0] != "casadm -Q -c wt -i 1 -f yes" {
		t.Fatalf("steps %v", got)
	}
	// Entering write-back needs no flush.
	d.Mode = prismv1.CacheWriteBack
	if got := argvs(Decide(d, running(t, d, "wt"))); got[0] != "casadm -Q -c wb -i 1" {
		t.Errorf("wt->wb: %v", got)
	}
	// wb -> wo stays lazy: no flush needed.
	d.Mode = prismv1.CacheWriteOnly
	if got := argvs(Decide(d, running(t, d, "wb"))); got[0] != "casadm -Q -c wo -i 1" {
		t.Errorf("wb->wo: %v", got)
	}
	// An incomplete cache cannot flush: no switch out of wb.
	d.Mode = prismv1.CacheWriteThrough
	o := running(t, d, "wb")
	o.Cache.Status.State = casadm.StateIncomplete
	p = Decide(d, o)
	if slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Kind == StepSetMode }) || len(p.Refusals) == 0 {
		t.Errorf("incomplete: %v %v", argvs(p), p.Refusals)
	}
}

func TestDecideRemoveCore(t *testing.T) {
	d := desired()
	o := running(t, d, "wb", 0, 40)
	d.Cores = []string{q1}
	got := argvs(Decide(d, o))
	want := []string{"casadm -F -i 1 -j 2", "casadm -R -i 1 -j 2"}
	if len(got) < 2 || !reflect.DeepEqual(got[:2], want) {
		t.Fatalf("dirty active core: %v", got)
	}
	for _, a := range got {
		if strings.Contains(a, " -R ") && strings.HasSuffix(a, " -f") {
			t.Errorf("forced removal: %s", a)
		}
	}
	// Clean: removal only.
	o = running(t, desired(), "wb", 0, 0)
	if got := argvs(Decide(d, o)); got[0] != "casadm -R -i 1 -j 2" {
		t.Errorf("clean core: %v", got)
	}
	// Unknown dirtiness counts as dirty.
	o = running(t, desired(), "wb")
	delete(o.Cache.CoreUsage, 2)
	if got := argvs(Decide(d, o)); got[0] != "casadm -F -i 1 -j 2" {
		t.Errorf("unknown usage: %v", got)
	}
	// An inactive core with dirty data: refused unless dirty data loss is allowed.
	o = running(t, desired(), "wb", 0, 7)
	o.Cache.Cores[1].Status.State = casadm.StateInactive
	o.Cache.Status.State = casadm.StateIncomplete
	p := Decide(d, o)
	if slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Kind == StepRemoveInactive || s.Kind == StepRemoveCore }) || len(p.Refusals) != 1 {
		t.Errorf("inactive dirty: %v %v", argvs(p), p.Refusals)
	}
	if c := p.Cores[len(p.Cores)-1]; c.State != CoreRefused || c.CoreID != 2 {
		t.Errorf("core status %+v", c)
	}
	d.AllowDirtyDataLoss = true
	if got := argvs(Decide(d, o)); got[0] != "casadm --remove-inactive -i 1 -j 2 -f" {
		t.Errorf("allowed: %v", got)
	}
	// A clean inactive core goes without -f.
	o.Cache.CoreUsage[2] = &casadm.Usage{Dirty: counter(0)}
	d.AllowDirtyDataLoss = false
	if got := argvs(Decide(d, o)); got[0] != "casadm --remove-inactive -i 1 -j 2" {
		t.Errorf("clean inactive: %v", got)
	}
}

func TestDecideFailedCache(t *testing.T) {
	d := desired()
	d.Mode = prismv1.CacheWriteThrough // a change that would need a flush
	d.Cores = []string{q1}             // and a removal
	o := running(t, desired(), "wb", 3, 4)
	o.Cache.Stats.Errors = &casadm.Errors{CacheRead: counter(2), CacheWrite: counter(5), CacheTotal: counter(7)}
	o.Cache.Stats.Usage.Dirty = counter(7)
	p := Decide(d, o)
	if len(p.Steps) != 0 {
		t.Fatalf("steps on a failed cache: %v", argvs(p))
	}
	if len(p.Conditions) != 1 || p.Conditions[0].Type != ConditionCacheFailed || !strings.Contains(p.Conditions[0].Message, "7 errors") {
		t.Errorf("conditions %+v", p.Conditions)
	}
	if len(p.Cores) != 2 {
		t.Fatalf("cores %+v", p.Cores)
	}
	for _, c := range p.Cores {
		if c.State != CoreCacheFailed || !strings.Contains(c.Message, "needs the cache device fails") || !strings.Contains(c.Message, "7 dirty") {
			t.Errorf("core %+v", c)
		}
	}
	// Stopping (mode None) a failed cache is refused too.
	d.Mode = prismv1.CacheNone
	if p := Decide(d, o); len(p.Steps) != 0 || len(p.Refusals) == 0 {
		t.Errorf("None on failed: %v", argvs(p))
	}
}

// TestDecideNotRunning: the real module's status once OCF met a metadata error on a dead
// cache device (v26.03.2 in the guest, no error counted yet by then) is a failure, and the
// advice never asks for casadm -T with its flush (a kernel BUG with dirty data).
func TestDecideNotRunning(t *testing.T) {
	o := running(t, desired(), "wb", 3, 4)
	o.Cache.Status.State = casadm.StateNotRunning
	for _, mode := range []prismv1.CacheMode{prismv1.CacheWriteBack, prismv1.CacheNone} {
		d := desired()
		d.Mode = mode
		p := Decide(d, o)
		if len(p.Steps) != 0 || len(p.Conditions) != 1 || p.Conditions[0].Type != ConditionCacheFailed ||
			!strings.Contains(p.Conditions[0].Message, "Not running") {
			t.Errorf("%s: steps %v conditions %+v", mode, argvs(p), p.Conditions)
		}
		if len(p.Refusals) != 1 || !strings.Contains(p.Refusals[0], "-T -i 1 -n") || !strings.Contains(p.Refusals[0], "Do not run casadm -T -i 1 with its flush") {
			t.Errorf("%s: refusals %q", mode, p.Refusals)
		}
		if len(p.Cores) != 2 || p.Cores[0].State != CoreCacheFailed {
			t.Errorf("%s: cores %+v", mode, p.Cores)
		}
	}
}

func TestDecideModeNone(t *testing.T) {
	d := desired()
	o := running(t, d, "wb", 10, 0)
	d.Mode = prismv1.CacheNone
	p := Decide(d, o)
	if got := argvs(p); !reflect.DeepEqual(got, []string{"write " + ConfPath, "casadm -T -i 1"}) {
		t.Fatalf("steps %v", got)
	}
	if conf, _ := ParseConf(p.Steps[0].Content); len(conf.Caches) != 0 || len(conf.Cores) != 0 {
		t.Errorf("conf keeps the cache: %+v", conf)
	}
	// An inactive core with dirty data: the stop would strand it; nothing runs, the conf stays.
	inactive := running(t, desired(), "wb", 0, 5)
	inactive.Cache.Cores[1].Status.State = casadm.StateInactive
	inactive.Cache.Status.State = casadm.StateIncomplete
	if p := Decide(d, inactive); len(p.Steps) != 0 || len(p.Refusals) != 1 {
		t.Errorf("None with a dirty inactive core: %v %v", argvs(p), p.Refusals)
	}
	// Nothing runs and the conf is clean: nothing to do.
	o = Observed{Conf: p.Steps[0].Content}
	if p := Decide(d, o); len(p.Steps) != 0 {
		t.Errorf("None, stopped: %v", argvs(p))
	}
}

func TestDecideParamsAndClasses(t *testing.T) {
	d := desired()
	o := running(t, d, "wb")
	o.Cache.Params["cleaning-alru"] = casadm.Params{{Title: "Wake up time [s]", Value: "5"}, {Title: "Stale buffer time [s]", Value: "120"}}
	o.Cache.SeqCutoff[2] = casadm.Params{{Title: "Sequential cutoff threshold [KiB]", Value: "1024"}, {Title: "Sequential cutoff policy", Value: "full"}}
	o.Cache.IOClasses = mustClasses(t, "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,255,1.00\n33,prefetch,255,1.00\n")
	got := argvs(Decide(d, o))
	want := []string{"casadm -X -n cleaning-alru -i 1 -s 30", "casadm -X -n seq-cutoff -i 1 -j 2 -p never", "casadm -C -C -i 1 -f -"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps %v", got)
	}
	// The listing's normalised form of the same classes is equal.
	o = running(t, d, "wb")
	o.Cache.IOClasses = mustClasses(t, "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1.00\n1,request_size:ge:1048576&done,255,0.00\n2,io_direction:write&done,1,1.00\n")
	if got := argvs(Decide(d, o)); len(got) != 0 {
		t.Errorf("same classes reloaded: %v", got)
	}
	// A file without class 0 never compares class 0 (casadm keeps it).
	d.IOClassCSV = "IO class id,IO class name,Eviction priority,Allocation\n2,io_direction:write&done,1,1\n"
	o = running(t, d, "wb")
	o.Cache.IOClasses = mustClasses(t, "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,255,1.00\n2,io_direction:write&done,1,1.00\n")
	if got := argvs(Decide(d, o)); len(got) != 0 {
		t.Errorf("class 0 compared: %v", got)
	}
}

func TestDecideInvalidDesired(t *testing.T) {
	for name, mut := range map[string]func(*Desired){
		"kernel name":   func(d *Desired) { d.Partition = "/dev/nvme0n1p3" },
		"space":         func(d *Desired) { d.Cores = []string{"/dev/disk/by-id/wwn-0x5 x"} },
		"duplicate":     func(d *Desired) { d.Cores = []string{q1, q1} },
		"line size":     func(d *Desired) { d.LineSizeKiB = 12 },
		"cache id":      func(d *Desired) { d.CacheID = 0 },
		"mode":          func(d *Desired) { d.Mode = "Fast" },
		"staleness":     func(d *Desired) { d.Params.Alru.StaleBufferSeconds = Ptr(0) },
		"core is cache": func(d *Desired) { d.Cores = []string{part} },
	} {
		d := desired()
		mut(&d)
		p := Decide(d, Observed{})
		if len(p.Steps) != 0 || len(p.Refusals) != 1 || len(p.Conditions) != 1 || p.Conditions[0].Type != ConditionDesiredInvalid {
			t.Errorf("%s: %v %v", name, argvs(p), p.Refusals)
		}
	}
	// IO class errors say what casadm (or the kernel) would say.
	d := desired()
	d.IOClassCSV = "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n1,metadata&done,0,0.125\n"
	p := Decide(d, Observed{})
	if !strings.Contains(p.Refusals[0], "Cannot parse configuration file - error in line 3 in column 4 (Allocation).") {
		t.Errorf("CSV error: %v", p.Refusals)
	}
	d.IOClassCSV = "IO class id,IO class name,Eviction priority,Allocation\n1,bogus:1&done,1,1\n"
	p = Decide(d, Observed{})
	if !strings.Contains(p.Refusals[0], "Unexpected classification rule condition") {
		t.Errorf("rule error: %v", p.Refusals)
	}
}

func TestDecideLineSizeAndBusyCore(t *testing.T) {
	d := desired()
	o := running(t, d, "wb")
	o.Cache.Stats.Cache.LineSizeKiB = 8
	p := Decide(d, o)
	if len(p.Steps) != 0 || len(p.Refusals) != 1 || p.Conditions[0].Type != ConditionLineSize {
		t.Errorf("line size: %v %v %v", argvs(p), p.Refusals, p.Conditions)
	}
	d = desired()
	d.Cores = []string{q1, q2, q3}
	o = running(t, desired(), "wb")
	o.List.Caches = append(o.List.Caches, casadm.Cache{ID: 2, Disk: "/dev/disk/by-id/other-part3", Cores: []casadm.Core{{ID: 1, Disk: q3}}})
	p = Decide(d, o)
	if c := p.Cores[2]; c.State != CoreRefused || !strings.Contains(c.Message, "already a core of cache 2") {
		t.Errorf("busy core: %+v", c)
	}
	if slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Kind == StepAddCore }) {
		t.Errorf("adds a busy core: %v", argvs(p))
	}
}

func TestDecideLoadedUnderOtherID(t *testing.T) {
	d := desired()
	o := running(t, d, "wb")
	d.CacheID = 3
	p := Decide(d, o)
	if p.CacheID != 1 || len(p.Conditions) != 1 || p.Conditions[0].Type != ConditionCacheID {
		t.Errorf("plan %+v", p)
	}
	for _, s := range p.Steps {
		if s.Kind != StepWriteFile {
			t.Errorf("step %s", s)
		}
	}
}

// A core device that holds data is not added; one already in the cache stays whatever the
// inventory says (the OSD on its exported object writes BlueStore's label through to it).
func TestDecideCoreWithDataIsRefused(t *testing.T) {
	d := desired()
	bluestore := []prismv1.DeviceSignature{{Kind: prismv1.SignatureCephBlueStore, Name: "ceph_bluestore", OffsetBytes: 0}}
	d.CoreSignatures = map[string][]prismv1.DeviceSignature{q2: bluestore}
	p := Decide(d, Observed{})
	for _, s := range argvs(p) {
		if strings.Contains(s, q2) {
			t.Errorf("a step touches the device with data: %s", s)
		}
	}
	if len(p.Cores) != 2 || p.Cores[0].State != CorePending || p.Cores[1].State != CoreRefused ||
		!strings.Contains(p.Cores[1].Message, "ceph_bluestore (CephBlueStore) at offset 0") {
		t.Errorf("cores: %+v", p.Cores)
	}
	if len(p.Refusals) != 1 {
		t.Errorf("refusals: %v", p.Refusals)
	}
	// Already a core: nothing refused, nothing to do.
	d.CoreSignatures = map[string][]prismv1.DeviceSignature{q1: bluestore, q2: bluestore}
	if p := Decide(d, running(t, d, "wb")); len(p.Steps) != 0 || len(p.Refusals) != 0 || p.Cores[1].State != CoreReady {
		t.Errorf("a running core with BlueStore on it: steps %v refusals %v cores %+v", argvs(p), p.Refusals, p.Cores)
	}
}
