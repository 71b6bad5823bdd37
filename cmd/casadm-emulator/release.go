package main

import (
	"fmt"
	"slices"

	"github.com/prism-storage/prism/internal/ioclass"
)

// ReleaseEnv selects whose output formats the emulator prints. Unset (or "master"): those of
// open-cas-linux master, which the reference (../shared/reference/opencas) captured. A release
// name: that released casadm's formats where they differ from master, each one taken from a
// recording of the real release (docs/decisions/0016-emulator-release-mode.md). The agent
// runs the emulator with casadm's argv, so the choice cannot be an option.
const ReleaseEnv = "CASADM_EMULATOR_RELEASE"

// release is the set of format differences of one casadm release against master.
type release struct {
	name string
	// masterStats: -P prints master's Prefetch Policy, prefetch, cleaner and user-request
	// rows, and keeps the cleaner's reads and writes out of "Reads from cache" and
	// "Writes to core(s)". Without them (v26.03.2, test/cache/testdata/opencas-v26.03.2
	// 1-bare-to-running.jsonl #8 and #18, 3-cache-off.jsonl #1), the cleaner's blocks are
	// counted in those two rows and "Total requests" counts user requests only.
	masterStats bool
	// seqCutoffPromotionRow: -G -n seq-cutoff prints a third row, "Sequential cutoff
	// promotion request count threshold" (v26.03.2, 1-bare-to-running.jsonl #14); master moved
	// the value to the seq-detect namespace.
	seqCutoffPromotionRow bool
	// classes is the IO class dialect: master has ids 0-33 and starts every cache with
	// class 33 "prefetch"; released casadm has ids 0-32, no prefetch class, and says
	// "range 0-32" (../shared/reference/opencas/FORMATS.md, IO class id).
	classes ioclass.Dialect
}

// maxClassID is the highest IO class id this casadm accepts.
func (r release) maxClassID() int {
	if r.classes == ioclass.Master {
		return prefetchClassID
	}
	return ioclass.MaxClassID
}

var (
	masterFormats = release{name: "master", masterStats: true, classes: ioclass.Master}
	// releases are the accepted values of ReleaseEnv besides master.
	releases = []release{
		{name: "v26.03.2", seqCutoffPromotionRow: true, classes: ioclass.Released},
	}
)

// releaseFrom reads ReleaseEnv's value.
func releaseFrom(v string) (release, error) {
	if v == "" || v == masterFormats.name {
		return masterFormats, nil
	}
	names := []string{masterFormats.name}
	for _, r := range releases {
		if r.name == v {
			return r, nil
		}
		names = append(names, r.name)
	}
	slices.Sort(names)
	return release{}, fmt.Errorf("%s=%q: unknown release; accepted values: %q (unset means master)", ReleaseEnv, v, names)
}
