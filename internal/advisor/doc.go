// Package advisor is the PRISM advisor: it turns a window of per-class cache statistics from
// every node of a ClassificationPolicy into recommendations (which classes to pin, with what
// allocation, which to demote) that keep the most writes off the capacity (QLC) devices
// within the cache size. It is pure: no clock, no client, no host.
//
// The model (docs/cache.md, section Advisor, states it with its assumptions):
//
//   - Over a window, class i on cache c wrote W bytes to the exported objects and held a mean
//     of O bytes of cache. Its write invalidation is β = W ÷ O: how many times over it rewrote
//     the space it holds.
//   - A class kept in a write-back cache reaches the capacity device about k·O times per
//     window (k write-backs of each byte it holds, k = 1 by default) instead of W, so caching
//     it saves W − k·O: (β − k) bytes per byte of cache. A class with β < 1 saves nothing;
//     caching it only delays the same write to QLC.
//   - So cache space is best spent on the highest β first: the classes are pinned greedily
//     by β within a pin budget, each with an allocation covering its largest share of any
//     cache plus headroom.
//   - α_model = Σ over pinned classes and caches of min(1, a·C ÷ O)·max(0, W − k·O) ÷ Σ W,
//     where a is the class's allocation and C the cache size. The expected gain is
//     α_model(recommended) − α_model(as the nodes run now); unpinned classes are not credited.
//   - A class that fills its allocation on some cache holds less than its footprint, so its
//     β is overstated: the advisor does not newly pin such a class (it keeps growing the
//     allocation of a pinned one), which also keeps a demoted class from coming back pinned.
//
// Window builds the window from cumulative counters (Tracker keeps the observations);
// Advise recommends; Effective and NodeConfig give the classes the nodes load.
package advisor
