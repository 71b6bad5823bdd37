// Package release names the Prism that upgrade tests start from (test/upgrade, test/helm):
// no release has been tagged, so a fixed earlier commit stands in for it (docs/upgrade.md).
package release

// Previous is main at the end of session 16 ("Merge branch 's16-i35'", 2026-12-06 14:13
// UTC), before session 17 changed the API (HybridStoragePolicy spec.osd.ignoreHealthChecks,
// CEL rules on StorageNode status.caches and status.osds, atomic plan and selector structs)
// and before the operator checked version skew.
const Previous = "bfde0106878b8f4dc59f50ca39ceba59971f245d"

// The versions the binaries are built with (-X main.version): a release each, one minor
// apart, so the operator's skew check (decide.AgentSkew) applies to them.
const (
	PreviousVersion = "v0.1.0"
	CurrentVersion  = "v0.2.0"
)
