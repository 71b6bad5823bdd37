package opencas

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prism-storage/prism/internal/fsutil"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/ioclass"
)

// Runner carries out a Desired cache on this host.
type Runner struct {
	// Exec runs casadm.
	Exec hostexec.Executor
	// HostRoot is where the host's / is mounted ("/" outside a container): opencas.conf and
	// the IO class file are read and written under it.
	HostRoot string
	// DryRun decides and reports without running anything.
	DryRun bool
	// StepLimit, when positive, stops after that many steps in one Reconcile, as a crash
	// would. Tests use it; the agent leaves it 0.
	StepLimit int
	// MaxRounds bounds observe-decide-run rounds (default 8).
	MaxRounds int
	// IntentDir is where Prism records, before casadm -S --force, that it starts a cache on
	// a partition (the agent's --state-dir, on the host): the bytes a start cut short leaves
	// are then known as Prism's own, and the next pass starts it again. Empty: no record,
	// and such a partition is refused as not proven empty.
	IntentDir string
}

// Result is one Reconcile.
type Result struct {
	// CacheID is the cache's id (0 when there is no cache).
	CacheID int
	// Cores is every desired core's state, then the cores being removed.
	Cores []CoreStatus
	// ExportedObjects maps each ready QLC's stable path to its exported object
	// (/dev/cas1-1): the device Rook must create the OSD on.
	ExportedObjects map[string]string
	Refusals        []string
	Conditions      []Condition
	// Ran are the steps run, in order.
	Ran []Step
	// Pending are the steps a DryRun (or a stop at the step limit) did not run.
	Pending []Step
	// Changed is true when a step ran.
	Changed bool
	// Stopped is true when the step limit stopped the run.
	Stopped bool
	// Err is the first failure: a read that could not be done (nothing is decided without
	// it) or a step that failed (with casadm's message).
	Err error
	// Unobserved is true when no observation of the cache succeeded (Err is the read that
	// failed): the result says nothing of what runs, neither the cache nor its cores.
	Unobserved bool
}

// Reconcile brings the cache on desired.Partition to desired, through exec.
func Reconcile(ctx context.Context, exec hostexec.Executor, hostRoot string, desired Desired) Result {
	return Runner{Exec: exec, HostRoot: hostRoot}.Reconcile(ctx, desired)
}

// Reconcile observes, decides and runs the steps, round after round, until Decide has
// nothing left to do (or refuses), a step fails, or the step limit is reached.
func (r Runner) Reconcile(ctx context.Context, d Desired) Result {
	log := logf.FromContext(ctx).WithValues("partition", d.Partition)
	var res Result
	budget := r.StepLimit
	rounds := cmp.Or(r.MaxRounds, 8)
	for round := 0; round < rounds; round++ {
		o, err := r.Observe(ctx, d)
		if err != nil {
			res.Err, res.Unobserved = err, round == 0
			return res
		}
		if o.Cache != nil {
			// The cache runs: what is on the partition is its metadata now, not a start
			// cut short.
			if err := r.forgetStart(d.Partition); err != nil {
				res.Err = err
				return res
			}
		}
		plan := Decide(d, o)
		res.fill(plan)
		if len(plan.Steps) == 0 {
			return res
		}
		if r.DryRun {
			res.Pending = plan.Steps
			return res
		}
		for i, s := range plan.Steps {
			if r.StepLimit > 0 && budget == 0 {
				res.Stopped, res.Pending = true, plan.Steps[i:]
				return res
			}
			budget--
			log.Info("Running cache step", "step", s.String(), "why", s.Why)
			res.Changed = true
			res.Ran = append(res.Ran, s)
			if err := r.run(ctx, s, d); err != nil {
				res.Err = fmt.Errorf("%s failed: %w", s, err)
				return res
			}
			if s.Barrier {
				break
			}
		}
	}
	res.Err = fmt.Errorf("the cache on %s did not settle after %d rounds of steps", d.Partition, rounds)
	return res
}

func (res *Result) fill(p Plan) {
	res.CacheID, res.Cores, res.Refusals, res.Conditions = p.CacheID, p.Cores, p.Refusals, p.Conditions
	res.ExportedObjects = map[string]string{}
	for _, c := range p.Cores {
		if c.State == CoreReady {
			res.ExportedObjects[c.Device] = c.ExportedObject
		}
	}
}

// run carries out one step.
func (r Runner) run(ctx context.Context, s Step, d Desired) error {
	if s.Kind == StepWriteFile {
		return writeFile(r.hostPath(s.Path), s.Content)
	}
	if s.Kind == StepStart && d.Pin != nil {
		// casadm -S --force overwrites the partition: only the one that was proven empty.
		if err := checkPinned(d.Pin, r.hostPath(s.Path)); err != nil {
			return err
		}
	}
	if s.Kind == StepStart && r.IntentDir != "" {
		if err := r.recordStart(s.Path); err != nil {
			return err
		}
	}
	out, err := r.Exec.Run(ctx, s.Argv, s.Stdin)
	if err != nil {
		return withOutput(err, out)
	}
	return nil
}

// withOutput adds what casadm printed on stdout to an error (its errors go to stderr,
// which hostexec.ExitError carries; some messages go to stdout).
func withOutput(err error, stdout []byte) error {
	out := strings.TrimSpace(string(stdout))
	if out == "" {
		return err
	}
	return fmt.Errorf("%w (stdout: %s)", err, out)
}

func (r Runner) hostPath(p string) string { return filepath.Join(cmp.Or(r.HostRoot, "/"), p) }

// writeFile replaces a file atomically (temporary file, then rename).
func writeFile(path, content string) error {
	return fsutil.WriteFileAtomic(path, []byte(content), 0o644)
}

// casadm runs one read-only casadm command (argv from the casadm adapter).
func (r Runner) casadm(ctx context.Context, argv []string) ([]byte, error) {
	out, err := r.Exec.Run(ctx, argv, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), withOutput(err, out))
	}
	return out, nil
}

// Observe reads what Decide needs: the cache list, and for the cache on the partition its
// statistics, the cores' usage, the parameters and IO classes the desired state sets, and
// the conf files under the host root.
func (r Runner) Observe(ctx context.Context, d Desired) (Observed, error) {
	var o Observed
	out, err := r.casadm(ctx, casadm.ListArgv())
	if err != nil {
		return o, err
	}
	if o.List, err = casadm.ParseList(strings.NewReader(string(out))); err != nil {
		return o, fmt.Errorf("casadm -L: %w", err)
	}
	for _, c := range o.List.Caches {
		if c.Disk == d.Partition {
			oc, err := r.observeCache(ctx, d, c)
			if err != nil {
				return o, err
			}
			o.Cache = oc
			break
		}
	}
	if o.Conf, err = readOptional(r.hostPath(ConfPath)); err != nil {
		return o, err
	}
	id := d.CacheID
	if o.Cache != nil {
		id = o.Cache.ID
	}
	if o.IOClassFile, err = readOptional(r.hostPath(IOClassFilePath(id))); err != nil {
		return o, err
	}
	return o, nil
}

func readOptional(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}

func (r Runner) observeCache(ctx context.Context, d Desired, c casadm.Cache) (*ObservedCache, error) {
	oc := &ObservedCache{Cache: c, CoreUsage: map[int]*casadm.Usage{}, Params: map[string]casadm.Params{}, SeqCutoff: map[int]casadm.Params{}}
	id := itoa(c.ID)
	out, err := r.casadm(ctx, casadm.StatsArgv(c.ID))
	if err != nil {
		return nil, err
	}
	stats, err := casadm.ParseStats(strings.NewReader(string(out)))
	if err != nil {
		return nil, fmt.Errorf("casadm -P -i %s: %w", id, err)
	}
	oc.Stats = &stats[0]
	for _, k := range c.Cores {
		out, err := r.casadm(ctx, casadm.CoreUsageArgv(c.ID, k.ID))
		if err != nil {
			return nil, err
		}
		s, err := casadm.ParseStats(strings.NewReader(string(out)))
		if err != nil {
			return nil, fmt.Errorf("casadm -P -i %s -j %d: %w", id, k.ID, err)
		}
		oc.CoreUsage[k.ID] = s[0].Usage
	}
	for _, ns := range d.Params.ParamNamespaces() {
		out, err := r.casadm(ctx, casadm.GetParamsArgv(ns, c.ID))
		if err != nil {
			return nil, err
		}
		if oc.Params[ns], err = casadm.ParseParams(strings.NewReader(string(out))); err != nil {
			return nil, fmt.Errorf("casadm -G -n %s: %w", ns, err)
		}
	}
	if d.Params.SeqCutoff != nil {
		for _, k := range c.Cores {
			if k.Status.State == casadm.StateInactive {
				continue
			}
			out, err := r.casadm(ctx, casadm.GetCoreParamsArgv("seq-cutoff", c.ID, k.ID))
			if err != nil {
				return nil, err
			}
			if oc.SeqCutoff[k.ID], err = casadm.ParseParams(strings.NewReader(string(out))); err != nil {
				return nil, fmt.Errorf("casadm -G -n seq-cutoff -j %d: %w", k.ID, err)
			}
		}
	}
	if d.IOClassCSV != "" {
		out, err := r.casadm(ctx, casadm.ListIOClassesArgv(c.ID))
		if err != nil {
			return nil, err
		}
		// The listing has the load file's format (FORMATS.md §1.5); a master casadm lists
		// its reserved class 33, so read it with master's rules.
		cfg, err := ioclass.ParseCSVDialect(strings.NewReader(string(out)), ioclass.Master)
		if err != nil {
			return nil, fmt.Errorf("casadm -C -L -i %s: %w", id, err)
		}
		oc.IOClasses = &cfg
	}
	return oc, nil
}
