package rook

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// AnswersMaxAge is how old Ceph's answers may be and still release a re-created OSD: the probe
// runs every minute or so, and five minutes is long enough for a slow probe, short enough that
// an OSD that failed meanwhile is seen.
const AnswersMaxAge = 5 * time.Minute

// cephAllows is "" when Ceph's answers for the node let the re-created OSD on device (a /dev
// path; kernel is its kernel name, "" when unknown) go, else why not, naming the answer
// (decision 0046): fresh answers without error, no OSD destroyed under the node's CRUSH host
// (decision 0058), no blocking health check, every PG active and none stale, and every OSD
// Ceph places on the device safe to destroy (or gone).
func cephAllows(a CephAnswers, found bool, node, device, kernel string, ignore []string, now time.Time) string {
	switch age := now.Sub(a.At); {
	case !found:
		return "no answers from Ceph for " + node + " yet"
	case a.Err != "":
		return "Ceph could not answer for " + node + ": " + a.Err
	case a.At.IsZero() || age > AnswersMaxAge:
		return fmt.Sprintf("Ceph's answers for %s are from %s, older than %s", node, a.At.UTC().Format(time.RFC3339), AnswersMaxAge)
	}
	destroyed, err := ParseDestroyed(a.Destroyed)
	if err != nil {
		return err.Error()
	}
	if why := destroyedHold(destroyed, node, holdRecreated); why != "" {
		return why
	}
	health, err := ParseHealth(a.Health)
	if err != nil {
		return err.Error()
	}
	for _, c := range health.Checks {
		if why := checkBlocks(c, ignore); why != "" {
			return "Ceph reports " + why
		}
	}
	pgs, err := ParsePGStat(a.PGStat)
	if err != nil {
		return err.Error()
	}
	if !pgs.Ready {
		return "ceph pg stat: the mgr has no PG statistics yet (pg_ready false)"
	}
	if n, states := pgs.Inactive(); n > 0 {
		return fmt.Sprintf("ceph pg stat: %d PGs not active (%s)", n, strings.Join(states, ", "))
	}
	if n, states := pgs.Stale(); n > 0 {
		return fmt.Sprintf("ceph pg stat: %d PGs stale (%s)", n, strings.Join(states, ", "))
	}
	return osdsSafe(a, device, kernel)
}

// osdsSafe is "" when the OSDs that may be on the device are safe to destroy. When Ceph lists
// the device (`ceph device ls-by-host`), those are the OSDs it names there. Ceph lists only
// devices with an id (udev's model and serial) and, as recorded on Ceph 16, drops a device
// once its OSD is marked out or destroyed; then any OSD of the node that is not up could be
// the one, so every one Ceph's safe-to-destroy answer does not find up and serving PGs must be
// safe (an up OSD runs, so it is not the one whose DB was lost). An answer the probe kept
// for other drives (decision 0057) cannot tell whether Ceph lists this one: it holds. When
// the node's CRUSH host exists and holds no OSD (every one purged), no OSD of the node can
// still be needed (decision 0058).
func osdsSafe(a CephAnswers, device, kernel string) string {
	if !askedAbout(a.DevicesOf, ProbeDrive{Path: device, Kernel: kernel}) {
		return "the probe kept ceph device ls-by-host for other drives than " + device + "; a later probe asks about it"
	}
	devs, err := ParseDeviceLs(a.Devices)
	if err != nil {
		return err.Error()
	}
	if noOSDUnderHost(a.SafeToDestroy) {
		if ids, _ := OSDsOnDevice(devs, device, kernel); len(ids) > 0 {
			return fmt.Sprintf("Ceph lists %s with osd.%d, and no OSD under the node's CRUSH host", device, ids[0])
		}
		return ""
	}
	std, err := ParseSafeToDestroy(a.SafeToDestroy)
	if err != nil {
		return err.Error()
	}
	if ids, listed := OSDsOnDevice(devs, device, kernel); listed {
		for _, id := range ids {
			if why := std.Why(id); why != "" {
				return why
			}
		}
		return ""
	}
	if len(std.Asked()) == 0 {
		return "ceph osd safe-to-destroy names no OSD of the node"
	}
	if down := slices.Concat(std.MissingStats, std.StoredPGs); len(down) > 0 {
		return "Ceph does not list " + device + " in ceph device ls-by-host, so no OSD of the node that is down may still be needed: " + std.Why(down[0])
	}
	return ""
}

// backfilled is "" when no OSD was released before (last nil) or every PG is active+clean, else
// why the next re-created OSD waits: the previous one's backfill runs (decision 0058). The
// runbooks purge the old OSDs, so no down OSD of the node is left for safe-to-destroy to name
// while PGs move, which is what paced the releases when the runbooks destroyed them.
func backfilled(a CephAnswers, last *Release) string {
	if last == nil {
		return ""
	}
	pgs, err := ParsePGStat(a.PGStat)
	if err != nil {
		return err.Error()
	}
	if n, states := pgs.NotClean(); n > 0 {
		return fmt.Sprintf("ceph pg stat: %d PGs not active+clean (%s): after %s %s was released, the next OSD waits until every PG is", n, strings.Join(states, ", "), last.Node, last.Device)
	}
	return ""
}
