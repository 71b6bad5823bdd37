// Package cache runs the Open CAS cache on a fast device's cache partition: a pure decision
// (Decide) from what Prism wants (Desired) and what casadm reports (Observed), and a thin
// runner (Reconcile) that reads the state through the host executor, decides, runs the steps
// and reads again until nothing is left to do. It imitates internal/node/provision.
//
// The cache: Open CAS started on the cache partition by its stable path, with the policy's
// mode and line size; each QLC data device added as a core, whose exported object
// /dev/cas<cache>-<core> is what Rook must build the OSD on; the runtime parameters and the
// IO classes of the ClassificationPolicy loaded; and the whole persisted in
// /etc/opencas/opencas.conf (plus the IO class file it names) so the host's open-cas service
// brings it back at boot.
//
// Safety rules, all enforced by Decide:
//   - A new cache is started with --force only on a partition scanned and found without any
//     signature and with zeros in its first and last MiB (or with what Prism's own start, cut
//     short, left there: Runner.IntentDir). A partition carrying Open CAS metadata is loaded (-S -l), never
//     re-initialised; one carrying anything else is refused. Without a scan nothing starts.
//   - Leaving write-back or write-only flushes first (-Q ... -f yes).
//   - A core is removed only after its dirty data is flushed (-F -j, then -R without -f); a
//     cache is stopped only with its flush (-T without -n). Dirty data that cannot be
//     flushed (an inactive core) is dropped only when AllowDirtyDataLoss says so.
//   - A cache whose device reports errors is failed: Decide reports it, reports its cores as
//     serviced in pass-through, and plans no step at all.
//   - Every step is safe to repeat from the state a crash after any earlier step leaves:
//     Decide, run on that state, continues where the last run stopped; on the state the
//     steps produce it plans nothing.
//
// Metrics: Stats reads the per-class statistics, Alpha and Beta compute the write-absorption
// figures from them.
package opencas
