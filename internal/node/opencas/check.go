package opencas

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/ioclass"
)

// CheckResult is one command of a node check: what Prism read with its own parsers.
type CheckResult struct {
	// What ran (a casadm argv, or a file read).
	What string
	// OK is true when Prism parsed the output.
	OK bool
	// Detail says what was parsed, or the error.
	Detail string
	// Unknown lists columns Prism does not know (a newer casadm prints them).
	Unknown []string
}

// CheckNode reads every casadm output the agent relies on from the real casadm of this host
// and parses it with Prism's parsers: version, list, per-cache statistics (cache, IO
// classes, cores), parameters, the loaded IO classes, and opencas.conf. It changes nothing.
// A user runs it on a node with Open CAS (hack/validate-opencas-node.sh) to check Prism's
// parsing against their casadm release.
func CheckNode(ctx context.Context, exec hostexec.Executor, hostRoot string) []CheckResult {
	r := Runner{Exec: exec, HostRoot: hostRoot}
	var out []CheckResult
	run := func(parse func(string) (string, []string, error), argv []string) {
		res := CheckResult{What: strings.Join(argv, " ")}
		text, err := r.casadm(ctx, argv)
		if err == nil {
			res.Detail, res.Unknown, err = parse(string(text))
		}
		res.OK = err == nil
		if err != nil {
			res.Detail = err.Error()
		}
		out = append(out, res)
	}
	run(func(s string) (string, []string, error) {
		v, err := casadm.ParseVersion(strings.NewReader(s))
		return fmt.Sprintf("%+v", v), nil, err
	}, casadm.VersionArgv())
	var list casadm.List
	run(func(s string) (string, []string, error) {
		var err error
		list, err = casadm.ParseList(strings.NewReader(s))
		return fmt.Sprintf("%d caches, %d cores in the pool", len(list.Caches), len(list.Pool)), nil, err
	}, casadm.ListArgv())
	stats := func(s string) (string, []string, error) {
		recs, err := casadm.ParseStats(strings.NewReader(s))
		return fmt.Sprintf("%d records", len(recs)), unknownColumns(recs), err
	}
	for _, c := range list.Caches {
		run(stats, casadm.StatsArgv(c.ID))
		run(stats, casadm.IOClassStatsArgv(c.ID))
		for _, k := range c.Cores {
			run(stats, casadm.CoreStatsArgv(c.ID, k.ID))
			run(func(s string) (string, []string, error) {
				p, err := casadm.ParseParams(strings.NewReader(s))
				return fmt.Sprintf("%d parameters", len(p)), nil, err
			}, casadm.GetCoreParamsArgv("seq-cutoff", c.ID, k.ID))
		}
		for _, ns := range []string{"cleaning", "cleaning-alru", "cleaning-acp", "promotion", "promotion-nhit"} {
			run(func(s string) (string, []string, error) {
				p, err := casadm.ParseParams(strings.NewReader(s))
				return fmt.Sprintf("%d parameters", len(p)), nil, err
			}, casadm.GetParamsArgv(ns, c.ID))
		}
		run(func(s string) (string, []string, error) {
			cfg, err := ioclass.ParseCSVDialect(strings.NewReader(s), ioclass.Master)
			return fmt.Sprintf("%d IO classes", len(cfg.Classes)), nil, err
		}, casadm.ListIOClassesArgv(c.ID))
	}
	conf := CheckResult{What: "read " + ConfPath}
	text, err := os.ReadFile(r.hostPath(ConfPath))
	switch {
	case errors.Is(err, os.ErrNotExist):
		conf.OK, conf.Detail = true, "absent"
	case err != nil:
		conf.Detail = err.Error()
	default:
		c, err := ParseConf(string(text))
		conf.OK = err == nil
		conf.Detail = fmt.Sprintf("%d caches, %d cores", len(c.Caches), len(c.Cores))
		if err != nil {
			conf.Detail = err.Error()
		}
	}
	return append(out, conf)
}

// unknownColumns are the column titles of recs Prism's parser did not know.
func unknownColumns(recs []casadm.Stats) []string {
	seen := map[string]bool{}
	for _, s := range recs {
		for k := range s.Other {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckLoad loads csv into cache id with the real casadm (`-C -C -i N -f FILE`), reads the
// classes back and compares them with what Prism meant, then loads back the classes the
// cache had. It changes the cache's IO classes for a moment: run it only when asked to.
func CheckLoad(ctx context.Context, exec hostexec.Executor, id int, csv string) []CheckResult {
	r := Runner{Exec: exec}
	var out []CheckResult
	list := func() (string, ioclass.Config, error) {
		text, err := r.casadm(ctx, casadm.ListIOClassesArgv(id))
		if err != nil {
			return "", ioclass.Config{}, err
		}
		cfg, err := ioclass.ParseCSVDialect(strings.NewReader(string(text)), ioclass.Master)
		return string(text), cfg, err
	}
	load := func(what, content string) error {
		f, err := os.CreateTemp("", "prism-ioclass-*.csv")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		if _, err := f.WriteString(content); err != nil {
			f.Close()
			return err
		}
		f.Close()
		res := CheckResult{What: fmt.Sprintf("casadm -C -C -i %d -f %s (%s)", id, f.Name(), what)}
		_, err = r.casadm(ctx, casadm.LoadIOClassesArgv(id, f.Name()))
		res.OK = err == nil
		if err != nil {
			res.Detail = err.Error()
		} else {
			res.Detail = "loaded"
		}
		out = append(out, res)
		return err
	}
	saved, _, err := list()
	if err != nil {
		return append(out, CheckResult{What: "casadm -C -L (save the current classes)", Detail: err.Error()})
	}
	want, err := parseClasses(csv)
	if err != nil {
		out = append(out, CheckResult{What: "Prism's own check of the compiled file", Detail: err.Error()})
	}
	if load("the policy", csv) == nil {
		back := CheckResult{What: "casadm -C -L (read the policy back)"}
		_, have, err := list()
		switch {
		case err != nil:
			back.Detail = err.Error()
		case !sameClasses(want, have):
			back.Detail = fmt.Sprintf("casadm lists %d classes that differ from the %d Prism loaded", len(have.Classes), len(want.Classes))
		default:
			back.OK, back.Detail = true, fmt.Sprintf("the %d classes read back as loaded", len(have.Classes))
		}
		out = append(out, back)
	}
	_ = load("restore the previous classes", saved)
	return out
}
