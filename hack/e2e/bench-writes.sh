# hack/e2e/bench-writes.sh: sourced in the e2e guest (guest-cluster.sh, after the chain suite; or
# as a script of the share's cmd/ in a lingering chain cluster): issue 32's write count on the
# Ceph that Rook runs (Rook v1.20, Ceph 20.2.4), beside `make bench-writes` on the host's Ceph.
#
# The chain leaves osd.0 in Prism's layout: its data on the QLC drive PRISM-E2E-QLC, its BlueFS
# DB on Prism's LV of the fast drive, bluestore_min_alloc_size from the drive's write unit
# (Prism's cephConfig). This adds a QLC drive of the same model (PRISM-E2E-QLC3, hot-added over
# NVMe-oF) to the CephCluster by hand, as a user without Prism would, with no metadataDevice
# and Ceph's default min_alloc_size (set for that OSD's id before Rook's prepare job makes it):
# the QLC-alone layout. Prism's layout is the lowest-numbered OSD of class qlc (Prism's entries
# set it); the others of that class (the hot-added drive's) move to another device class, so
# that each layout's pool, size 1, maps to exactly one OSD. Then the same workload on each pool, one
# after the other, between two readings of the kernel's write counters
# (/sys/block/<dev>/stat) of the OSD's QLC drive and of its DB volume, each taken once the
# devices have gone quiet, and of Prism's per-OSD table of the OSD (prism-agent osds in the
# agent's pod: each class's bytes written during the run). The counters go to $out/bench-writes/counters.json in
# bench/writes.Counters' format (the host turns them into the tables: go run
# ./bench/writes/report -in FILE).
#
# Uses guest-cluster.sh's k, ceph_op, mark, wait_for and $out. BENCH_WRITES_MIB: the
# workload's byte budget (default 64: each op writes 4 KiB of object data and a 4 KiB omap value).

bw_dir=$out/bench-writes
mkdir -p "$bw_dir"
bw_mib=${BENCH_WRITES_MIB:-64}
bw_alone_serial=PRISM-E2E-QLC3
bw_alone_path=/dev/disk/by-id/nvme-INTEL_SSDPF2NV307TZ_$bw_alone_serial

# bw_written DEV: the kernel's sectors written to /dev/DEV, in bytes.
bw_written() { awk '{print $7 * 512}' "/sys/block/$1/stat"; }

# bw_quiet DEV...: wait until none of the devices was written for 5 s (at most 5 min): the
# compactions and deferred writes a run started are counted in its own figures.
bw_quiet() {
  local t0=$SECONDS before now d
  before=$(for d in "$@"; do bw_written "$d"; done)
  while ((SECONDS - t0 < 300)); do
    sleep 5
    now=$(for d in "$@"; do bw_written "$d"; done)
    [[ $now == "$before" ]] && return 0
    before=$now
  done
  mark "bench-writes: $* still written after 300 s; read anyway"
}

# bw_meta ID KEY: a field of `ceph osd metadata ID`.
bw_meta() {
  ceph_op osd metadata "$1" -f json | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$2"
}

# bw_osd_table ID FILE: Prism's per-OSD table of osd.ID now, read by the agent's own code
# (prism-agent osds in the agent's pod, every OSD socket of the node), into FILE as JSON.
bw_osd_table() {
  local all=$2.all
  # It exits 1 when another OSD of the node did not answer every command; only osd.ID's
  # reading counts here, and the script below refuses it if it is absent or incomplete.
  k -n prism-system exec ds/prism-agent -c agent -- /prism-agent osds --host-root /host -o json >"$all" 2>>"$bw_dir/osds.err"
  python3 - "$1" "$all" >"$2" <<'PY' || fail "bench-writes: osd.$1's reading from the agent ($all; $(tail -2 "$bw_dir/osds.err"))"
import json, sys
osd = [t for t in json.load(open(sys.argv[2])) if t["id"] == int(sys.argv[1])]
if len(osd) != 1 or osd[0].get("errors"):
    sys.exit("osd.%s: %s" % (sys.argv[1], osd[0].get("errors") if osd else "absent"))
print(json.dumps(osd[0]))
PY
}

# bw_kernel_name PATH: /dev/dm-0 -> dm-0.
bw_kernel_name() { basename "$(readlink -f "$1")"; }

# bw_rook_scale N: Rook's operator at N replicas, and once N is 0 its pod gone (so no reconcile
# of it is under way), once N is 1 its deployment Available.
bw_rook_scale() {
  k -n rook-ceph scale deploy/rook-ceph-operator --replicas="$1" >>"$bw_dir/setup.log" 2>&1 ||
    fail "bench-writes: scale Rook's operator to $1 ($(tail -1 "$bw_dir/setup.log"))"
  if [[ $1 == 0 ]]; then
    bw_rook_gone() { local pods; pods=$(k -n rook-ceph get pods -l app=rook-ceph-operator -o name) && [[ -z $pods ]]; }
    wait_for "$E2E_TIMEOUT" "bench-writes: Rook's operator stopped" bw_rook_gone
  else
    wait_for "$E2E_TIMEOUT" "bench-writes: Rook's operator running" condition rook-ceph deploy/rook-ceph-operator Available
  fi
  mark "bench-writes: Rook's operator at $1 replicas"
}

# bw_withdraw_policies: every HybridStoragePolicy deleted (the chain's suite deletes its own;
# a run of part of it leaves it), and Prism's entry gone from the CephCluster: the deletion's
# finalizer withdraws it before the policy goes.
bw_withdraw_policies() {
  k delete hybridstoragepolicies --all --wait=false >>"$bw_dir/setup.log" 2>&1 ||
    fail "bench-writes: delete the policies ($(tail -1 "$bw_dir/setup.log"))"
  # (A failed read is not an answer: each get must succeed.)
  bw_withdrawn() {
    local policies nodes
    policies=$(k get hybridstoragepolicies -o name) && [[ -z $policies ]] &&
      nodes=$(k -n rook-ceph get cephcluster e2e -o jsonpath='{.spec.storage.nodes[*].name}') &&
      ! grep -qw prism-guest <<<"$nodes"
  }
  wait_for "$E2E_TIMEOUT" "bench-writes: the policies deleted, Prism's entry withdrawn" bw_withdrawn
}

bw_setup() {
  local next
  # Ceph's default min_alloc_size for the OSD Rook will make next, over Prism's osd section.
  next=$(ceph_op osd ls | sort -n | tail -1)
  next=$((next + 1))
  bw_alone_id=$next
  ceph_op config set "osd.$next" bluestore_min_alloc_size 4096 || fail "bench-writes: config set osd.$next"
  echo "sparse:30725971992576 $bw_alone_serial INTEL SSDPF2NV307TZ" >/etc/prism-e2e-nvmet-bench.txt
  prism-nvmet-loop /etc/prism-e2e-nvmet-bench.txt >>"$bw_dir/nvmet.txt" 2>>"$logs/nvmet.log" ||
    fail "bench-writes: prism-nvmet-loop ($(tail -2 "$logs/nvmet.log"))"
  udevadm settle --timeout=60
  [[ -e $bw_alone_path ]] || fail "bench-writes: no $bw_alone_path"
  # Rook's operator stopped while Prism withdraws its entry and the user adds theirs: each change
  # of the CephCluster costs Rook a whole reconcile (about 20 min under TCG, each ceph call
  # 25-60 s), and started again it reconciles both at once. What it then makes is the same.
  bw_rook_scale 0
  bw_withdraw_policies
  # The user's own entry, without Prism: the drive alone, its own device class.
  # (Prism withdrew its entry with the policy: the list is empty, or absent.)
  local entry path=/spec/storage/nodes/-
  entry="{\"name\":\"prism-guest\",\"devices\":[{\"name\":\"$bw_alone_path\",\"config\":{\"deviceClass\":\"qlcalone\"}}]}"
  local nodes
  nodes=$(k -n rook-ceph get cephcluster e2e -o jsonpath='{.spec.storage.nodes}') || fail "bench-writes: get the CephCluster"
  if [[ -z $nodes || $nodes == "[]" ]]; then
    path=/spec/storage/nodes entry="[$entry]"
  fi
  k -n rook-ceph patch cephcluster e2e --type=json -p "[{\"op\":\"add\",\"path\":\"$path\",\"value\":$entry}]" \
    >>"$bw_dir/setup.log" 2>&1 || fail "bench-writes: patch the CephCluster ($(tail -1 "$bw_dir/setup.log"))"
  bw_rook_scale 1
  # Ceph is asked only once Rook's pod of that OSD runs: a kubectl costs far less than the ceph
  # CLI (25-60 s of the emulated CPUs each) that Rook's own reconcile is waiting on too.
  bw_alone_up() {
    [[ $(k -n rook-ceph get pods -l "ceph-osd-id=$bw_alone_id" -o jsonpath='{.items[*].status.phase}') == *Running* ]] &&
      ceph_op osd dump -f json | python3 -c 'import json,sys; sys.exit(0 if any(o["osd"] == int(sys.argv[1]) and o["up"] == 1 for o in json.load(sys.stdin)["osds"]) else 1)' "$bw_alone_id"
  }
  # Rook's restarted operator started the prepare job 39 min after its start, and the OSD was up
  # about 15 min later (2026-12-07, each ceph call about 60 s): 2700 s was too short.
  wait_for "$((6 * E2E_TIMEOUT))" "bench-writes: osd.$bw_alone_id (QLC alone) up" bw_alone_up
  # One OSD per layout: Prism's, the lowest of class qlc; the others leave the class.
  local ids id
  ids=$(ceph_op osd crush class ls-osd qlc | sort -n) || fail "bench-writes: the OSDs of class qlc"
  bw_prism_id=$(head -1 <<<"$ids")
  [[ $bw_prism_id =~ ^[0-9]+$ ]] || fail "bench-writes: no OSD of class qlc ($ids)"
  for id in $(tail -n +2 <<<"$ids"); do
    ceph_op osd crush rm-device-class "osd.$id" && ceph_op osd crush set-device-class spare "osd.$id" || fail "bench-writes: osd.$id's class"
  done
  local layout cls pool
  for layout in prism:qlc alone:qlcalone; do
    cls=${layout#*:}
    pool=bench-${layout%%:*}
    ceph_op osd crush rule create-replicated "bench-$cls" default osd "$cls" &&
      ceph_op osd pool create "$pool" 8 8 replicated "bench-$cls" &&
      ceph_op osd pool application enable "$pool" bench ||
      fail "bench-writes: pool $pool"
    # Size 1 (the e2e's osd_pool_default_size): one copy, on the layout's one OSD.
    [[ $(ceph_op osd pool get "$pool" size) == "size: 1" ]] || fail "bench-writes: $pool: $(ceph_op osd pool get "$pool" size 2>&1)"
  done
  ceph_op osd tree >"$bw_dir/osd-tree.txt" 2>&1
  ceph_op pg ls-by-pool bench-prism >"$bw_dir/pgs-prism.txt" 2>&1
  ceph_op pg ls-by-pool bench-alone >"$bw_dir/pgs-alone.txt" 2>&1
  for id in "$bw_prism_id" "$bw_alone_id"; do ceph_op osd metadata "$id" -f json-pretty >"$bw_dir/osd-$id-metadata.json" 2>&1; done
}

# bw_detached CMD...: CMD in Rook's operator pod, detached from the exec that starts it, then
# polled with short execs; its output on stdout, its exit status returned (at most 30 min). A
# rados bench held in one kubectl exec lost its stream after 64 s under TCG ("next reader: ...
# i/o timeout", 2026-12-07): the websocket's ping went unanswered while the host was loaded.
bw_detached() {
  local t0=$SECONDS rc
  printf '%s\n' '#!/bin/sh' 'rm -f /tmp/bw.rc; "$@" >/tmp/bw.log 2>&1; echo $? >/tmp/bw.rc' |
    k -n rook-ceph exec -i deploy/rook-ceph-operator -- sh -c 'cat >/tmp/bw-run.sh' || return 1
  k -n rook-ceph exec deploy/rook-ceph-operator -- \
    sh -c 'rm -f /tmp/bw.rc /tmp/bw.log; nohup sh /tmp/bw-run.sh "$@" </dev/null >/dev/null 2>&1 &' sh "$@" || return 1
  until k -n rook-ceph exec deploy/rook-ceph-operator -- test -e /tmp/bw.rc 2>/dev/null; do
    ((SECONDS - t0 < 1800)) || { echo "bw_detached: $1 still running after 1800 s"; return 1; }
    sleep 30 # each look is a kubectl exec: under TCG seconds of the CPUs the workload runs on
  done
  k -n rook-ceph exec deploy/rook-ceph-operator -- cat /tmp/bw.log
  rc=$(k -n rook-ceph exec deploy/rook-ceph-operator -- cat /tmp/bw.rc) || return 1
  [[ $rc =~ ^[0-9]+$ ]] || { echo "bw_detached: exit status '$rc'"; return 1; }
  return "$rc"
}

# bw_run LAYOUT POOL OSD: the workload on POOL (one OSD), its counters as one JSON line.
bw_run() {
  local layout=$1 pool=$2 id=$3 qlc fast="" objects q0 q1 f0=0 f1=0 t0 secs log
  qlc=$(bw_meta "$id" bluestore_bdev_devices)
  [[ $(bw_meta "$id" bluefs_dedicated_db) == 1 ]] && fast=$(bw_kernel_name "$(bw_meta "$id" bluefs_db_dev_node)")
  [[ -n $qlc && -e /sys/block/$qlc/stat ]] || fail "bench-writes: osd.$id's QLC device ($qlc)"
  objects=$((bw_mib * 1024 * 1024 / (2 * 4096)))
  bw_quiet "$qlc" $fast
  bw_osd_table "$id" "$bw_dir/$layout-table-before.json"
  q0=$(bw_written "$qlc")
  [[ -z $fast ]] || f0=$(bw_written "$fast")
  t0=$(date +%s.%N)
  log=$bw_dir/$layout.log
  bw_detached rados -c /var/lib/rook/rook-ceph/rook-ceph.config \
    -k /var/lib/rook/rook-ceph/client.admin.keyring -p "$pool" bench 3600 write -b 4096 -t 16 \
    --max-objects "$objects" --write-object --write-omap --no-cleanup --run-name omap >"$log" 2>&1 ||
    fail "bench-writes: rados bench on $pool ($(tail -2 "$log"))"
  bw_quiet "$qlc" $fast
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
  q1=$(bw_written "$qlc")
  [[ -z $fast ]] || f1=$(bw_written "$fast")
  bw_osd_table "$id" "$bw_dir/$layout-table-after.json"
  # rados bench counts the object writes; each also wrote its omap value of the same size.
  local ops
  ops=$(awk '/^Total writes made:/ {print $4}' "$log")
  [[ $ops =~ ^[0-9]+$ ]] || fail "bench-writes: no 'Total writes made' in $log"
  mark "bench-writes: $layout: $ops ops, QLC $qlc +$((q1 - q0)) B, fast ${fast:--} +$((f1 - f0)) B, $secs s"
  python3 - "$layout" "$((2 * ops * 4096))" "$((f1 - f0))" "$((q1 - q0))" "$secs" "$(cut -d' ' -f1-3 /proc/loadavg)" \
    "$bw_dir/$layout-table-before.json" "$bw_dir/$layout-table-after.json" <<'PY' >>"$bw_dir/runs.jsonl"
import json, sys
layout, client, fast, qlc, secs, load, before, after = sys.argv[1:]
# Each class: what it holds after the run and what it wrote during it (the table's counters
# since the OSD started, after minus before; a level absent before had written nothing).
was = {r["class"]: r["writtenBytes"] for r in json.load(open(before))["classes"] if "writtenBytes" in r}
classes = []
for r in json.load(open(after))["classes"]:
    c = {"class": r["class"]}
    if r.get("breakdown"):
        c["breakdown"] = True
    if "occupiedBytes" in r:
        c["occupiedBytes"] = r["occupiedBytes"]
    if "writtenBytes" in r and r["writtenBytes"] >= was.get(r["class"], 0):
        c["writtenBytes"] = r["writtenBytes"] - was.get(r["class"], 0)
    classes.append(c)
print(json.dumps({
    "workload": "RADOS 4 KiB objects + 4 KiB omap (RGW-like)",
    "layout": layout,
    "command": "rados bench 3600 write -b 4096 -t 16 --max-objects N --write-object --write-omap",
    "clientBytes": int(client), "fastBytes": int(fast), "qlcBytes": int(qlc),
    "seconds": float(secs), "load": load, "classes": classes,
}))
PY
}

bw_counters() {
  python3 - "$bw_dir" "$bw_mib" "$bw_prism_id" "$bw_alone_id" <<'PY' >"$bw_dir/counters.json"
import json, os, platform, sys, time
d, mib, prism, alone = sys.argv[1:]
runs = [json.loads(l) for l in open(os.path.join(d, "runs.jsonl"))]
meta = {i: json.load(open(os.path.join(d, "osd-%s-metadata.json" % i))) for i in (prism, alone)}
def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])
print(json.dumps({
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(os.path.join(d, "osd-tree.txt")))),
    "machine": {"where": "the e2e guest: QEMU TCG, 2 vCPUs on the host's 2 cores", "kernel": platform.release(),
                "cpu": meta[prism].get("cpu", ""), "memory": meta[prism].get("mem_total_kb", "") + " kB", "load after": load()},
    "versions": {"ceph": meta[prism].get("ceph_version", ""), "rook": os.environ.get("BENCH_WRITES_ROOK", "v1.20 (the chain's operator)")},
    "settings": {
        "budget": "%s MiB of client writes per layout" % mib,
        "devices": "NVMe-oF namespaces over sparse files on the guest's tmpfs: QLC drives INTEL SSDPF2NV307TZ 30.72 TB, fast drive INTEL SSDPF21Q400GB 400 GB",
        "db prism": "osd.%s: dedicated %s, %s bytes, %s (Prism's LV)" % (prism, meta[prism].get("bluefs_dedicated_db"), meta[prism].get("bluefs_db_size"), meta[prism].get("bluefs_db_dev_node")),
        "db qlc-alone": "osd.%s: dedicated %s" % (alone, meta[alone].get("bluefs_dedicated_db")),
        "min_alloc_size prism": meta[prism].get("bluestore_min_alloc_size", ""),
        "min_alloc_size qlc-alone": meta[alone].get("bluestore_min_alloc_size", ""),
        "rocksdb": "Ceph 20.2.4's defaults on both OSDs",
    },
    "runs": runs,
}, indent=2))
PY
}

bench_writes() {
  mark "bench-writes: start (budget $bw_mib MiB per layout)"
  : >"$bw_dir/runs.jsonl"
  bw_setup
  bw_run qlc-alone bench-alone "$bw_alone_id"
  bw_run prism bench-prism "$bw_prism_id"
  bw_counters || fail "bench-writes: counters.json"
  mark "bench-writes: done ($bw_dir/counters.json)"
}
