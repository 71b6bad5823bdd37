package rook

import "strings"

// Health check codes the replacement gate reads (decision 0046). Ceph names its checks in
// docs/rados/operations/health-checks; modules and daemons may raise others.
var (
	// blockingChecks say data is unavailable, damaged, lost or out of space: re-creating an OSD
	// (its backfill) never starts while one is raised, and the policy cannot ignore them.
	blockingChecks = map[string]bool{
		"PG_AVAILABILITY": true, "PG_DAMAGED": true, "PG_RECOVERY_FULL": true, "PG_BACKFILL_FULL": true,
		"PG_DEGRADED_FULL": true, "OBJECT_UNFOUND": true, "OSD_SCRUB_ERRORS": true, "OSD_TOO_MANY_REPAIRS": true,
		"OSD_FULL": true, "OSD_BACKFILLFULL": true, "POOL_FULL": true, "OSD_OUT_OF_ORDER_FULL": true,
	}
	// harmlessChecks say nothing about whether the replaced OSD's data is still needed: they
	// describe configuration, other daemons, or the failure being repaired itself (its OSDs down,
	// their PGs degraded or misplaced), which safe-to-destroy and the PG states already judge.
	harmlessChecks = map[string]bool{
		"OSD_DOWN": true, "PG_DEGRADED": true, "OBJECT_MISPLACED": true, "SLOW_OPS": true,
		"POOL_NO_REDUNDANCY": true, "OSDMAP_FLAGS": true, "OSD_FLAGS": true, "MON_CLOCK_SKEW": true,
		"MON_DISK_LOW": true, "MON_MSGR2_NOT_ENABLED": true, "RECENT_CRASH": true, "RECENT_MGR_MODULE_CRASH": true,
		"MGR_MODULE_ERROR": true, "MGR_MODULE_DEPENDENCY": true, "AUTH_INSECURE_GLOBAL_ID_RECLAIM": true,
		"AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED": true, "PG_NOT_SCRUBBED": true, "PG_NOT_DEEP_SCRUBBED": true,
		"POOL_APP_NOT_ENABLED": true, "TOO_FEW_PGS": true, "TOO_MANY_PGS": true, "POOL_TOO_FEW_PGS": true,
		"POOL_TOO_MANY_PGS": true, "LARGE_OMAP_OBJECTS": true, "BLUEFS_SPILLOVER": true,
		"BLUESTORE_NO_PER_POOL_OMAP": true, "BLUESTORE_NO_PER_PG_OMAP": true, "DEVICE_HEALTH": true,
		"TELEMETRY_CHANGED": true,
	}
)

// checkBlocks is "" when the check does not hold a re-created OSD back, else why it does.
// Muted checks never do, blocking ones included: a mute is Ceph's own "known, leave it", seen by
// every admin and possibly timed, and the PG states and safe-to-destroy still judge the data.
// The policy's ignore list covers every code but the blocking ones; an unknown code holds, as
// the gate cannot tell whether it is about data.
func checkBlocks(c HealthCheck, ignore []string) string {
	switch {
	case c.Muted:
		return ""
	case blockingChecks[c.Code]:
		return c.named() + " makes data unavailable or at risk"
	case harmlessChecks[c.Code] || crushSubtreeDown(c.Code):
		return ""
	}
	for _, code := range ignore {
		if code == c.Code {
			return ""
		}
	}
	return c.named() + " is a check Prism does not know; add it to the policy's spec.osd.ignoreHealthChecks if it says nothing about data"
}

// crushSubtreeDown: OSD_HOST_DOWN, OSD_RACK_DOWN, ... (every OSD under a CRUSH bucket down),
// the failure being repaired when the fast device held every OSD of its host.
func crushSubtreeDown(code string) bool {
	return strings.HasPrefix(code, "OSD_") && strings.HasSuffix(code, "_DOWN") && code != "OSD_DOWN"
}

// named is the check's code and, when the probe kept it (decision 0058), its summary.
func (c HealthCheck) named() string {
	if c.Summary == "" {
		return c.Code
	}
	return c.Code + " (" + c.Summary + ")"
}
