#!/usr/bin/env bash
# bench/writes/run.sh (make bench-writes): how many client bytes reach the QLC drive, with and
# without Prism's layout, counted by the kernel. Runs test/ceph's TestBenchWrites (two OSDs on
# identical loop devices of the host's Ceph; see its comment), which records the counters as
# JSON, then bench/writes/report turns them into docs/benchmarks.md's tables and chart.
#
# Needs root (skips otherwise). Installs what it lacks with hack/install-deps.sh bench.
# Environment: BENCH_WRITES_MIB (each 4 KiB workload's budget, default 256),
# BENCH_WRITES_OUT (the counters file, default /var/tmp/prism-bench-writes.json),
# BENCH_WRITES_SVG (the chart, default docs/img/bench-writes.svg).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."

if [[ $(id -u) -ne 0 ]]; then
	echo "bench-writes: skipped: needs root (loop devices, a Ceph cluster on them)"
	exit 0
fi
out=${BENCH_WRITES_OUT:-/var/tmp/prism-bench-writes.json}
svg=${BENCH_WRITES_SVG:-docs/img/bench-writes.svg}
hack/install-deps.sh bench
# The machine is shared: the cluster and its clients run at a lower priority.
start=$(date +%s)
PRISM_BENCH_WRITES_OUT=$out PRISM_BENCH_WRITES_MIB=${BENCH_WRITES_MIB:-256} \
	nice -n 10 go test ./test/ceph/ -run '^TestBenchWrites$' -count=1 -timeout 60m -v
echo "bench-writes: recorded $out in $(($(date +%s) - start)) s; uptime: $(uptime)"
mkdir -p "$(dirname "$svg")"
go run ./bench/writes/report -in "$out" -svg "$svg"
