#!/usr/bin/env bash
# bench/run.sh: times `prism-agent inventory` against `lsblk --json -O` and
# `ceph-volume inventory --format json` on 8 loop devices (6 GiB sparse files: one ext4,
# one empty GPT, six blank), alone (hyperfine) and in alternating pairs whose CPU and wall
# ratios hold while the load drifts (bench/pairtime), then profiles prism-agent. Results:
# docs/benchmarks.md.
#
# Needs root (skips otherwise). Installs what it lacks with hack/install-deps.sh bench. Cleans up its loop
# devices and files on any exit; a run killed with SIGKILL is cleaned up by the next one.
#
# Environment: BENCH_RUNS (timed runs per tool, default 20, at least 10), BENCH_WARMUP
# (default 2), BENCH_PROFILE=0 to skip the profile, BENCH_TMP (default /var/tmp),
# BENCH_TIMER=loop to time with a bash $EPOCHREALTIME loop instead of hyperfine.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

RUNS=${BENCH_RUNS:-20}
WARMUP=${BENCH_WARMUP:-2}
PROFILE=${BENCH_PROFILE:-1}
BASE=${BENCH_TMP:-/var/tmp}
NLOOPS=8
SIZE=6G
AGENT=bin/prism-agent

if (( RUNS < 10 || WARMUP < 2 )); then
	echo "bench: BENCH_RUNS must be >= 10 and BENCH_WARMUP >= 2" >&2
	exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "bench: skipped: needs root to attach loop devices and read block devices"
	exit 0
fi

say() { printf 'bench: %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }

# --- tools ---------------------------------------------------------------------------
apt_updated=false
apt_install() { # apt_install PKG...: true when installed
	have apt-get || return 1
	local a=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@")
	"${a[@]}" >/dev/null 2>&1 && return 0
	$apt_updated && return 1
	apt_updated=true
	apt-get update -qq >/dev/null 2>&1 || true
	"${a[@]}" >/dev/null 2>&1
}
candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}'; }

# lsblk, losetup, sgdisk, mkfs.ext4, jq, flock, hyperfine, strace, ceph-volume; libblkid-dev
# for an agent built as the image builds it (hack/packages.txt).
hack/install-deps.sh bench build
cv_note=""
if ! have ceph-volume; then
	# Debian has no package named ceph-volume: bookworm ships /usr/sbin/ceph-volume in ceph-osd.
	if [[ -z $(candidate ceph-volume) || $(candidate ceph-volume) == "(none)" ]]; then
		$apt_updated || { apt_updated=true; apt-get update -qq >/dev/null 2>&1 || true; }
	fi
	if [[ -n $(candidate ceph-volume) && $(candidate ceph-volume) != "(none)" ]]; then
		say "installing ceph-volume"
		apt_install ceph-volume || true
	else
		say "no Debian package named ceph-volume; installing ceph-osd, which ships /usr/sbin/ceph-volume"
		apt_install ceph-osd || true
	fi
fi
if have ceph-volume; then
	cv_pkg=$(dpkg -S "$(readlink -f "$(command -v ceph-volume)")" 2>/dev/null | cut -d: -f1 | head -n1 || true)
	cv_version="${cv_pkg:-?} $(dpkg-query -W -f '${Version}' "${cv_pkg:-ceph-osd}" 2>/dev/null || echo '?')"
else
	cv_note="ceph-volume could not be installed: benchmarked without it"
	cv_version="not installed"
	say "$cv_note"
fi

# --- prism-agent (rebuilt when a source is newer than the binary), as the image builds it ---
if [[ ! -x $AGENT ]] || [[ -n $(find cmd internal api go.mod go.sum hack/build-agent.sh -newer "$AGENT" \( -name '*.go' -o -name '*.csv' -o -name 'go.*' -o -name '*.sh' \) -print -quit) ]]; then
	say "building $AGENT"
	LDFLAGS="-X main.version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)" hack/build-agent.sh "$AGENT"
fi
if go version -m "$AGENT" 2>/dev/null | grep -q -- '-tags=.*libblkid'; then
	probe="libblkid in process (static)"
	prof_tags=(-tags libblkid) # bench/inventoryprof as the agent: libblkid in process
else
	probe="a wipefs child (built without libblkid)"
	prof_tags=()
fi

# --- one run at a time; clean up after a run that was killed ------------------------
exec 9>"$BASE/prism-bench.lock"
flock -n 9 || { echo "bench: another bench/run.sh holds $BASE/prism-bench.lock" >&2; exit 1; }
while read -r dev file; do
	if [[ $file =~ /prism-bench\.[A-Za-z0-9]+/loop[0-9]+\.img ]]; then
		say "detaching $dev left by an earlier run ($file)"
		losetup -d "$dev" || true
	fi
done < <(losetup --list --noheadings --raw --output NAME,BACK-FILE 2>/dev/null || true)
rm -rf "$BASE"/prism-bench.??????

tmp=""
loops=()
child=""
# bg CMD...: runs CMD in the background and waits, so INT/TERM reach the trap at once.
bg() {
	local rc=0
	"$@" &
	child=$!
	wait "$child" || rc=$?
	child=""
	return "$rc"
}
cleanup() {
	local rc=$?
	set +e
	if [[ -n $child ]]; then
		kill "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	for dev in "${loops[@]}"; do
		# Detach only what still points at our file: never someone else's loop device.
		if [[ -n $tmp && $(losetup --list --noheadings --raw --output BACK-FILE "$dev" 2>/dev/null) == "$tmp"/* ]]; then
			losetup -d "$dev" || echo "bench: could not detach $dev" >&2
		fi
	done
	[[ -n $tmp ]] && rm -rf "$tmp"
	rm -f "$BASE/prism-bench.lock"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d "$BASE/prism-bench.XXXXXX")

# --- loop devices --------------------------------------------------------------------
for ((i = 0; i < NLOOPS; i++)); do
	truncate -s "$SIZE" "$tmp/loop$i.img"
	# --partscan also drops partitions a previous user of this loop number left in sysfs.
	loops+=("$(losetup --find --show --partscan "$tmp/loop$i.img")")
	rot=/sys/block/${loops[i]#/dev/}/queue/rotational
	if ! { [[ -w $rot ]] && echo 0 >"$rot"; } 2>/dev/null; then
		say "note: $rot is not writable; ${loops[i]} stays rotational=$(cat "$rot")"
	fi
done
mkfs.ext4 -q -F "${loops[0]}"
sgdisk -o "${loops[1]}" >/dev/null
if [[ -S /run/udev/control ]] && have udevadm; then
	udevadm settle --timeout=30 || true
	udev="running"
else
	udev="not running (no /run/udev): no udev database, no /dev/disk/by-id"
fi
ours=$(printf '%s\n' "${loops[@]}" | jq -R . | jq -cs .)
readahead=$(cat "/sys/block/${loops[0]#/dev/}/queue/read_ahead_kb" 2>/dev/null || echo "?")
say "loop devices: ${loops[*]} (ext4 on ${loops[0]}, empty GPT on ${loops[1]}); udev $udev"
# loops_read_kib: KiB the kernel has read from our loop devices so far (sectors read in
# /sys/block/<loop>/stat), readahead included.
loops_read_kib() {
	local dev sum=0
	for dev in "${loops[@]}"; do
		sum=$((sum + $(awk '{print $3}' "/sys/block/${dev#/dev/}/stat")))
	done
	echo $((sum / 2))
}

# --- what each tool reports ----------------------------------------------------------
export CEPH_VOLUME_ALLOW_LOOP_DEVICES=true
agent_cmd=("$AGENT" inventory --include-loop --no-identify -o json)
lsblk_cmd=(lsblk --json -O)
cv_cmd=(ceph-volume inventory --format json)

"${agent_cmd[@]}" >"$tmp/agent.json"
agent_seen=$(jq --argjson o "$ours" '"\(.devices | length) devices, \([.devices[] | select(.path as $p | $o | index($p))] | length) of our 8 loops, \([.devices[] | select(.eligibility.eligible)] | length) eligible"' -r "$tmp/agent.json")
# shellcheck disable=SC2016 # $o and $p are jq variables
others='[.[] | select(.path as $p | $o | index($p) | not) | .name] | join(",")'
agent_others=$(jq -r --argjson o "$ours" ".devices | $others" "$tmp/agent.json")
agent_sigs=$(jq -r --argjson o "$ours" '[.devices[] | select((.path as $p | $o | index($p)) and (.signatures // [] | length > 0)) | "\(.name): \([.signatures[].name] | join(","))"] | join("; ")' "$tmp/agent.json")
"${lsblk_cmd[@]}" >"$tmp/lsblk.json"
lsblk_seen=$(jq -r --argjson o "$ours" '"\(.blockdevices | length) devices, \([.blockdevices[] | select(.path as $p | $o | index($p))] | length) of our 8 loops"' "$tmp/lsblk.json")
lsblk_others=$(jq -r --argjson o "$ours" ".blockdevices | $others" "$tmp/lsblk.json")
lsblk_sigs=$(jq -r --argjson o "$ours" '[.blockdevices[] | select((.path as $p | $o | index($p)) and (.fstype != null or .pttype != null)) | "\(.name): \(.fstype // .pttype)"] | join("; ")' "$tmp/lsblk.json")
cv_seen="-"
cv_ok=false
if have ceph-volume; then
	if "${cv_cmd[@]}" >"$tmp/cv.json" 2>"$tmp/cv.err" && jq -e 'type == "array"' "$tmp/cv.json" >/dev/null; then
		cv_ok=true
		cv_loops=$(jq --argjson o "$ours" '[.[] | select(.path as $p | $o | index($p))] | length' "$tmp/cv.json")
		cv_seen=$(jq -r --argjson o "$ours" '"\(length) devices, \([.[] | select(.path as $p | $o | index($p))] | length) of our 8 loops, \([.[] | select(.available)] | length) available"' "$tmp/cv.json")
		cv_others=$(jq -r --argjson o "$ours" "[.[] | .name = (.path | ltrimstr(\"/dev/\"))] | $others" "$tmp/cv.json")
		cv_why=$(jq -r --argjson o "$ours" '[.[] | select((.path as $p | $o | index($p)) and (.available | not)) | "\(.path): \(.rejected_reasons | join(", "))"] | join("; ")' "$tmp/cv.json")
		cv_noenv=$(env -u CEPH_VOLUME_ALLOW_LOOP_DEVICES "${cv_cmd[@]}" 2>/dev/null | jq --argjson o "$ours" '[.[] | select(.path as $p | $o | index($p))] | length' 2>/dev/null || echo "?")
		if [[ $cv_loops == 0 ]]; then
			cv_note="ceph-volume listed none of the loop devices even with CEPH_VOLUME_ALLOW_LOOP_DEVICES=true: its time covers only the other disks"
		fi
	else
		cv_note="ceph-volume inventory failed: $(tail -n 3 "$tmp/cv.err" | tr '\n' ' ')"
	fi
fi

# --- timing --------------------------------------------------------------------------
use_hyperfine=false
[[ ${BENCH_TIMER:-hyperfine} == hyperfine ]] && have hyperfine && use_hyperfine=true
# time_cmd NAME CMD...: writes the wall time of each timed run, in ms, to $tmp/NAME.ms.
time_cmd() {
	local name=$1 i s e
	shift
	if $use_hyperfine; then
		# ceph-volume fails now and then when another user's loop device goes away during
		# its run; its timing still counts.
		local ignore=()
		[[ $name == cv ]] && ignore=(--ignore-failure)
		if ! bg hyperfine -N "${ignore[@]}" --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$tmp/$name.hf.json" -- "$*" >/dev/null 2>"$tmp/$name.hf.err"; then
			cat "$tmp/$name.hf.err" >&2
			return 1
		fi
		jq -r '.results[0].times[] * 1000' "$tmp/$name.hf.json" >"$tmp/$name.ms"
	else
		for ((i = 0; i < WARMUP; i++)); do "$@" >/dev/null 2>&1; done
		: >"$tmp/$name.ms"
		for ((i = 0; i < RUNS; i++)); do
			s=$EPOCHREALTIME
			"$@" >/dev/null 2>&1
			e=$EPOCHREALTIME
			echo $((${e/./} - ${s/./})) | awk '{print $1 / 1000}' >>"$tmp/$name.ms"
		done
	fi
}
# stats NAME: "median min max" in ms.
stats() { sort -g "$tmp/$1.ms" | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f %.2f\n", m, v[1], v[NR]}'; }

# shellcheck disable=SC2016
timer=$($use_hyperfine && echo "hyperfine $(hyperfine --version | awk '{print $2}') -N" || echo 'bash $EPOCHREALTIME loop')
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
say "timing: $WARMUP warm-ups + $RUNS runs per tool with $timer"
time_cmd agent "${agent_cmd[@]}"
time_cmd lsblk "${lsblk_cmd[@]}"
time_cmd startup "$AGENT" version
$cv_ok && time_cmd cv "${cv_cmd[@]}"

# paired: prism-agent and the other tool one after the other (bench/pairtime: A B A B ...),
# wall and CPU time (user+system of the process and its children, from wait4) of each run,
# and the median of the per-pair ratios: on a shared machine whose load drifts during the
# run, a pair sees the same load, two separate series do not.
go build -o "$tmp/pairtime" ./bench/pairtime
pairtime() { # pairtime NAME N A B: bench/pairtime's table to $tmp/NAME.pair
	bg "$tmp/pairtime" -n "$2" -warmup "$WARMUP" -ignore-failure -a "$3" -b "$4" >"$tmp/$1.pair"
}
# pair_field NAME ROW: "median min" of a ratio row of pairtime's table ("A/B cpu" or "A/B wall").
pair_field() { awk -v row="$2" 'index($0, row " ") == 1 && $(NF - 3) == "median" {print $(NF - 2), $NF}' "$tmp/$1.pair" | tr -d 'xms' | head -n 1; }
pairtime pair "$RUNS" "${agent_cmd[*]}" "${lsblk_cmd[*]}"
pairtime pairv "$RUNS" "$AGENT version" "${lsblk_cmd[*]}"
# The libblkid probe the inventory runs, alone: the same argv (our 8 loops), cold.
wipefs_cmd="wipefs --no-act --json ${loops[*]}"
pairtime pairw "$RUNS" "$wipefs_cmd" "${lsblk_cmd[*]}"
# lsblk reads no device; lsblk and then that wipefs is what a script needs for the same answer.
pairtime pairlw "$RUNS" "${agent_cmd[*]}" "${lsblk_cmd[*]} ; $wipefs_cmd"
$cv_ok && pairtime paircv 5 "${agent_cmd[*]}" "${cv_cmd[*]}"
read -r p_med p_min < <(pair_field pair "A/B wall")
read -r pc_med pc_min < <(pair_field pair "A/B cpu")

read -r a_med a_min a_max < <(stats agent)
read -r l_med l_min l_max < <(stats lsblk)
read -r s_med s_min s_max < <(stats startup)
if $cv_ok; then read -r c_med c_min c_max < <(stats cv); else c_med="-" c_min="-" c_max="-"; fi

cat <<EOF

== Inventory: prism-agent vs lsblk vs ceph-volume ==
date:     $(date -u)
machine:  $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), kernel $(uname -r), $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
versions: prism-agent $("$AGENT" version) (libblkid's probe: $probe), $(lsblk --version), ceph-volume from $cv_version, Go $(go env GOVERSION 2>/dev/null || echo ?)
devices:  $NLOOPS loop devices of $SIZE (sparse files in $BASE), rotational=0, read_ahead_kb=$readahead; udev $udev
timing:   $timer, $WARMUP warm-ups + $RUNS runs each, output discarded
load:     $load_before before timing, $(cut -d' ' -f1-3 /proc/loadavg) after (1/5/15-minute load averages)

EOF
{
	echo "tool|command|median ms|min ms|max ms|what it reported"
	echo "prism-agent|${agent_cmd[*]}|$a_med|$a_min|$a_max|$agent_seen"
	echo "lsblk|${lsblk_cmd[*]}|$l_med|$l_min|$l_max|$lsblk_seen"
	echo "ceph-volume|CEPH_VOLUME_ALLOW_LOOP_DEVICES=true ${cv_cmd[*]}|$c_med|$c_min|$c_max|$cv_seen"
	echo "(start-up only)|$AGENT version|$s_med|$s_min|$s_max|-"
} | column -t -s '|'
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a / b}'; }
echo "prism-agent / lsblk:        $(ratio "$a_med" "$l_med")x"
if $cv_ok; then
	cv_ratio=$(ratio "$c_med" "$a_med")
	echo "ceph-volume / prism-agent:  ${cv_ratio}x"
fi
echo
echo "paired (bench/pairtime, A B A B ...; wall, and CPU = user+system of the process and its children):"
cat "$tmp/pair.pair"
echo
echo "against lsblk and then libblkid's probe of our loops:"
grep -E '^(B:|A/B)' "$tmp/pairlw.pair"
echo
echo "components (paired with lsblk):"
grep -E '^(A:|A/B)' "$tmp/pairv.pair"
grep -E '^(A:|A/B)' "$tmp/pairw.pair"
if $cv_ok; then
	echo
	cat "$tmp/paircv.pair"
fi
echo
target() { if awk -v r="$1" 'BEGIN {exit !(r <= 2)}'; then echo "MET"; else echo "NOT MET"; fi; }
echo "target prism-agent within 2x of lsblk (median of paired ratios): CPU $(target "$pc_med") (${pc_med}x, min ${pc_min}x), wall $(target "$p_med") (${p_med}x, min ${p_min}x)"
if $cv_ok; then
	if awk -v r="$cv_ratio" 'BEGIN {exit !(r >= 50)}'; then t2="MET"; else t2="NOT MET"; fi
	echo "target >= 50x faster than ceph-volume inventory: $t2 (${cv_ratio}x, medians of the separate series; paired: $(pair_field paircv "A/B wall" | awk '{printf "%.1fx", 1 / $1}'))"
else
	echo "target >= 50x faster than ceph-volume inventory: not measured"
fi
echo
echo "devices besides our loops: prism-agent: ${agent_others:-none}; lsblk: ${lsblk_others:-none}; ceph-volume: ${cv_others:--}"
echo "signatures on our loops: prism-agent: ${agent_sigs:-none}; lsblk: ${lsblk_sigs:-none}"
if $cv_ok; then
	echo "ceph-volume lists $cv_noenv of our loops without CEPH_VOLUME_ALLOW_LOOP_DEVICES, $cv_loops with it"
	echo "ceph-volume rejected: ${cv_why:-none}"
fi
[[ -z $cv_note ]] || echo "note: $cv_note"

# --- profile -------------------------------------------------------------------------
[[ $PROFILE == 0 ]] && exit 0
echo
echo "== Profile =="
before_kib=$(loops_read_kib)
"${agent_cmd[@]}" >/dev/null
echo "one prism-agent inventory: the kernel read $(($(loops_read_kib) - before_kib)) KiB from our $NLOOPS loop devices (readahead included)"
if have strace; then
	# trace_summary NAME CMD...: processes started, device nodes opened, bytes read.
	trace_summary() {
		local name=$1
		shift
		strace -f -qq -o "$tmp/$name.trace" -e trace=execve,openat,read,pread64 "$@" >/dev/null 2>&1 || true
		awk -v name="$name" '
			/ execve\(/ && !/= -1/ {exec++; split($0, q, "\""); n = split(q[2], p, "/"); cmd[p[n]]++}
			/ openat\(.*"\/dev\/(loop|vd|sd|nvme)[^"]*"/ && !/= -1/ {dev++}
			/ (read\(|pread64\(|<\.\.\. (read|pread64) resumed>)/ { if (match($0, /= [0-9]+$/)) bytes += substr($0, RSTART + 2) }
			END {
				printf "%-12s %4d execve, %4d opens of /dev/{loop,vd,sd,nvme}*, %9.1f KiB returned by read/pread64\n", name, exec, dev, bytes / 1024
				if (exec > 1) { printf "%-12s programs run:", ""; for (c in cmd) printf " %s x%d", c, cmd[c]; print "" }
			}
		' "$tmp/$name.trace"
	}
	trace_summary prism-agent "${agent_cmd[@]}"
	trace_summary lsblk "${lsblk_cmd[@]}"
	$cv_ok && trace_summary ceph-volume "${cv_cmd[@]}"
	echo
	echo "strace -c -f prism-agent inventory (top syscalls by time):"
	strace -c -f -o "$tmp/agent.strace-c" "${agent_cmd[@]}" >/dev/null 2>&1 || true
	head -n 14 "$tmp/agent.strace-c"
	echo
fi
inits=$(GODEBUG=inittrace=1 "$AGENT" version 2>&1 >/dev/null | awk '/^init / {n++; ms += $5} END {printf "%d packages, %.1f ms", n, ms}')
echo "prism-agent package initialisation (GODEBUG=inittrace=1, summed): $inits"
if have go; then
	go build "${prof_tags[@]}" -o "$tmp/inventoryprof" ./bench/inventoryprof
	time_cmd once "$tmp/inventoryprof" -once
	read -r o_med o_min o_max < <(stats once)
	echo "same inventory from a binary linking only internal/node/inventory (bench/inventoryprof -once): median $o_med ms, min $o_min, max $o_max"
	inits=$(GODEBUG=inittrace=1 "$tmp/inventoryprof" -n 1 2>&1 >/dev/null | awk '/^init / {n++; ms += $5} END {printf "%d packages, %.1f ms", n, ms}')
	echo "its package initialisation: $inits"
	"$tmp/inventoryprof" -n 200 -cpuprofile "$tmp/cpu.pprof"
	echo "CPU profile of 200 in-process inventories (cumulative, top 30):"
	go tool pprof -top -cum -nodecount=30 "$tmp/inventoryprof" "$tmp/cpu.pprof" 2>/dev/null | sed -n '/flat%/,$p' || true
	echo
	echo "Go benchmarks (go test -bench . -benchmem -run '^\$' ./internal/host/signature/ ./internal/node/inventory/):"
	go test -bench . -benchmem -run '^$' ./internal/host/signature/ ./internal/node/inventory/ | grep -E '^(Benchmark|cpu:)' || true
fi
