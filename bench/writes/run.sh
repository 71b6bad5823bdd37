#!/usr/bin/env bash
# bench/writes/run.sh (make bench-writes): how many client bytes reach the QLC drive, with and
# without Prism's layout, counted by the kernel. Runs test/ceph's TestBenchWrites (two OSDs on
# identical loop devices of the host's Ceph; see its comment), which records the counters as
# JSON, then bench/writes/report turns them into docs/benchmarks.md's tables and chart.
#
# Needs root (skips otherwise). Installs what it lacks with hack/install-deps.sh bench.
# With a cache (Open CAS cannot run here) the figure is a model: each workload on Prism's layout
# is traced on the QLC device with `prism-agent trace` and replayed through `kubectl prism
# simulate` at BENCH_WRITES_CACHE sizes (percent of the QLC drive).
#
# Environment: BENCH_WRITES_MIB (each 4 KiB workload's budget, default 768, as published),
# BENCH_WRITES_OUT (the counters file, default /var/tmp/prism-bench-writes.json),
# BENCH_WRITES_SVG (the chart, default docs/images/bench-writes.svg), BENCH_WRITES_TRACE=0 (no
# traces, no cache model), BENCH_WRITES_CACHE (default 1%,5%,10%,20%,50%: 50 % is about what the
# planner leaves for a cache on this fast device, 8 GiB less the 3 GiB slot, over a 10 GiB QLC).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."

if [[ $(id -u) -ne 0 ]]; then
	echo "bench-writes: skipped: needs root (loop devices, a Ceph cluster on them)"
	exit 0
fi
out=${BENCH_WRITES_OUT:-/var/tmp/prism-bench-writes.json}
svg=${BENCH_WRITES_SVG:-docs/images/bench-writes.svg}
hack/install-deps.sh bench
trace_env=()
if [[ ${BENCH_WRITES_TRACE:-1} != 0 ]]; then
	bin=$(mktemp -d /var/tmp/prism-bench-writes-bin.XXXXXX)
	trap 'rm -rf "$bin"' EXIT
	go build -o "$bin/prism-agent" ./cmd/agent
	go build -o "$bin/kubectl-prism" ./cmd/kubectl-prism
	trace_env=(PRISM_BENCH_WRITES_TRACE_AGENT="$bin/prism-agent")
	rm -rf "$out.traces"
fi
# The machine is shared: the cluster and its clients run at a lower priority.
start=$(date +%s)
env PRISM_BENCH_WRITES_OUT="$out" PRISM_BENCH_WRITES_MIB="${BENCH_WRITES_MIB:-768}" "${trace_env[@]}" \
	nice -n 10 go test ./test/ceph/ -run '^TestBenchWrites$' -count=1 -timeout 60m -v
echo "bench-writes: recorded $out in $(($(date +%s) - start)) s; uptime: $(uptime)"
mkdir -p "$(dirname "$svg")"
go run ./bench/writes/report -in "$out" -svg "$svg"
if ((${#trace_env[@]})); then
	for f in "$out.traces"/*.json; do
		echo
		echo "== cache model (kubectl prism simulate) of Prism's QLC device, workload $(basename "$f" .json) =="
		nice -n 10 "$bin/kubectl-prism" simulate --trace "$f" --fast-size "${BENCH_WRITES_CACHE:-1%,5%,10%,20%,50%}" --workers 1
	done
fi
