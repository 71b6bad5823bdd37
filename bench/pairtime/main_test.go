package main

import (
	"testing"
)

func TestStatsMedianAndLowest(t *testing.T) {
	for _, c := range []struct {
		in      []float64
		med, lo float64
	}{
		{[]float64{3, 1, 2}, 2, 1},
		{[]float64{4, 1, 3, 2}, 2.5, 1},
		{[]float64{7}, 7, 7},
	} {
		if med, lo := stats(c.in); med != c.med || lo != c.lo {
			t.Errorf("stats(%v) = %v, %v; want %v, %v", c.in, med, lo, c.med, c.lo)
		}
	}
}

// A run that exits non-zero keeps its times (ceph-volume's failed runs still count with
// -ignore-failure); one that cannot start has none.
func TestRunKeepsTheTimesOfAFailedRun(t *testing.T) {
	s, err := run([]string{"false"})
	if err == nil || s.wall <= 0 {
		t.Errorf("false: %+v, %v; want an error and its wall time", s, err)
	}
	if s, err := run([]string{"true"}); err != nil || s.wall <= 0 {
		t.Errorf("true: %+v, %v", s, err)
	}
	if s, err := run([]string{"/nonexistent/pairtime-test"}); err == nil || s != (sample{}) {
		t.Errorf("missing command: %+v, %v; want an error and no times", s, err)
	}
}

// " ; " separates commands that make one run, their times summed; spaces inside split argv.
func TestCommandsSplitsRunsAndArgv(t *testing.T) {
	got := commands("lsblk --json -O ; wipefs --no-act --json /dev/loop2")
	if len(got) != 2 || len(got[0]) != 3 || got[1][0] != "wipefs" || got[1][3] != "/dev/loop2" {
		t.Fatalf("commands = %q", got)
	}
	one, errOne := runAll(commands("true"))
	two, errTwo := runAll(commands("true ; false"))
	if errOne != nil || errTwo == nil || one.wall <= 0 || two.wall <= 0 {
		t.Errorf("true: %+v, %v; true ; false: %+v, %v; want times for both and an error for the second", one, errOne, two, errTwo)
	}
}
