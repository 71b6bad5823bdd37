#!/usr/bin/env bash
# bench/footprint/run.sh: the node agent's metrics footprint next to Debian's
# prometheus-node-exporter and a smartctl_exporter-style collector. Results:
# docs/benchmarks.md, "Agent footprint".
#
# Each round starts, on 127.0.0.1, fresh processes of:
#   prism            bench/footprint/agent (what `prism-agent run` does for /metrics, without a
#                    Kubernetes API) on a fixture host root of 24 NVMe drives with recorded SMART
#                    pages; --state-dir with the wear history of an agent that has run 10 days
#                    (it keeps 8); --health-period 4 and --period 20 scrape intervals (the
#                    agent's defaults, 1m and 5m, at a 15 s scrape interval). Built as the
#                    Dockerfile builds prism-agent (CGO_ENABLED=0, -trimpath, -s -w).
#   prism-fresh      the same with an empty history (an agent's first minutes)
#   prism-poll-each  the seeded agent with --health-period = the scrape interval
#   prism-untuned    the seeded agent at Go's default GOGC (100); the three above run with the
#                    GOGC the chart gives the agent (charts/prism/values.yaml, agent.goGC)
#   node_exporter    /usr/bin/prometheus-node-exporter, Debian's package, default collectors
#   smartctl-style   bench/footprint/smartctlstyle: runs `smartctl -j -a` per device on every
#                    scrape, as smartctl_exporter does when its cache has expired; on the
#                    machine's disks when smartctl can read any (repeated up to 24), else on the
#                    24 fixture device files with -d nvme, where smartctl fails at the first
#                    Identify ioctl: process start-up and one ioctl per device, a lower bound
# then scrapes each (curl, gzip, Prometheus's Accept header) every interval and records, per
# process: VmRSS after each scrape (/proc/PID/status), CPU time over the window (utime+stime
# and, for spawned smartctl, cutime+cstime, from /proc/PID/stat; also per-thread
# /proc/PID/task/*/schedstat run time, in ns), bytes written to storage over the window
# (write_bytes, /proc/PID/io), response bytes and scrape latency.
#
# Two phases: "fast" (FOOTPRINT_FAST_*: 5 rounds of 60 scrapes at 1 s) and "real"
# (FOOTPRINT_*: 3 rounds of 20 scrapes at 15 s). Takes about 25 minutes with the defaults.
#
# Environment: FOOTPRINT_PHASES ("fast real"), FOOTPRINT_INTERVAL (15), FOOTPRINT_SCRAPES (20),
# FOOTPRINT_ROUNDS (3), FOOTPRINT_FAST_INTERVAL (1), FOOTPRINT_FAST_SCRAPES (60),
# FOOTPRINT_FAST_ROUNDS (5), FOOTPRINT_WARMUP (scrapes before measuring, 3),
# FOOTPRINT_HARNESS (a prebuilt bench/footprint/agent binary, e.g. of another revision, to
# compare: used instead of building this tree's),
# FOOTPRINT_DEVICES (24), FOOTPRINT_PORT (first of six ports, 19460), FOOTPRINT_TMP
# (/var/tmp), FOOTPRINT_OUT (a directory to keep the raw samples in), FOOTPRINT_AGENT_GOGC
# (the chart's agent.goGC; empty runs every prism process at Go's default and drops
# prism-untuned).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/../.."

PHASES=${FOOTPRINT_PHASES:-fast real}
INTERVAL=${FOOTPRINT_INTERVAL:-15}
SCRAPES=${FOOTPRINT_SCRAPES:-20}
ROUNDS=${FOOTPRINT_ROUNDS:-3}
FAST_INTERVAL=${FOOTPRINT_FAST_INTERVAL:-1}
FAST_SCRAPES=${FOOTPRINT_FAST_SCRAPES:-60}
FAST_ROUNDS=${FOOTPRINT_FAST_ROUNDS:-5}
WARMUP=${FOOTPRINT_WARMUP:-3}
DEVICES=${FOOTPRINT_DEVICES:-24}
PORT=${FOOTPRINT_PORT:-19460}
BASE=${FOOTPRINT_TMP:-/var/tmp}
OUT=${FOOTPRINT_OUT:-}
HARNESS=${FOOTPRINT_HARNESS:-}
SEED_AGE=240h # more than the history keeps (8 days), so the seeded history is full-size
NE=/usr/bin/prometheus-node-exporter
# What Prometheus 2.x sends.
ACCEPT='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
# The agent runs with the chart's GOGC; prism-untuned shows the same agent without it.
AGENT_GOGC=${FOOTPRINT_AGENT_GOGC-$(awk '/^agent:/ {a = 1; next} /^[^ #]/ {a = 0} a && $1 == "goGC:" {print $2; exit}' charts/prism/values.yaml)}
TARGETS=(prism prism-fresh prism-poll-each node_exporter smartctl-style)
PRISMS=(prism prism-fresh prism-poll-each)
if [[ -n $AGENT_GOGC ]]; then
	TARGETS+=(prism-untuned)
	PRISMS+=(prism-untuned)
fi

say() { printf 'footprint: %s\n' "$*" >&2; }
die() { printf 'footprint: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }
for v in INTERVAL SCRAPES ROUNDS FAST_INTERVAL FAST_SCRAPES FAST_ROUNDS WARMUP DEVICES PORT ${AGENT_GOGC:+AGENT_GOGC}; do
	[[ ${!v} =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "FOOTPRINT_$v=${!v}: want a number"
done

# --- tools ---------------------------------------------------------------------------
need=()
[[ -x $NE ]] || need+=(prometheus-node-exporter)
have smartctl || need+=(smartmontools)
have curl || need+=(curl)
have flock || need+=(util-linux)
have jq || need+=(jq)
if ((${#need[@]})); then
	# hack/packages.txt's bench group; it exits 1 when apt fails.
	hack/install-deps.sh bench
	[[ -x $NE ]] && have smartctl && have curl && have flock && have jq || die "needs ${need[*]} (sudo hack/install-deps.sh bench)"
fi
have go || die "needs go to build the harness"
SMARTCTL=$(command -v smartctl)
CLK_TCK=$(getconf CLK_TCK)

# --- one run at a time; everything we start is killed by PID on exit --------------------
exec 9>"$BASE/prism-footprint.lock"
flock -n 9 || die "another bench/footprint/run.sh holds $BASE/prism-footprint.lock"
rm -rf "$BASE"/prism-footprint.??????
tmp=$(mktemp -d "$BASE/prism-footprint.XXXXXX")
declare -A pid=()
cleanup() {
	local rc=$? t
	set +e
	for t in "${!pid[@]}"; do
		kill "${pid[$t]}" 2>/dev/null && wait "${pid[$t]}" 2>/dev/null
	done
	[[ -n $OUT && -d $tmp ]] && mkdir -p "$OUT" && cp "$tmp"/*.tsv "$tmp"/*.log "$OUT"/ 2>/dev/null
	rm -rf "$tmp"
	rm -f "$BASE/prism-footprint.lock"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for ((i = 0; i < ${#TARGETS[@]}; i++)); do
	if (echo >"/dev/tcp/127.0.0.1/$((PORT + i))") 2>/dev/null; then
		die "port $((PORT + i)) is in use; set FOOTPRINT_PORT"
	fi
done

# --- build ---------------------------------------------------------------------------
say "building the harness, the collector and (for its size) prism-agent"
build() { CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$@"; } # as the Dockerfile
if [[ -n $HARNESS ]]; then
	cp "$HARNESS" "$tmp/prism-footprint-agent"
else
	build "$tmp/prism-footprint-agent" ./bench/footprint/agent
fi
build "$tmp/smartctlstyle" ./bench/footprint/smartctlstyle
build "$tmp/prism-agent" ./cmd/agent
"$tmp/prism-footprint-agent" -fixture "$tmp/host" -build -devices "$DEVICES" -repo .

# --- the smartctl-style collector's devices ------------------------------------------
smart_args=()
smart_note=()
cands=$({ "$SMARTCTL" --scan 2>/dev/null | awk '{print $1}'; lsblk -dnpo NAME,TYPE 2>/dev/null | awk '$2 == "disk" {print $1}'; } | awk '!seen[$0]++')
working=()
for d in $cands; do
	rc=0
	out=$("$SMARTCTL" -j -a "$d" 2>/dev/null) || rc=$?
	msg=$(jq -r '[.smartctl.messages[]?.string] | join("; ")' <<<"$out" 2>/dev/null || true)
	smart_note+=("$d: exit $rc${msg:+ ($msg)}")
	((rc & 3)) || working+=("$d")
done
if ((${#working[@]})); then
	smart_mode="machine"
	for ((i = 0; i < DEVICES; i++)); do smart_args+=("${working[i % ${#working[@]}]}"); done
	smart_desc="smartctl -j -a on the machine's readable disks (${working[*]}), repeated to $DEVICES calls per scrape"
else
	smart_mode="fixture"
	smart_args=(-d nvme)
	for ((i = 0; i < DEVICES; i++)); do smart_args+=("$tmp/host/dev/nvme${i}n1"); done
	smart_desc="no disk smartctl can read (${smart_note[*]:-none found}); smartctl -j -a -d nvme on the $DEVICES fixture device files: each call starts smartctl, opens the file and fails at NVMe Identify Controller (ioctl ENOTTY, exit 2)"
fi
say "smartctl-style collector: $smart_desc"

# --- processes -----------------------------------------------------------------------
secs() { awk -v a="$1" -v m="$2" 'BEGIN {printf "%gs", a * m}'; }
port_of() {
	local i
	for i in "${!TARGETS[@]}"; do
		if [[ ${TARGETS[i]} == "$1" ]]; then
			echo $((PORT + i))
			return 0
		fi
	done
	return 1
}
start() { # start TARGET INTERVAL ROUNDDIR
	local t=$1 iv=$2 dir=$3 addr cmd=()
	addr=127.0.0.1:$(port_of "$t")
	case $t in
	prism | prism-fresh | prism-poll-each | prism-untuned)
		mkdir -p "$dir/$t"
		[[ $t == prism-fresh ]] || "$tmp/prism-footprint-agent" -fixture "$tmp/host" -state-dir "$dir/$t" -seed-history "$SEED_AGE"
		local hp
		hp=$(secs "$iv" 4)
		[[ $t == prism-poll-each ]] && hp=$(secs "$iv" 1)
		cmd=("$tmp/prism-footprint-agent" -fixture "$tmp/host" -listen "$addr" -state-dir "$dir/$t" -health-period "$hp" -period "$(secs "$iv" 20)")
		# env execs, so the PID stays the process measured.
		if [[ -n $AGENT_GOGC && $t != prism-untuned ]]; then
			cmd=(env "GOGC=$AGENT_GOGC" "${cmd[@]}")
		else
			cmd=(env -u GOGC "${cmd[@]}")
		fi
		;;
	node_exporter)
		cmd=("$NE" "--web.listen-address=$addr")
		# As Debian's unit runs it: as the prometheus user (setpriv execs, so the PID stays).
		if [[ $(id -u) -eq 0 ]] && id prometheus >/dev/null 2>&1 && have setpriv; then
			cmd=(setpriv --reuid=prometheus --regid=prometheus --init-groups "${cmd[@]}")
		fi
		;;
	smartctl-style)
		cmd=("$tmp/smartctlstyle" -listen "$addr" -smartctl "$SMARTCTL" "${smart_args[@]}")
		;;
	esac
	"${cmd[@]}" >>"$tmp/$t.log" 2>&1 &
	pid[$t]=$!
}
stop_all() {
	local t
	for t in "${!pid[@]}"; do
		kill "${pid[$t]}" 2>/dev/null || true
		wait "${pid[$t]}" 2>/dev/null || true
		unset "pid[$t]"
	done
}
url() { echo "http://127.0.0.1:$(port_of "$1")/metrics"; }
wait_ready() { # the prism targets: until the first poll is in /metrics
	local t=$1 i body
	for ((i = 0; i < 300; i++)); do
		kill -0 "${pid[$t]}" 2>/dev/null || die "$t exited: $(tail -n 5 "$tmp/$t.log")"
		if body=$(curl -fsS --max-time 5 "$(url "$t")" 2>/dev/null); then
			[[ $t != prism* ]] || grep -q '^prism_device_host_written_bytes_total' <<<"$body" && return 0
		fi
		sleep 0.1
	done
	die "$t did not serve metrics within 30 s"
}
# scrape TARGET: "code bytes seconds" (bytes as sent, gzip).
scrape() {
	curl -sS --compressed --max-time 30 -H "Accept: $ACCEPT" -H 'X-Prometheus-Scrape-Timeout-Seconds: 30' \
		-o /dev/null -w '%{http_code} %{size_download} %{time_total}' "$(url "$1")" 2>/dev/null || echo "000 0 0"
}
# rss_kb PID: "VmRSS RssAnon RssFile" in KiB (RssFile: the binary's and libraries' pages).
rss_kb() { awk '/^VmRSS:/ {r = $2} /^RssAnon:/ {a = $2} /^RssFile:/ {f = $2} END {printf "%d\t%d\t%d", r, a, f}' "/proc/$1/status"; }
# cpu PID: "self_ticks child_ticks sched_ns write_bytes" (utime+stime, cutime+cstime,
# schedstat of live threads, bytes the process sent to storage).
cpu() {
	local p=$1 ns=0 f wb
	for f in /proc/"$p"/task/*/schedstat; do
		read -r n _ 2>/dev/null <"$f" && ns=$((ns + n))
	done
	wb=$(awk '$1 == "write_bytes:" {print $2}' "/proc/$p/io")
	sed 's/^.*) //' "/proc/$p/stat" | awk -v ns="$ns" -v wb="${wb:-0}" '{print $12 + $13, $14 + $15, ns, wb}'
}
now_us() { echo "${EPOCHREALTIME/./}"; }

# --- one round -----------------------------------------------------------------------
: >"$tmp/samples.tsv"
: >"$tmp/rounds.tsv"
round() { # round PHASE N INTERVAL SCRAPES
	local phase=$1 n=$2 iv=$3 scrapes=$4 dir t k iv_us t0 next left w0 w1 r
	declare -A c0=()
	dir="$tmp/$phase-$n"
	mkdir -p "$dir"
	for t in "${TARGETS[@]}"; do start "$t" "$iv" "$dir"; done
	for t in "${TARGETS[@]}"; do wait_ready "$t"; done
	iv_us=$(awk -v s="$iv" 'BEGIN {printf "%d", s * 1000000}')
	t0=$(now_us)
	for ((k = -WARMUP; k < scrapes; k++)); do
		if ((k == 0)); then
			w0=$(now_us)
			for t in "${TARGETS[@]}"; do c0[$t]=$(cpu "${pid[$t]}"); done
		fi
		for t in "${TARGETS[@]}"; do
			kill -0 "${pid[$t]}" 2>/dev/null || die "$t exited: $(tail -n 5 "$tmp/$t.log")"
			r=$(scrape "$t")
			((k < 0)) || printf '%s\t%s\t%s\t%d\t%s\t%s\n' "$phase" "$n" "$t" "$k" "$(rss_kb "${pid[$t]}")" "${r// /$'\t'}" >>"$tmp/samples.tsv"
		done
		next=$((t0 + (k + WARMUP + 1) * iv_us))
		left=$((next - $(now_us))) # read the clock once: under load a second reading can be past next
		if ((left > 0)); then sleep "$(awk -v d="$left" 'BEGIN {printf "%.6f", d / 1e6}')"; fi
	done
	w1=$(now_us)
	for t in "${TARGETS[@]}"; do
		read -r s0 ch0 ns0 wb0 <<<"${c0[$t]}"
		read -r s1 ch1 ns1 wb1 < <(cpu "${pid[$t]}")
		# After the window: one uncompressed scrape for the text size and the series count.
		curl -fsS --max-time 30 "$(url "$t")" >"$dir/$t.prom"
		heap=$(awk '$1 == "go_memstats_heap_inuse_bytes" {printf "%d", $2; exit}' "$dir/$t.prom")
		printf '%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.3f\t%d\t%d\t%d\t%d\n' "$phase" "$n" "$t" "$scrapes" $((s1 - s0)) $((ch1 - ch0)) $((ns1 - ns0)) \
			"$(awk -v a="$w0" -v b="$w1" 'BEGIN {print (b - a) / 1e6}')" "$(wc -c <"$dir/$t.prom")" "$(grep -vc '^#' "$dir/$t.prom")" "${heap:-0}" $((wb1 - wb0)) >>"$tmp/rounds.tsv"
	done
	for f in "$dir"/prism/wear-history.{log,json}; do # this tree's log, or an older revision's JSON
		[[ -s $f ]] && echo "$(stat -c %s "$f") ${f##*/}" >"$tmp/history-file"
	done
	stop_all
	rm -rf "$dir"
}

# --- run -----------------------------------------------------------------------------
load0=$(uptime | sed 's/^ *//')
date0=$(date -u '+%Y-%m-%d %H:%M UTC')
for phase in $PHASES; do
	case $phase in
	fast) iv=$FAST_INTERVAL sc=$FAST_SCRAPES rn=$FAST_ROUNDS ;;
	real) iv=$INTERVAL sc=$SCRAPES rn=$ROUNDS ;;
	*) die "unknown phase $phase (want fast, real)" ;;
	esac
	for ((n = 1; n <= rn; n++)); do
		say "phase $phase: round $n/$rn: $WARMUP + $sc scrapes every ${iv}s"
		round "$phase" "$n" "$iv" "$sc"
	done
done
load1=$(uptime | sed 's/^ *//')

# --- report --------------------------------------------------------------------------
# stats PHASE TARGET: rss_med_mib rss_max_mib cpu_ms cpu_self_ms cpu_child_ms sched_ms gz_bytes text_bytes series lat_ms fails window_s heap_mib anon_mib file_mib disk_mib_per_day
stats() {
	awk -F'\t' -v ph="$1" -v tg="$2" -v hz="$CLK_TCK" '
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		FNR == 1 { file++ }
		$1 != ph || $3 != tg { next }
		file == 1 { # samples: phase round target k rss_kb anon_kb file_kb code bytes seconds
			r = $2; ns[r]++; rs[r, ns[r]] = $5; if ($5 > rmax) rmax = $5
			nl++; an[nl] = $6; fl[nl] = $7; lat[nl] = $10 * 1000; gz[nl] = $9; if ($8 != 200) fails++
			rounds[r] = 1
		}
		file == 2 { # rounds: phase round target scrapes self child sched_ns window text series heap write_bytes
			nr++; heap[nr] = $11 / 1048576; wr[nr] = $12 / $8 * 86400 / 1048576; cpu[nr] = ($5 + $6) * 1000 / hz / $4; cs[nr] = $5 * 1000 / hz / $4; cc[nr] = $6 * 1000 / hz / $4
			sc[nr] = $7 / 1e6 / $4; win[nr] = $8; txt[nr] = $9; ser[nr] = $10
		}
		END {
			m = 0; for (r in rounds) { m++; delete one; for (i = 1; i <= ns[r]; i++) one[i] = rs[r, i]; med[m] = median(one, ns[r]) }
			printf "%.1f %.1f %.2f %.2f %.2f %.2f %d %d %d %.1f %d %.1f %.1f %.1f %.1f %.1f\n", median(med, m) / 1024, rmax / 1024, median(cpu, nr), median(cs, nr), median(cc, nr), median(sc, nr), median(gz, nl), median(txt, nr), median(ser, nr), median(lat, nl), fails, median(win, nr), median(heap, nr), median(an, nl) / 1024, median(fl, nl) / 1024, median(wr, nr)
		}' "$tmp/samples.tsv" "$tmp/rounds.tsv"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }

agent_kib=$(($(stat -c %s "$tmp/prism-agent") / 1024))
harness_kib=$(($(stat -c %s "$tmp/prism-footprint-agent") / 1024))
hist_bytes=0 hist_name=none
[[ -s $tmp/history-file ]] && read -r hist_bytes hist_name <"$tmp/history-file"
tuning="every prism process at Go's default GOGC (100)"
[[ -z $AGENT_GOGC ]] || tuning="GOGC=$AGENT_GOGC (the chart's agent.goGC) for prism, prism-fresh and prism-poll-each; prism-untuned at Go's default (100)"
cat <<EOF

== Metrics footprint: Prism agent vs node_exporter vs smartctl-style ==
date:      $date0 (ended $(date -u '+%H:%M UTC'))
machine:   $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), kernel $(uname -r), $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
load:      before: $load0; after: $load1 (uptime)
versions:  Prism $(git describe --tags --always --dirty 2>/dev/null || echo '?') ($(go env GOVERSION)); $("$NE" --version 2>&1 | head -n1); $("$SMARTCTL" --version | head -n1 | cut -d'[' -f1); $(curl --version | head -n1 | cut -d' ' -f1-2)
binaries:  harness $harness_kib KiB, prism-agent $agent_kib KiB
fixture:   $DEVICES NVMe devices cycling the recorded 900P / 660p / 980 PRO / DC P3700 SMART pages
history:   prism's wear history ($hist_name) was $((hist_bytes / 1024)) KiB at the end of a round
smartctl:  ($smart_mode) $smart_desc
tuning:    $tuning
scrapes:   curl --compressed, Prometheus's Accept header; RSS after every scrape; CPU over the measured window (CLK_TCK $CLK_TCK)

EOF
for phase in $PHASES; do
	case $phase in
	fast) iv=$FAST_INTERVAL sc=$FAST_SCRAPES rn=$FAST_ROUNDS ;;
	real) iv=$INTERVAL sc=$SCRAPES rn=$ROUNDS ;;
	esac
	echo "-- phase $phase: $rn rounds x ($WARMUP warm-up + $sc measured) scrapes every ${iv}s; medians over rounds, RSS max over all samples --"
	{
		echo "process|RSS median MiB|RSS max MiB|(anon|file)|Go heap MiB|CPU ms/scrape|(self|children)|schedstat ms/scrape|disk writes MiB/day|gzip bytes|text bytes|series|latency ms|failed|window s"
		for t in "${TARGETS[@]}"; do
			read -r -a s < <(stats "$phase" "$t")
			echo "$t|${s[0]}|${s[1]}|${s[13]}|${s[14]}|${s[12]}|${s[2]}|${s[3]}|${s[4]}|${s[5]}|${s[15]}|${s[6]}|${s[7]}|${s[8]}|${s[9]}|${s[10]}|${s[11]}"
		done
	} | column -t -s '|'
	read -r -a ne < <(stats "$phase" node_exporter)
	for t in "${PRISMS[@]}"; do
		read -r -a p < <(stats "$phase" "$t")
		rss=met cpu=met
		for i in 0 1; do awk -v a="${p[i]}" -v b="${ne[i]}" 'BEGIN {exit !(a > b)}' && rss="NOT met"; done
		awk -v a="${p[2]}" -v b="${ne[2]}" 'BEGIN {exit !(a > b)}' && cpu="NOT met"
		printf '%-16s / node_exporter: RSS median %sx, RSS max %sx, CPU/scrape %sx, gzip bytes %sx, series %sx; target <= node_exporter: RSS (median and max) %s, CPU/scrape %s\n' \
			"$t" "$(ratio "${p[0]}" "${ne[0]}")" "$(ratio "${p[1]}" "${ne[1]}")" "$(ratio "${p[2]}" "${ne[2]}")" "$(ratio "${p[6]}" "${ne[6]}")" "$(ratio "${p[8]}" "${ne[8]}")" "$rss" "$cpu"
	done
	echo
done
echo "raw rounds (phase round target scrapes self_ticks child_ticks sched_ns window_s text_bytes series heap_inuse_bytes write_bytes):"
cat "$tmp/rounds.tsv"
