#!/usr/bin/env bash
# bench/plan.sh [BASE] [ROUNDS]: the planner's Go benchmarks (internal/plan/bench_test.go) of
# BASE (default main) and of this tree, run alternately ROUNDS times (default 7) in one go, so
# that both figures come from the same machine in the same minutes. BASE is built with this
# tree's benchmark files, so both sides measure the same thing. Prints one line per
# benchmark and round: ROUND SIDE name iterations ns/op cpu-ns/op B/op allocs/op.
set -euo pipefail
base=${1:-main}
rounds=${2:-7}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach -q "$tmp/base" "$base"
cp "$root"/internal/plan/bench_test.go "$root"/internal/plan/cputime_*_test.go "$tmp/base/internal/plan/"
(cd "$tmp/base" && go test -c -o "$tmp/base.test" ./internal/plan/)
(cd "$root" && go test -c -o "$tmp/this.test" ./internal/plan/)
echo "# $(date -u) $(getconf _NPROCESSORS_ONLN) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); base $(git -C "$root" rev-parse --short "$base"), this $(git -C "$root" describe --always --dirty)"
for r in $(seq "$rounds"); do
	for side in base this; do
		"$tmp/$side.test" -test.run '^$' -test.bench . -test.benchmem | sed -n "s/^Benchmark/$r $side Benchmark/p"
	done
done
echo "# $(date -u) load $(cut -d' ' -f1-3 /proc/loadavg)"
