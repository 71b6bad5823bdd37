package casadm

import (
	"slices"
	"strings"
	"testing"
)

// The argv builders give the command lines the real casadm (v26.03.2) took in the recorded
// transcripts (test/cache replays every one of them against the builders' users).
func TestArgv(t *testing.T) {
	for _, tc := range []struct {
		got  []string
		want string
	}{
		{ListArgv(), "casadm -L -o csv -b"},
		{StatsArgv(1), "casadm -P -i 1 -o csv"},
		{IOClassStatsArgv(1), "casadm -P -i 1 -d -o csv"},
		{CoreStatsArgv(1, 2), "casadm -P -i 1 -j 2 -o csv"},
		{CoreUsageArgv(1, 2), "casadm -P -i 1 -j 2 -f usage -o csv"},
		{GetParamsArgv("cleaning-alru", 1), "casadm -G -n cleaning-alru -i 1 -o csv"},
		{GetCoreParamsArgv("seq-cutoff", 1, 2), "casadm -G -n seq-cutoff -i 1 -j 2 -o csv"},
		{ListIOClassesArgv(3), "casadm -C -L -i 3 -o csv"},
		{LoadIOClassesArgv(3, "-"), "casadm -C -C -i 3 -f -"},
		{StartArgv("/dev/disk/by-id/nvme-x-part4", 1, "wb", 16), "casadm -S -d /dev/disk/by-id/nvme-x-part4 -i 1 -c wb -x 16 --force"},
		{LoadArgv("/dev/disk/by-id/nvme-x-part4"), "casadm -S -d /dev/disk/by-id/nvme-x-part4 -l"},
		{StopArgv(1), "casadm -T -i 1"},
		{SetModeArgv(1, "wt", true), "casadm -Q -c wt -i 1 -f yes"},
		{SetModeArgv(1, "wb", false), "casadm -Q -c wb -i 1"},
		{AddCoreArgv(1, "/dev/disk/by-id/nvme-q", 2), "casadm -A -i 1 -d /dev/disk/by-id/nvme-q -j 2"},
		{FlushCoreArgv(1, 2), "casadm -F -i 1 -j 2"},
		{RemoveCoreArgv(1, 2), "casadm -R -i 1 -j 2"},
		{RemoveInactiveArgv(1, 2, true), "casadm --remove-inactive -i 1 -j 2 -f"},
		{RemoveInactiveArgv(1, 2, false), "casadm --remove-inactive -i 1 -j 2"},
		{SetParamsArgv("cleaning", 1, "-p", "acp"), "casadm -X -n cleaning -i 1 -p acp"},
		{SetCoreParamsArgv("seq-cutoff", 1, 2, "-t", "1024"), "casadm -X -n seq-cutoff -i 1 -j 2 -t 1024"},
		{VersionArgv(), "casadm -V -o csv"},
	} {
		if got := strings.Join(tc.got, " "); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	// A builder's result is the caller's own: appending to one never changes another.
	a := SetParamsArgv("cleaning", 1)
	b := append(a, "-p", "nop")
	if slices.Contains(a, "nop") || len(b) != len(a)+2 {
		t.Error("argv slices share storage")
	}
}
