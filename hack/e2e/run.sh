#!/usr/bin/env bash
# The e2e guest cluster (issue 17 items 2 and 3): builds or reuses every piece, boots the forky
# guest in QEMU (TCG) and runs hack/e2e/guest-cluster.sh in it.
#
#   hack/e2e/run.sh node        # node Ready, a pod from an imported OCI archive, in-cluster API access
#   hack/e2e/run.sh rook-chart  # node, then Rook's chart with helm and a CephCluster its CRD
#                               # accepts; the operator's image is not written, so it never runs
#   hack/e2e/run.sh rook        # node, then Rook's Helm chart and the real operator (v1.20.2):
#                               # a mon quorum, the mgr, an OSD on a second emulated NVMe drive
#   hack/e2e/run.sh prism       # rook-chart, then Prism: its image (make images) imported, the
#                               # e2e suite (test/e2e, compiled here) run in the guest: helm
#                               # install of charts/prism, inventory of an Optane and a QLC drive
#                               # (NVMe-oF models over emulated disks), DryRun, Apply, partitions,
#                               # the CephCluster entries, metrics, a QLC drive hot-added, the
#                               # policy deleted
#   hack/e2e/run.sh chain       # the whole chain: prism with the real operator (as rook), so the
#                               # suite also asserts from Ceph: Rook's prepare job, the OSD up
#                               # with its BlueFS DB on Prism's partition, a new OSD for the
#                               # hot-added drive with no OSD restarted, OSDs kept after the
#                               # policy is deleted (drives: NVMe-oF over sparse files)
#
# Pieces, each cached (~/.cache/prism): the forky guest (PRISM_GUEST_SUITE=forky
# hack/guest/build.sh), etcd and the Kubernetes binaries (hack/envtest-bins.sh --with-controllers
# --with-node --with-kubectl), for rook the rook and helm binaries and Rook's chart
# (hack/e2e/rook-bins.sh), and the test images (OCI archives written by hack/e2e/ociarchive).
# Host-to-guest traffic is the 9p share (binaries, images, results) and the serial console.
#
# Env: PRISM_E2E_KEEP=1 keeps the work directory (disk images, results); PRISM_E2E_OUT=DIR
# copies the results (marks.txt, logs/, state/) there; E2E_TIMEOUT (seconds per wait in the
# guest, 900; 1800 on two nodes); PRISM_E2E_MEM (guest memory, 8G; chain 12G); PRISM_E2E_WORKDISK=FILE: the work disk
# (vm/disk-e2e-work.qcow2) an earlier run kept, whose containerd already holds the images: this
# run's work disk is a qcow2 overlay on it (FILE is only read), the guest keeps its containerd and
# imports only images whose digest it lacks, and starts etcd, the kubelet and Rook's data anew
# (a node rebooted into a new cluster). Without it the host makes that disk itself
# (hack/e2e/workdisk.sh: the guest's own containerd imports every archive natively, cached by
# guest build and image digests; decision 0053), so the guest imports nothing;
# PRISM_E2E_HOST_IMPORT=0 leaves the disk empty and the guest imports as before; PRISM_E2E_HAND=DIR (prism or chain): DIR goes into the
# guest as /opt/e2e/hand, and its run.sh is sourced in place of the suite, for a check by hand
# with pieces this repository does not hold (docs/e2e.md); PRISM_E2E_LINGER=SECONDS keeps the
# finished stage's cluster up that long, running each script put in the share's cmd/
# ($work/share/cmd/NAME.sh, output in $work/share/out/cmd/NAME.out; guest-cluster.sh linger);
# PRISM_E2E_CEPHSQLITE_DEBUG=LEVEL: the mgr's debug_cephsqlite; PRISM_E2E_CEPHSQLITE_LOCK_TIMEOUT=MS:
# the mgr's cephsqlite_lock_renewal_timeout (decision 0051; unset: Ceph's 30000);
# PRISM_E2E_BENCH_WRITES_MIB=N (chain): after the suite, the same RGW-like workload of N MiB on
# a QLC drive alone and on Prism's OSD, counted by the kernel (hack/e2e/bench-writes.sh);
# PRISM_E2E_SUITE_LABELS=FILTER (prism or chain): only the suite's specs that Ginkgo's label filter
# FILTER selects (e.g. reboot-before: from the chart up to the agent's per-OSD table, then the
# write count without the 80 min of the rest); not with the reboot or the upgrade drill, which
# choose their own;
# PRISM_E2E_DRILLS=1 (chain only): the failure drills after the hot-add spec
# (test/e2e/replacedisk_test.go: a third QLC drive, a pool of recorded objects, a drive that
# dies, docs/runbooks/replace-data-disk.md run as written, a new drive in the freed slot), with
# their drives and a longer guest and suite limit;
# PRISM_E2E_UPGRADE_FROM=COMMIT: the upgrade drill in place of the suite (below; docs/upgrade.md).
# PRISM_E2E_REBOOT=1 (prism): the
# reboot drill (issue 30 item 3c): the guest runs the suite up to the Rook entry, records the
# node and powers off; QEMU boots it again on the same disks, NVMe controllers in the reverse
# order, and the suite compares (hack/e2e/guest-cluster.sh E2E_REBOOT, test/e2e/reboot_test.go).
# PRISM_E2E_NODES=2 (node or chain; make e2e-two-nodes; never booted yet): a second guest joins
# as node prism-guest-2 with its own drives (other serials), the two linked point to point over
# UDP on the host's loopback (hack/guest/run.sh --link), node 2's credentials handed over in a
# second 9p share (work/xfer); PRISM_E2E_MEM2 is node 2's memory (6G), node 1's then 10G
# unless PRISM_E2E_MEM says otherwise; each wait, the suite's limit and the guest's are doubled
# (docs/decisions/0054-two-nodes-in-the-e2e.md).
# Importing the Rook/Ceph image
# in the guest was the slowest step under TCG (about 25 min here); on the host it takes about
# 2 min, once per guest build and image (docs/e2e.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
stage=${1:-node}
[[ $stage =~ ^(node|rook-chart|rook|prism|chain)$ ]] || { echo "usage: $0 node|rook-chart|rook|prism|chain" >&2; exit 2; }
drills=${PRISM_E2E_DRILLS:-}
[[ -z $drills || ($drills == 1 && $stage == chain) ]] || { echo "PRISM_E2E_DRILLS=1 runs with the chain stage only (Rook's operator)" >&2; exit 2; }
# What each stage has: the real operator (its image), Prism (its image, chart and suite).
operator="" prism=""
[[ $stage != rook && $stage != chain ]] || operator=1
[[ $stage != prism && $stage != chain ]] || prism=1
log() { echo "e2e: $*" >&2; }
# PRISM_E2E_UPGRADE_FROM=COMMIT (prism or chain): the suite runs the upgrade drill alone
# (test/e2e/upgrade_test.go): COMMIT's image and chart (hack/e2e/previous-release.sh) built as
# old_release, this tree as new_release (test/support/release's versions).
old_release=v0.1.0 new_release=v0.2.0 upgrade_from=""
[[ -z ${PRISM_E2E_UPGRADE_FROM:-} || -n $prism ]] || { log "PRISM_E2E_UPGRADE_FROM: stage prism or chain"; exit 2; }
reboot=${PRISM_E2E_REBOOT:-}
suite_labels=${PRISM_E2E_SUITE_LABELS:-}
[[ -z $suite_labels || (-n $prism && -z $reboot${PRISM_E2E_UPGRADE_FROM:-}) ]] ||
  { log "PRISM_E2E_SUITE_LABELS: stage prism or chain, without the reboot or the upgrade drill"; exit 2; }
nodes=${PRISM_E2E_NODES:-1}
[[ $nodes == 1 || ($nodes == 2 && ($stage == node || $stage == chain)) ]] ||
  { log "PRISM_E2E_NODES=$nodes: 1, or 2 with stage node or chain"; exit 2; }
# The write count (PRISM_E2E_BENCH_WRITES_MIB) reads one node's drives and takes the lowest OSD
# of class qlc for Prism's: not on two nodes, whose time limit has no room for it either.
[[ $nodes == 1 || -z $reboot$drills${PRISM_E2E_UPGRADE_FROM:-}${PRISM_E2E_HAND:-}${PRISM_E2E_BENCH_WRITES_MIB:-} ]] ||
  { log "PRISM_E2E_NODES=2: not with the reboot drill, the failure drills, the upgrade drill, PRISM_E2E_HAND or PRISM_E2E_BENCH_WRITES_MIB"; exit 2; }
# wait_seconds NODES: E2E_TIMEOUT, the guest's and the suite's limit for each wait: 900 s unless
# set, 1800 s on two nodes (each TCG guest at half the speed of a lone one; the guest's limit and
# the suite's are doubled too).
wait_seconds() {
  if [[ $1 == 2 ]]; then echo "${E2E_TIMEOUT:-1800}"; else echo "${E2E_TIMEOUT:-900}"; fi
}
# node_mac N: node N's NIC (a fixed, locally administered address: the guest finds its NIC by it).
node_mac() { printf '52:54:00:e2:e0:%02x\n' "$1"; }
# link_ports SEED: two UDP ports on 127.0.0.1 for the link, node 1's then node 2's, from SEED
# (this script's pid): two runs at once take other ports.
link_ports() { echo "$((40000 + ($1 % 10000) * 2)) $((40001 + ($1 % 10000) * 2))"; }
# node_env N: the lines of node N's env file that make it one of two nodes.
node_env() { printf '%s\n' E2E_NODES=2 "E2E_NODE=$1" "E2E_NIC_MAC=$(node_mac "$1")"; }
# node2_env FILE: node 2's env file from node 1's (FILE, node_env 1 at its end).
node2_env() { sed '/^E2E_NODES=/,$d' "$1"; node_env 2; }
# guest_link_args N PORT1 PORT2 XFER: hack/guest/run.sh's arguments for node N's link (node
# 1 bound to PORT1 and sending to PORT2, node 2 the reverse) and the hand-over share, one a line.
guest_link_args() {
  local ports="$2:$3"
  [[ $1 == 1 ]] || ports="$3:$2"
  printf '%s\n' --share-tag "prism-xfer=$4" --link "$ports" --mac "$(node_mac "$1")"
}
# watch_node2 PID FILE: FILE once node 2's hack/guest/run.sh (PID) has ended. Node 1's waits for
# node 2 stop at that (guest-cluster.sh peer_gone), instead of E2E_TIMEOUT after a node 2 that
# crashed, hit its limit or whose QEMU did not start.
watch_node2() {
  while kill -0 "$1" 2>/dev/null; do sleep 5; done
  touch "$2"
}
# node2_drives FAST QLC: node 2's fabric drives (prism-nvmet-loop's lines), sparse files as the
# chain's, with other serials than node 1's.
node2_drives() {
  printf '%s\n' "sparse:$1 PRISM-E2E2-FAST INTEL SSDPF21Q400GB" "sparse:$2 PRISM-E2E2-QLC INTEL SSDPF2NV307TZ"
}
# chain: its drives are sparse files on the guest's tmpfs, gone at a reboot.
[[ -z $reboot || $stage == prism ]] || { log "PRISM_E2E_REBOOT: stage prism only"; exit 2; }
# image_ref INDEX_JSON: NAME@DIGEST of an OCI archive's one manifest, from its index.json,
# compact (hack/e2e/ociarchive) or indented (hack/images, `make images`).
image_ref() {
  local name digest
  name=$(sed -n 's/.*"io.containerd.image.name": *"\([^"]*\)".*/\1/p' <<<"$1" | head -1)
  digest=$(sed -n 's/.*"digest": *"\(sha256:[0-9a-f]*\)".*/\1/p' <<<"$1" | head -1)
  [[ -n $name && -n $digest ]] && echo "$name@$digest"
}
[[ $(id -u) -eq 0 ]] || { log "needs root (the guest build and QEMU)"; exit 3; }
t_all=$SECONDS
declare -A took
step() { took[$1]=$2; log "$1: $2 s"; }

cache="${PRISM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism}"
t0=$SECONDS
guest=$(PRISM_GUEST_SUITE=forky "$repo/hack/guest/build.sh")
step guest-build $((SECONDS - t0))
t0=$SECONDS
assets=$("$repo/hack/envtest-bins.sh" --with-controllers --with-node --with-kubectl)
step k8s-bins $((SECONDS - t0))
rookdir="" rook_version=""
if [[ $stage != node ]]; then
  t0=$SECONDS
  chart_only=()
  [[ -n $operator ]] || chart_only=(--chart-only)
  rookdir=$("$here/rook-bins.sh" "${chart_only[@]}")
  rook_version=$(basename "$rookdir" | sed -n 's/^rook-\([0-9.]*\)-.*/\1/p')
  step rook-bins $((SECONDS - t0))
fi

work=$(mktemp -d /var/tmp/prism-e2e.XXXXXX)
cleanup() {
  # Node 2's guest (PRISM_E2E_NODES=2), if this script ends before it does.
  [[ -z ${node2:-} ]] || kill "$node2" ${watcher:-} 2>/dev/null || true
  if [[ -n ${PRISM_E2E_KEEP:-} ]]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
share="$work/share"
log "work directory $work"
mkdir -p "$share/cmd" "$share/bin" "$share/images" "$work/overlay/etc" "$work/overlay/prism" "$work/overlay/opt/e2e"

# Binaries go through the share (not the initramfs: less guest RAM).
t0=$SECONDS
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
  ln "$assets/$b" "$share/bin/$b" 2>/dev/null || cp "$assets/$b" "$share/bin/$b"
done
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$share/bin/pki" ./hack/e2e/pki &&
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/sleep" ./hack/e2e/sleep &&
  go build -o "$work/ociarchive" ./hack/e2e/ociarchive)

# Images, as OCI archives, cached by what goes in them.
imgcache="$cache/e2e/images"
mkdir -p "$imgcache"
sleep_tar="$imgcache/sleep-$(sha256sum "$work/sleep" | cut -c1-16).tar"
[[ -f $sleep_tar ]] || "$work/ociarchive" -o "$sleep_tar" -name prism.local/e2e/sleep:v1 \
  -file "$work/sleep:/sleep:0755" -entrypoint /sleep >&2
ln "$sleep_tar" "$share/images/sleep.tar" 2>/dev/null || cp "$sleep_tar" "$share/images/sleep.tar"
rook_image=""
if [[ $stage != node ]]; then
  # The image the chart names: with the operator, written below; for rook-chart and prism it
  # is not (no rook binary), so the operator pod waits.
  ceph_ver=$(awk '$1 == "ceph-mon" {print $2}' "$guest/versions.txt")
  rook_image="prism.local/e2e/rook-ceph:v$rook_version-ceph-${ceph_ver%%+*}"
  cp "$rookdir/helm" "$share/bin/helm"
  cp -r "$rookdir/rook-ceph" "$work/overlay/opt/e2e/rook-ceph"
  # The csi.ceph.io CRDs, without the CSI operator (hack/e2e/crds says why).
  (cd "$repo" && go run ./hack/e2e/crds -group csi.ceph.io) <"$rookdir/csi-operator.yaml" >"$work/overlay/opt/e2e/csi-crds.yaml"
fi
if [[ -n $operator ]]; then
  # One image for the operator and the Ceph daemons: the guest's own root (forky's Ceph
  # packages, as the guest has them) plus the rook binary, as Rook's image is Ceph's plus rook.
  # Without the node's own runtime (containerd, ctr, runc, the CNI plugins: 200 MiB that no
  # pod runs): importing is the slowest step under TCG (about 0.7 MB/s here).
  # Entrypoint rook, as Rook's image has: the chart's operator Deployment gives only args
  # (ceph operator); every Ceph daemon's pod names its own command.
  key=$( (cat "$guest/candidates.txt" "$rookdir/rook"; echo entrypoint=/usr/local/bin/rook no-runtime) | sha256sum | cut -c1-16)
  rook_tar="$imgcache/rook-ceph-$key.tar"
  if [[ ! -f $rook_tar ]]; then
    log "writing $rook_image from $guest/base.cpio and rook"
    "$work/ociarchive" -o "$rook_tar" -name "$rook_image" -cpio "$guest/base.cpio" \
      -exclude dev/ -exclude init -exclude prism/ -exclude usr/lib/modules/ \
      -exclude usr/bin/containerd -exclude usr/bin/ctr -exclude usr/lib/containerd/ \
      -exclude usr/sbin/runc -exclude usr/lib/cni/ \
      -file "$rookdir/rook:/usr/local/bin/rook:0755" -entrypoint /usr/local/bin/rook >&2
  fi
  ln "$rook_tar" "$share/images/rook-ceph.tar" 2>/dev/null || cp "$rook_tar" "$share/images/rook-ceph.tar"
fi
if [[ -n $prism ]]; then
  # Prism's image as `make images` builds it (the chart's default repository:tag), the chart,
  # and the e2e suite compiled here (static) for the guest to run against its apiserver.
  # The upgrade drill builds this tree as a release (test/support/release.CurrentVersion), so
  # that the operator's version-skew check runs against the previous release's agent.
  prism_tar=$(env ${PRISM_E2E_UPGRADE_FROM:+VERSION=$new_release} "$repo/hack/images/build.sh")
  ln "$prism_tar" "$share/images/prism.tar" 2>/dev/null || cp "$prism_tar" "$share/images/prism.tar"
  # The Prometheus the suite deploys to scrape the agents (Debian's, pinned in prometheus.lock).
  prometheus_tar=$("$here/prometheus-image.sh" "$work/ociarchive")
  ln "$prometheus_tar" "$share/images/prometheus.tar" 2>/dev/null || cp "$prometheus_tar" "$share/images/prometheus.tar"
  if [[ -n ${PRISM_E2E_UPGRADE_FROM:-} ]]; then
    # The previous release's image (renamed: both charts name the same one) and chart.
    prev=$("$here/previous-release.sh" "$PRISM_E2E_UPGRADE_FROM" "$old_release")
    ln "$prev/prism.tar" "$share/images/prism-previous.tar" 2>/dev/null || cp "$prev/prism.tar" "$share/images/prism-previous.tar"
    cp -r "$prev/prism" "$work/overlay/opt/e2e/prism-previous"
    upgrade_from=$(cat "$prev/commit")
  fi
  (cd "$repo" && CGO_ENABLED=0 go test -c -vet=off -trimpath -o "$share/bin/prism-e2e.test" ./test/e2e)
  cp -r "$repo/charts/prism" "$work/overlay/opt/e2e/prism"
  cp "$here/bench-writes.sh" "$work/overlay/opt/e2e/bench-writes.sh"
  # README's install section, as a user follows it: the kubectl plugin it builds, its sample.
  (cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$share/bin/kubectl-prism" ./cmd/kubectl-prism)
  cp -r "$repo/config/samples" "$work/overlay/opt/e2e/samples"
  # The drives the suite pairs: NVMe-oF gives them real models (hack/guest/nvmet-loop.sh);
  # sizes are the drives' IDEMA capacities, as the drive database matches them. P5800X 400 GB
  # is 3D XPoint (Fast), D5-P5316 30.72 TB is QLC (Capacity), as test/guest. The 400 GB model,
  # not the 800 GB one: the agent reads a new fast device sparsely before its first table
  # (decision 0041), 4 KiB per MiB, half a second on a real P5800X but about 0.8 ms a sample
  # under TCG here: 10.5 min for 800 GB (session 17's red spec 4), and the DryRun pass and
  # the Apply pass each read it. prism: over emulated disks; chain: over sparse files, so that
  # LVM in Rook's pods (which bring their own lvm.conf) sees one path per drive. The second
  # QLC drive is hot-added by the suite.
  fast="400088457216" qlc="30725971992576"
  if [[ -n $operator ]]; then
    printf '%s\n' "sparse:$fast PRISM-E2E-FAST INTEL SSDPF21Q400GB" "sparse:$qlc PRISM-E2E-QLC INTEL SSDPF2NV307TZ" \
      >"$work/overlay/etc/prism-e2e-nvmet.txt"
    echo "sparse:$qlc PRISM-E2E-QLC2 INTEL SSDPF2NV307TZ" >"$work/overlay/etc/prism-e2e-nvmet-hotadd.txt"
    # The drills' drives: a third QLC drive for a third OSD, and the one that replaces a dead drive.
    echo "sparse:$qlc PRISM-E2E-QLC3 INTEL SSDPF2NV307TZ" >"$work/overlay/etc/prism-e2e-nvmet-drill-add.txt"
    echo "sparse:$qlc PRISM-E2E-QLC4 INTEL SSDPF2NV307TZ" >"$work/overlay/etc/prism-e2e-nvmet-drill-new.txt"
    # The runbooks the drills run as written (internal/runbook reads them in the guest).
    cp -r "$repo/docs/runbooks" "$work/overlay/opt/e2e/runbooks"
  else
    printf '%s\n' "e2e-fast PRISM-E2E-FAST INTEL SSDPF21Q400GB" "e2e-qlc PRISM-E2E-QLC INTEL SSDPF2NV307TZ" \
      >"$work/overlay/etc/prism-e2e-nvmet.txt"
    echo "e2e-qlc2 PRISM-E2E-QLC2 INTEL SSDPF2NV307TZ" >"$work/overlay/etc/prism-e2e-nvmet-hotadd.txt"
  fi
fi
# Each archive's image name and manifest digest, for the guest to tell whether a reused work
# disk's containerd already holds it (hack/e2e/ociarchive writes one manifest per archive).
e2e_images="" archives=()
for f in "$share/images/"*.tar; do
  ref=$(image_ref "$(tar -xOf "$f" index.json)") || { log "$f: no image name or digest in index.json"; exit 1; }
  e2e_images+="${e2e_images:+ }$(basename "$f")=$ref"
  archives+=("$f=$ref")
done
step images $((SECONDS - t0))
# The work disk: an earlier run's (PRISM_E2E_WORKDISK), or one made on the host whose
# containerd already holds every archive's image (hack/e2e/workdisk.sh, cached; decision 0053).
worksize=64G base=""
if [[ -n ${PRISM_E2E_WORKDISK:-} ]]; then
  [[ -f $PRISM_E2E_WORKDISK ]] || { log "PRISM_E2E_WORKDISK=$PRISM_E2E_WORKDISK: no such file"; exit 2; }
  base=$(cd "$(dirname "$PRISM_E2E_WORKDISK")" && pwd)/$(basename "$PRISM_E2E_WORKDISK")
elif [[ ${PRISM_E2E_HOST_IMPORT:-1} != 0 ]]; then
  t0=$SECONDS
  base=$("$here/workdisk.sh" "$guest" "$worksize" "${archives[@]}")
  step host-import $((SECONDS - t0))
fi
reuse=()
if [[ -n $base ]]; then
  mkdir -p "$work/vm"
  qemu-img create -q -f qcow2 -b "$base" -F qcow2 "$work/vm/disk-e2e-work.qcow2"
  reuse=(--reuse-disks)
  log "work disk: an overlay on $base"
fi
hand=""
if [[ -n ${PRISM_E2E_HAND:-} ]]; then
  [[ -n $prism && -f $PRISM_E2E_HAND/run.sh ]] || { log "PRISM_E2E_HAND=$PRISM_E2E_HAND: want a directory with run.sh, stage prism or chain"; exit 2; }
  cp -r "$PRISM_E2E_HAND" "$work/overlay/opt/e2e/hand"
  hand=/opt/e2e/hand/run.sh
fi
{
  echo "E2E_STAGE=$stage"
  echo "E2E_HAND=$hand"
  echo "E2E_TIMEOUT=$(wait_seconds "$nodes")"
  echo "E2E_ROOK_IMAGE=$rook_image"
  echo "E2E_IMAGES=\"$e2e_images\""
  echo "E2E_REUSE_WORK=${base:+1}"
  echo "E2E_LINGER=${PRISM_E2E_LINGER:-0}"
  echo "E2E_DRILLS=$drills"
  echo "E2E_REBOOT=${reboot:+1}"
  echo "E2E_BOOT=1"
  echo "E2E_CEPHSQLITE_DEBUG=${PRISM_E2E_CEPHSQLITE_DEBUG:-}"
  # 10 min, not Ceph's 30 s: an emulated OSD stalls a lock renewal of the mgr's SQLite store
  # beyond 30 s, which fails devicehealth after four such losses (decision 0051, reproduced
  # natively). Set empty for Ceph's default, to watch the failure.
  echo "E2E_CEPHSQLITE_LOCK_TIMEOUT=${PRISM_E2E_CEPHSQLITE_LOCK_TIMEOUT:-}"
  echo "E2E_BENCH_WRITES_MIB=${PRISM_E2E_BENCH_WRITES_MIB:-}"
  echo "E2E_SUITE_LABELS=\"$suite_labels\""
  echo "E2E_UPGRADE_FROM=$upgrade_from"
  echo "E2E_UPGRADE_IMAGE=prism.local/e2e/prism:$old_release"
  echo "E2E_UPGRADE_VERSION=$old_release"
  echo "E2E_VERSION=${upgrade_from:+$new_release}"
  echo "PATH=/mnt/host/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
} >"$work/overlay/etc/prism-e2e.env"
# Two nodes: node 2's overlay is node 1's with its own env lines and drives, its share holds the
# same binaries and images (hard links), and both guests mount work/xfer as prism-xfer.
link1=() link2=()
if [[ $nodes == 2 ]]; then
  node_env 1 >>"$work/overlay/etc/prism-e2e.env"
  cp -a "$work/overlay" "$work/overlay-2"
  node2_env "$work/overlay/etc/prism-e2e.env" >"$work/overlay-2/etc/prism-e2e.env"
  rm -f "$work/overlay-2"/etc/prism-e2e-nvmet*.txt
  [[ -z $prism ]] || node2_drives "$fast" "$qlc" >"$work/overlay-2/etc/prism-e2e-nvmet.txt"
  mkdir -p "$work/share-2/cmd" "$work/xfer"
  cp -al "$share/bin" "$share/images" "$work/share-2/"
  read -r port1 port2 < <(link_ports $$)
  mapfile -t link1 < <(guest_link_args 1 "$port1" "$port2" "$work/xfer")
  mapfile -t link2 < <(guest_link_args 2 "$port1" "$port2" "$work/xfer")
fi

# rook: a second drive, whole, for the OSD Rook's prepare job creates, and a third for its DB
# (an LV on a partition: guest-cluster.sh db_lv). prism: the emulated
# disks under the fabric drives (chain has sparse files in the guest instead).
disks=(--disk "e2e-work:$worksize")
[[ $stage != rook ]] || disks+=(--disk e2e-osd:20G --disk e2e-db:8G)
[[ $stage != prism ]] || disks+=(--disk e2e-fast:$fast --disk e2e-qlc:$qlc --disk e2e-qlc2:$qlc)
# chain: mon, mgr, two OSDs, Prism and the control plane, and the drives' tmpfs.
mem=${PRISM_E2E_MEM:-8G}
[[ $stage != chain || -n ${PRISM_E2E_MEM:-} ]] || mem=12G
# Two nodes: 10G + 6G of this host's 23G (node 2 has no control plane, no mon or mgr).
[[ $nodes == 1 || -n ${PRISM_E2E_MEM:-} ]] || mem=10G
mem2=${PRISM_E2E_MEM2:-6G}
# The guest's limit: the chain's suite alone may take its 100 min (-test.timeout), after about
# 10 min of cluster start; 5400 s cut the fourth run in its last spec (2026-11-26).
limit=5400
[[ $stage != chain ]] || limit=7800
# The drills add a third OSD and a replacement OSD (a prepare each, 15-40 min under TCG), the
# pool's recovery and the runbook's steps: their suite may take 190 min (guest-cluster.sh).
[[ -z $drills ]] || limit=13200
# The write count after the suite: a QLC-alone OSD (Rook's prepare job and the OSD took 1368 s
# in session 21's run; with the reconcile before them about 55 min on 2026-12-07) and the
# workload on both layouts.
[[ -z ${PRISM_E2E_BENCH_WRITES_MIB:-} ]] || limit=$((limit + 7200))
# Two TCG guests on two cores: each at about half speed.
[[ $nodes == 1 ]] || limit=$((2 * limit))
t0=$SECONDS
rc=0
# The reboot drill keeps the first boot's disks for the second.
keep=${PRISM_E2E_KEEP:+--keep}
[[ -z $reboot ]] || keep=--keep
node2="" watcher=""
if [[ $nodes == 2 ]]; then
  # Node 2 in the background, on its own overlay of the same work disk: it waits for node 1's
  # credentials and apiserver itself.
  reuse2=()
  if [[ -n $base ]]; then
    mkdir -p "$work/vm-2"
    qemu-img create -q -f qcow2 -b "$base" -F qcow2 "$work/vm-2/disk-e2e-work.qcow2"
    reuse2=(--reuse-disks)
  fi
  PRISM_GUEST_SUITE=forky "$repo/hack/guest/run.sh" --run "$here/guest-cluster.sh" --overlay "$work/overlay-2" \
    --share "$work/share-2" --disk "e2e-work:$worksize" --mem "$mem2" --smp 2 --timeout "$limit" \
    --workdir "$work/vm-2" "${reuse2[@]}" "${link2[@]}" $keep >"$work/console-2.log" 2>&1 &
  node2=$!
  # Node 1 once node 2's QEMU runs: the two guest/run.sh calls do not look up the guest build
  # (apt-cache on its private state) at the same time.
  for _ in $(seq 300); do
    [[ ! -s $work/vm-2/qemu.pid ]] && kill -0 "$node2" 2>/dev/null || break
    sleep 1
  done
  if ! kill -0 "$node2" 2>/dev/null; then
    # Its QEMU did not start (a port taken, a bad argument): no node 1 to wait for it.
    tail -5 "$work/console-2.log" >&2
    log "node 2's guest ended before node 1 started (its console $work/console-2.log)"
    exit 1
  fi
  watch_node2 "$node2" "$work/xfer/node2-exited" >/dev/null 2>&1 &
  watcher=$!
  log "node 2: guest pid $node2, link 127.0.0.1:$port2 <-> 127.0.0.1:$port1; its console $work/console-2.log, marks $work/share-2/out/marks.txt"
fi
PRISM_GUEST_SUITE=forky "$repo/hack/guest/run.sh" --run "$here/guest-cluster.sh" --overlay "$work/overlay" \
  --share "$share" "${disks[@]}" --mem "$mem" --smp 2 --timeout "$limit" \
  --workdir "$work/vm" "${reuse[@]}" "${link1[@]}" $keep >"$work/console.log" 2>&1 || rc=$?
step guest-run $((SECONDS - t0))
if [[ -n $node2 ]]; then
  kill "$watcher" 2>/dev/null || true
  # Node 1 is done: node 2 stops waiting (its guest saw xfer/done if node 1 wrote it), collects
  # its own state and powers off; after 5 min it is stopped (hack/guest/run.sh stops QEMU).
  touch "$work/xfer/done"
  for _ in $(seq 300); do kill -0 "$node2" 2>/dev/null || break; sleep 1; done
  kill "$node2" 2>/dev/null || true
  rc2=0
  wait "$node2" || rc2=$?
  grep -a 'E2E-MARK\|PRISM-GUEST-\|guest-run' "$work/console-2.log" | sed 's/^/node 2: /' >&2 || true
  log "node 2: exit $rc2"
  ((rc != 0)) || rc=$rc2
fi
if [[ -n $reboot && $rc == 0 ]]; then
  # The second boot: a new QEMU on the same disk images (the kernel starts afresh, as after a
  # power cycle), its NVMe controllers in the reverse order, so the kernel names differ.
  grep -a 'E2E-MARK\|PRISM-GUEST-' "$work/console.log" >&2 || true
  mv "$work/console.log" "$work/console-boot1.log"
  sed -i 's/^E2E_BOOT=1$/E2E_BOOT=2/' "$work/overlay/etc/prism-e2e.env"
  reversed=()
  for ((i = ${#disks[@]} - 1; i > 0; i -= 2)); do reversed+=("${disks[i - 1]}" "${disks[i]}"); done
  t0=$SECONDS
  PRISM_GUEST_SUITE=forky "$repo/hack/guest/run.sh" --run "$here/guest-cluster.sh" --overlay "$work/overlay" \
    --share "$share" "${reversed[@]}" --mem "$mem" --smp 2 --timeout "$limit" \
    --workdir "$work/vm" --reuse-disks ${PRISM_E2E_KEEP:+--keep} >"$work/console.log" 2>&1 || rc=$?
  step guest-run-boot2 $((SECONDS - t0))
fi
grep -a 'E2E-MARK\|PRISM-GUEST-\|guest-run' "$work/console.log" >&2 || true
if [[ -n ${PRISM_E2E_OUT:-} ]]; then
  mkdir -p "$PRISM_E2E_OUT"
  cp -r "$share/out/." "$PRISM_E2E_OUT/" 2>/dev/null || true
  cp "$work/console.log" "$PRISM_E2E_OUT/console.log"
  [[ ! -f $work/console-boot1.log ]] || cp "$work/console-boot1.log" "$PRISM_E2E_OUT/console-boot1.log"
  if [[ $nodes == 2 ]]; then
    mkdir -p "$PRISM_E2E_OUT/node2"
    cp -r "$work/share-2/out/." "$PRISM_E2E_OUT/node2/" 2>/dev/null || true
    cp "$work/console-2.log" "$PRISM_E2E_OUT/node2/console.log" 2>/dev/null || true
  fi
  {
    for k in guest-build k8s-bins rook-bins images host-import guest-run guest-run-boot2; do
      [[ -z ${took[$k]:-} ]] || echo "$k ${took[$k]} s"
    done
    echo "total $((SECONDS - t_all)) s"
  } >"$PRISM_E2E_OUT/timings.txt"
fi
log "stage $stage: exit $rc after $((SECONDS - t_all)) s"
exit "$rc"
