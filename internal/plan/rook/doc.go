// Package rook is everything Prism gives Rook, and the one place that makes it
// (docs/decisions/0038-rook-in-one-package.md): the CephCluster's storage.nodes entries of node
// plans (entries.go), their DB slots as logical volumes (dbvolumes.go), the claims, local
// volumes and storageClassDeviceSets of OSDs on caches (claims.go, names.go, volumes.go,
// devicesets.go), replacement pacing (replace.go), the Ceph versions that lose a partition DB
// (cephversion.go), and Decide: from one observation, everything Prism applies to Rook for one
// policy (which entries are dropped, kept, gated; cephConfig; annotations; device sets and
// volumes) and the RookConfigured outcome. It is pure: the controller observes (the
// CephCluster, the StorageNodes' readiness, the volumes), calls Decide through
// internal/plan/decide, and applies what comes back. internal/plan plans nodes and knows
// nothing of Rook; only this package, internal/plan/decide, the operator and the plugin import
// it (test/layout).
package rook
