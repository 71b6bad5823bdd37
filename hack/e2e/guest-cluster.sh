#!/bin/bash
# Runs inside the forky e2e guest (hack/e2e/run.sh boots it with hack/guest/run.sh): a real
# single-node Kubernetes on the guest's own addresses, then what E2E_STAGE asks for.
#
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy
#   (hack/envtest-bins.sh builds them from the Go module proxy), containerd with runc and
#   Debian's CNI plugins (bridge, host-local, loopback, portmap) from the guest's packages.
#
# The node's address is on a dummy interface (prism0, 10.250.0.1): nothing leaves the guest.
# Images come from OCI archives on the 9p share (/mnt/host/images/*.tar), imported with
# `ctr -n k8s.io images import`; no registry is reachable.
#
# /etc/prism-e2e.env (from the run's overlay) sets:
#   E2E_STAGE   node: node Ready, a pod from the imported sleep image, and a pod that reaches
#                     the apiserver through the service network as in-cluster clients do
#               rook-chart: node, then Rook's Helm chart with helm and a CephCluster accepted
#                     by Rook's CRD; no operator runs (no rook binary: docs/e2e.md)
#               rook: node, then Rook's Helm chart and the real operator: a mon quorum, the
#                     mgr, and an OSD on the e2e-osd drive if there is one
#               prism: rook-chart (no operator), then Prism's e2e suite (test/e2e, compiled on
#                     the host) against this apiserver: helm install of Prism's chart, an
#                     Optane and a QLC drive (NVMe-oF over the e2e-fast and e2e-qlc disks),
#                     DryRun, Apply, partitions, CephCluster entries, metrics, a third drive
#                     hot-added, policy deleted
#               chain: prism with the real operator, as rook starts it: the suite also
#                     asserts Rook's OSDs from Ceph (test/e2e, PRISM_E2E_ROOK_OPERATOR)
#   E2E_TIMEOUT seconds for each wait (default 900)
#   E2E_IMAGES  "FILE=NAME@DIGEST ...": what each archive on the share holds (hack/e2e/run.sh
#               reads it from the archive's index.json); an image containerd already has under
#               that name and digest is not imported again
#   E2E_REUSE_WORK=1: the e2e-work disk comes from an earlier run (PRISM_E2E_WORKDISK) or from
#               the host (hack/e2e/workdisk.sh, its containerd/ made natively): if it
#               holds an ext4 file system, keep its containerd (its images) and start etcd,
#               the kubelet, Rook's data and the pod logs anew, instead of formatting it
#   E2E_LINGER  seconds to keep the finished stage's cluster up for scripts the host drops into
#               the share's cmd/ (linger, below; hack/e2e/run.sh PRISM_E2E_LINGER)
#   E2E_CEPHSQLITE_DEBUG  the mgr's debug_cephsqlite in the CephCluster's cephConfig (e.g. 20:
#               every call of libcephsqlite, the SQLite store of the mgr's modules, in its log)
#   E2E_CEPHSQLITE_LOCK_TIMEOUT  the mgr's cephsqlite_lock_renewal_timeout (ms; Ceph's default
#               30000, kept unless asked otherwise) in the same place (decision 0051)
#   E2E_BENCH_WRITES_MIB  chain: after the suite, hack/e2e/bench-writes.sh with that budget (MiB per
#               layout): the client bytes that reach QLC with Prism's layout and without, on
#               Rook's OSDs (issue 32)
#   E2E_SUITE_LABELS  prism, chain: Ginkgo's label filter for the suite (only the specs it selects)
#   E2E_DRILLS=1 (chain): the suite also runs the failure drills (drill_env), and gets 190 min
#   E2E_REBOOT=1 (prism): the reboot drill (issue 30 item 3c). E2E_BOOT=1: the suite's specs up to
#               the Rook entry (label reboot-before) and its record of the node, then the node's key
#               material is saved on the work disk, the kubelet and etcd stop, the disks are synced
#               and the guest powers off. E2E_BOOT=2 (hack/e2e/run.sh boots again on the same disks,
#               NVMe controllers in the reverse order): etcd, the kubelet and containerd keep their
#               data, the agent runs and publishes before the drives are connected (in the reverse
#               order too), then the suite's reboot-after specs compare the node with the record
#   E2E_NODES=2 two guests, one cluster (hack/e2e/run.sh PRISM_E2E_NODES=2; not run yet): each
#               guest's node address on its virtio-net NIC (found by E2E_NIC_MAC) instead of
#               the dummy prism0, the guests linked point to point (hack/guest/run.sh --link).
#               E2E_NODE=1: the control plane and node prism-guest (10.250.0.1, pods
#               10.244.0.0/24), which also makes node 2's credentials and hands them over in
#               /mnt/xfer (the 9p share tagged prism-xfer, on the host's disk; handover), then
#               runs the stage once node 2 is ready. E2E_NODE=2: node prism-guest-2 only
#               (10.250.0.2, pods 10.244.1.0/24), its own drives, then waits for node 1 to be
#               done (worker_stage). Each routes the other's pod range through the link.
#   E2E_HAND    a script sourced in place of the stage's own steps once the node is up and
#               reaches the apiserver (hack/e2e/run.sh PRISM_E2E_HAND): a check by hand with
#               pieces this repository does not hold, such as Open CAS's module
#               (docs/opencas-real-module.md); it uses this script's functions
#   ROOK_CEPH_TIMEOUT the operator's timeout for each ceph command, seconds (Rook's chart's
#               cephCommandsTimeoutSeconds; default 300, the chart's 15 is short for a ceph CLI
#               under TCG: it connects with --connect-timeout of the same value; with 60, on
#               a host loaded by other jobs, `ceph config assimilate-conf` timed out in each
#               of Rook's reconciles for 45 min and no OSD was prepared, 2026-11-26)
# Results go to /mnt/host/out: marks.txt (uptime-stamped milestones), logs/, state/.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
E2E_STAGE=node E2E_TIMEOUT=900 ROOK_CEPH_TIMEOUT=300
[[ ! -f /etc/prism-e2e.env ]] || source /etc/prism-e2e.env
E2E_REBOOT=${E2E_REBOOT:-} E2E_BOOT=${E2E_BOOT:-1}
out=${PRISM_OUT:-/mnt/host}/out
logs=$out/logs # on the share: readable from the host while the guest runs
[[ $E2E_BOOT == 1 ]] || logs=$out/logs-boot$E2E_BOOT
mkdir -p "$out/state" "$logs"
[[ $E2E_BOOT != 1 ]] || : >"$out/marks.txt"
uptime_s() { cut -d' ' -f1 /proc/uptime; }
mark() { echo "E2E-MARK $(uptime_s) $*" | tee -a "$out/marks.txt"; }
collect() {
  [[ ${E2E_NODE:-1} != 2 ]] || { node2_collect; return; }
  mkdir -p "$out/logs" "$out/state"
  if [[ -f /etc/kubernetes/admin.conf ]]; then
    k get nodes -o wide >"$out/state/nodes.txt" 2>&1
    k get pods -A -o wide >"$out/state/pods.txt" 2>&1
    k get events -A --sort-by=.lastTimestamp >"$out/state/events.txt" 2>&1
    k describe nodes >"$out/state/nodes-describe.txt" 2>&1
    k describe pods -A >"$out/state/pods-describe.txt" 2>&1
    if [[ $E2E_STAGE == rook* || $E2E_STAGE == chain ]]; then
      k -n rook-ceph get cephcluster -o yaml >"$out/state/cephcluster.yaml" 2>&1
      k -n rook-ceph logs deploy/rook-ceph-operator >"$out/logs/rook-operator.log" 2>&1
      k -n rook-ceph get jobs,deploy,pods -o wide >"$out/state/rook-ceph.txt" 2>&1
      for p in $(k -n rook-ceph get pods -o name 2>/dev/null); do
        k -n rook-ceph logs "$p" --all-containers >"$out/logs/${p#pod/}.log" 2>&1
      done
      copy_pod_logs
    fi
  fi
  if [[ ($E2E_STAGE == prism || $E2E_STAGE == chain) && -f /etc/kubernetes/admin.conf ]]; then
    k get storagenodes,hybridstoragepolicies -o yaml >"$out/state/prism.yaml" 2>&1
    k -n rook-ceph get cephcluster -o yaml >"$out/state/cephcluster.yaml" 2>&1
    for p in $(k -n prism-system get pods -o name 2>/dev/null); do
      k -n prism-system logs "$p" --all-containers >"$out/logs/${p#pod/}.log" 2>&1
    done
    lsblk -o NAME,SIZE,TYPE,MODEL,SERIAL,PARTLABEL >"$out/state/lsblk.txt" 2>&1
    # The DB slots' volumes (decision 0036) as the host's LVM has them, tags included.
    lvs -a -o lv_name,vg_name,lv_path,lv_size,lv_attr,lv_tags,devices --units b --reportformat json >"$out/state/lvs.json" 2>&1
  fi
  if [[ $E2E_STAGE == chain && -f /etc/kubernetes/admin.conf ]]; then
    ceph_op osd dump --format json-pretty >"$out/state/osd-dump.json" 2>&1
    ceph_op osd metadata --format json-pretty >"$out/state/osd-metadata.json" 2>&1
    ceph_op osd tree >"$out/state/osd-tree.txt" 2>&1
    ceph_op -s >"$out/state/ceph-status.txt" 2>&1
    ceph_diag "$out/state/health-end"
  fi
  ctr -n k8s.io images ls >"$out/state/images.txt" 2>&1
  dmesg >"$out/logs/dmesg.log" 2>&1
}
fail() {
  mark "FAIL $*"
  # Node 2 of two: why, for node 1's waits on it (peer_gone), which then stop at once.
  [[ ${E2E_NODE:-1} != 2 ]] || { echo "$*" >/mnt/xfer/node2-failed; } 2>/dev/null
  collect
  # A failed stage's cluster stays up too (E2E_LINGER), for a look at what failed; not from a
  # script of cmd/ or a background watcher (a subshell), which only ends itself.
  [[ $BASHPID != "$$" ]] || { linger; release_peer; }
  exit 1
}
k() { kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
# apply_retried WHAT: k apply of stdin, retried: on a loaded host (three TCG guests on two
# cores, 2026-12-06) kubectl's download of the apiserver's OpenAPI for validation timed out
# after 32 s and failed the stage at its apiprobe pod.
apply_retried() {
  local what=$1 manifest try
  manifest=$(cat)
  for try in 1 2 3 4 5; do
    k apply -f - <<<"$manifest" >>"$logs/apply.log" 2>&1 && return 0
    ((try < 5)) || fail "$what ($(tail -2 "$logs/apply.log"))"
    mark "$what: try $try failed ($(tail -1 "$logs/apply.log")), again"
    sleep 10
  done
}
# wait_for SECONDS WHAT CMD...: poll CMD (every 2 s, then less often: wait_interval). Two nodes:
# the other node gone (peer_gone) ends the wait at once: node 1 does not wait E2E_TIMEOUT (30
# min) for a node 2 that failed, and node 2 collects its own state instead of being stopped in a
# wait by the host.
wait_for() {
  local limit=$1 what=$2 t0=$SECONDS gone
  shift 2
  until "$@" >/dev/null 2>&1; do
    [[ ${E2E_NODES:-1} != 2 ]] || { gone=$(peer_gone) && fail "waiting for $what: $gone"; }
    ((SECONDS - t0 < limit)) || fail "timed out after $limit s waiting for $what"
    sleep "$(wait_interval $((SECONDS - t0)))"
  done
  mark "$what ($((SECONDS - t0)) s)"
}
# wait_interval ELAPSED: seconds between two tries of a wait that has gone on ELAPSED seconds: 2
# for its first minute, 10 to its fifth, then 30. Each try starts a kubectl (and a ceph CLI for
# Ceph's answers: 25-60 s of the two emulated CPUs, 2026-12-08); tried every 2 s, an hour's wait
# for Rook's prepare job spent about one of the two CPUs on asking.
wait_interval() {
  if (($1 < 60)); then echo 2; elif (($1 < 300)); then echo 10; else echo 30; fi
}
# condition NS KIND/NAME TYPE: the object's status condition TYPE is True. (Polled with get:
# under TCG a kubectl wait spends its short timeout starting up.)
condition() {
  local ns=()
  [[ $1 == - ]] || ns=(-n "$1")
  [[ $(k "${ns[@]}" get "$2" -o jsonpath="{.status.conditions[?(@.type==\"$3\")].status}" 2>/dev/null) == True ]]
}
# run_cmds: each script the host put in the share's cmd/ (write it under another name, then
# rename it to NAME.sh) that has not run yet: sourced in a subshell, with this script's functions
# (k, ceph_op, ceph_diag, ceph_answers, ...), its output in out/cmd/NAME.out.
run_cmds() {
  local f name rc
  mkdir -p "$out/cmd"
  for f in /mnt/host/cmd/*.sh; do
    # The watcher stops once linger has begun: linger runs the rest, one at a time.
    [[ ${1:-} != watcher || ! -e $out/cmd/.lingering ]] || return 1
    name=$(basename "$f" .sh)
    [[ -f $f && ! -e $out/cmd/$name.out && ! -e $out/cmd/$name.out.tmp ]] || continue
    mark "by hand: cmd/$name.sh"
    (source "$f") >"$out/cmd/$name.out.tmp" 2>&1
    rc=$?
    echo "exit $rc" >>"$out/cmd/$name.out.tmp"
    mv "$out/cmd/$name.out.tmp" "$out/cmd/$name.out"
    mark "by hand: cmd/$name.sh exit $rc"
  done
}
# live_cmds: with E2E_LINGER set, run_cmds every 10 s from the apiserver's start, while the stage
# runs: a look at the live cluster (a mgr's log, an OSD's slow ops) at the moment it matters.
# It ends when linger begins (cmd/.lingering), after the script it is running: two scripts at
# once once let a recording's destroy and purge run beside the write count's setup.
live_cmds() {
  ((${E2E_LINGER:-0} > 0)) || return 0
  while sleep 10; do
    [[ ! -e $out/cmd/.lingering ]] || return 0
    run_cmds watcher || return 0
  done
}
# bg NAME CMD...: start a daemon, its output in $logs/NAME.log, and start it again 5 s after
# it exits, as systemd or the kubelet would. Under TCG at host load 14-17 they do exit: the
# apiserver on its post-start hook "start-service-ip-repair-controllers" (etcd too slow for
# its first IP allocation check), the kubelet on containerd's CRI answering too late.
bg() {
  local name=$1
  shift
  (while true; do
    "$@"
    echo "E2E: $name exited ($?), starting it again in 5 s"
    sleep 5
  done) >"$logs/$name.log" 2>&1 &
  echo $! >"/run/e2e-$name.pid"
}
# copy_pod_logs: the kubelet's files of every rook-ceph container (/var/log/pods), to
# $logs/pods/ on the share. No apiserver round trip, so it is cheap enough to run every few
# seconds; a copy outlives its pod (the kubelet removes the files with the pod, and Rook deletes
# its short jobs, detect-version among them, as soon as it has read their result).
copy_pod_logs() {
  mkdir -p "$logs/pods"
  local d
  for d in /var/log/pods/rook-ceph_*; do
    [[ -d $d ]] && cp -r "$d" "$logs/pods/" 2>/dev/null
  done
  return 0
}
# watch_rook: while the stage waits, the pod logs every 15 s and the rook-ceph namespace as the
# apiserver sees it every two minutes (objects, descriptions of jobs and pods, events, the
# CephCluster's status), in $out/state/rook-live/: one run is enough to see why it stalls.
watch_rook() {
  local live=$out/state/rook-live n=0
  mkdir -p "$live"
  while sleep 15; do
    copy_pod_logs
    ((n++ % 8 == 0)) || continue
    {
      date
      k -n rook-ceph get cephcluster,jobs,deploy,pods,cm -o wide
    } >"$live/objects.txt.tmp" 2>&1 && mv "$live/objects.txt.tmp" "$live/objects.txt"
    k -n rook-ceph describe jobs,pods >"$live/describe.txt.tmp" 2>&1 && mv "$live/describe.txt.tmp" "$live/describe.txt"
    k -n rook-ceph get events --sort-by=.lastTimestamp >"$live/events.txt.tmp" 2>&1 && mv "$live/events.txt.tmp" "$live/events.txt"
    k -n rook-ceph get cephcluster e2e -o jsonpath='{.status}' >"$live/cephcluster-status.json" 2>&1
  done
}

# node_identity N: node N's name, address, pod range, and the other node's address and pod
# range, of a two-node cluster (E2E_NODES=2).
node_identity() {
  case $1 in
    1) echo "prism-guest 10.250.0.1 10.244.0.0/24 10.250.0.2 10.244.1.0/24" ;;
    2) echo "prism-guest-2 10.250.0.2 10.244.1.0/24 10.250.0.1 10.244.0.0/24" ;;
    *) return 1 ;;
  esac
}

# nic_by_mac MAC [DIR]: the name of the interface with that MAC (DIR: /sys/class/net). By MAC,
# not by name: udev renames the NIC (enp0s...) after the slot QEMU gave it.
nic_by_mac() {
  local d
  for d in "${2:-/sys/class/net}"/*; do
    [[ $(cat "$d/address" 2>/dev/null) == "$1" ]] && { basename "$d"; return 0; }
  done
  return 1
}

# two_node_link MAC ADDRESS PEER PEER_PODS: ADDRESS/24 on the NIC with MAC, up, the other node's
# pod range through the other node, and the default route on the NIC (kube-proxy and the
# kubelet want one; with one node it is the dummy's).
two_node_link() {
  local nic="" try
  modprobe virtio_net # udev loads it too, from the device's alias
  for try in $(seq 30); do
    nic=$(nic_by_mac "$1") && break
    sleep 1
  done
  [[ -n $nic ]] || { echo "no interface with MAC $1 ($(ls /sys/class/net | tr '\n' ' '))" >&2; return 1; }
  ip addr add "$2/24" dev "$nic" && ip link set "$nic" up &&
    ip route add "$4" via "$3" dev "$nic" && ip route add default dev "$nic"
}

# cni_conflist POD_RANGE MASQUERADE: the bridge network's configuration. With two nodes no
# masquerade: a pod's packet reaches the other node with its own address, as Ceph's daemons
# expect of each other (their addresses are the pods').
cni_conflist() {
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "prism-e2e",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": $2, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$1"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

# handover DIR: node 2's credentials, made on node 1 from its key material: the CA, and
# kubeconfigs for node 2's kubelet, its kube-proxy and an admin, naming node 1's apiserver, in
# DIR/node2. Written to DIR/node2.tmp, then renamed: node 2 never reads half of them.
handover() {
  local d=$1/node2 server=https://10.250.0.1:6443
  rm -rf "$d" "$d.tmp" && mkdir -p "$d.tmp" && cp "$pki/ca.crt" "$d.tmp/ca.crt" &&
    kubeconfig "$d.tmp/kubelet.conf" system:node:prism-guest-2 "$server" &&
    kubeconfig "$d.tmp/proxy.conf" system:kube-proxy "$server" &&
    kubeconfig "$d.tmp/admin.conf" admin "$server" &&
    mv "$d.tmp" "$d"
}

# take_over DIR: on node 2, the credentials handover wrote, where node 1 keeps its own (the CA
# in $pki, the kubeconfigs in its parent, /etc/kubernetes).
take_over() {
  mkdir -p "$pki" && cp "$1/node2/ca.crt" "$pki/ca.crt" &&
    cp "$1/node2/kubelet.conf" "$1/node2/proxy.conf" "$1/node2/admin.conf" "${pki%/*}/"
}

# release_peer: node 1 of two is done (or failed): node 2 may stop waiting (worker_stage).
release_peer() {
  [[ ${E2E_NODES:-1} == 2 && ${E2E_NODE:-1} == 1 ]] || return 0
  touch /mnt/xfer/done
}

# peer_gone: why the other node of two will not do its part, or false while it may: on node 1,
# node 2's own failure (xfer/node2-failed, from its fail) or its guest's end (xfer/node2-exited,
# from hack/e2e/run.sh: a crash, its time limit, a QEMU that did not start); on node 2, node 1
# done or failed (xfer/done).
peer_gone() {
  if [[ ${E2E_NODE:-1} == 2 ]]; then
    [[ -e /mnt/xfer/done ]] && echo "node 1 is done (passed or failed: its marks say which)"
  elif [[ -e /mnt/xfer/node2-failed ]]; then
    echo "node 2 failed: $(cat /mnt/xfer/node2-failed)"
  else
    [[ -e /mnt/xfer/node2-exited ]] && echo "node 2's guest has ended (its console: console-2.log)"
  fi
}

# node2_collect: node 2's own state (its drives, volumes, containers, pod logs, kernel log).
# What the cluster says is node 1's to collect; node 1 may be gone by now.
node2_collect() {
  mkdir -p "$out/logs" "$out/state" "$logs/pods"
  lsblk -o NAME,SIZE,TYPE,MODEL,SERIAL,PARTLABEL >"$out/state/lsblk.txt" 2>&1
  lvs -a -o lv_name,vg_name,lv_path,lv_size,lv_attr,lv_tags,devices --units b --reportformat json >"$out/state/lvs.json" 2>&1
  ctr -n k8s.io containers ls >"$out/state/containers.txt" 2>&1
  cp -r /var/log/pods/. "$logs/pods/" 2>/dev/null
  dmesg >"$out/logs/dmesg.log" 2>&1
}

# worker_stage: node 2's part once it is Ready: its own drives for the prism and chain stages
# (/etc/prism-e2e-nvmet.txt, other serials than node 1's), every image in its containerd (the
# agent's and Rook's pods on node 2 never pull: imagePullPolicy Never), a mark for node 1 in
# /mnt/xfer, then the pod logs copied every 30 s until node 1 is done (the host stops this guest
# then anyway).
worker_stage() {
  if [[ -s /etc/prism-e2e-nvmet.txt ]]; then
    prism-nvmet-loop /etc/prism-e2e-nvmet.txt >"$out/state/nvmet.txt" 2>"$logs/nvmet.log" ||
      fail "prism-nvmet-loop ($(tail -2 "$logs/nvmet.log"))"
    while read -r q _ dev model; do mark "drive $q: /dev/$dev \"$model\""; done <"$out/state/nvmet.txt"
  fi
  imported
  touch /mnt/xfer/node2-ready
  mark "node 2 ready for node 1's stage"
  until [[ -e /mnt/xfer/done ]]; do
    copy_pod_logs
    sleep 30
  done
  mark "node 1 is done"
}

# cross_node_probe: with two nodes, a pod on node 2 reaches the apiserver on node 1 through the
# service network: node 2's kube-proxy, the link, and the route back to node 2's pod range.
cross_node_probe() {
  [[ ${E2E_NODES:-1} == 2 ]] || return 0
  wait_for "$E2E_TIMEOUT" "NODE 2 READY" condition - node/prism-guest-2 Ready
  apply_retried "create apiprobe pod on node 2" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: apiprobe-2, namespace: default}
spec:
  nodeName: prism-guest-2
  terminationGracePeriodSeconds: 2
  containers:
  - {name: probe, image: prism.local/e2e/sleep:v1, imagePullPolicy: Never, args: ["apiprobe"]}
EOF
  probed2() { k -n default logs apiprobe-2 2>/dev/null | grep -q '^apiprobe: '; }
  wait_for "$E2E_TIMEOUT" "apiprobe pod ran on node 2" probed2
  k -n default logs apiprobe-2 | tee -a "$out/marks.txt"
  k -n default logs apiprobe-2 | grep -q '^apiprobe: 200 https://10.96.0.1:443/version' || fail "in-cluster API access from node 2"
  mark "IN-CLUSTER API ACCESS FROM NODE 2 (over the link)"
}

# 7. Rook (E2E_STAGE=rook): Rook's own Helm chart (deploy/charts/rook-ceph from Rook's module
# zip, /opt/e2e/rook-ceph) installed with helm, the operator image being the one
# hack/e2e/run.sh wrote from the guest's Debian packages and the rook binary (v1.20.2: docs/e2e.md
# and decision 0024), then a CephCluster with one mon, useAllNodes: false and the e2e-osd drive
# named on this node; waits for the real operator's mon quorum, mgr and OSD.
rook_chart() {
  local repo tag t0
  repo=${E2E_ROOK_IMAGE%:*} tag=${E2E_ROOK_IMAGE##*:}
  t0=$SECONDS
  # The csi.ceph.io CRDs, without the CSI operator: Rook v1.20.2 writes a CephConnection and a
  # ClientProfile each time it saves its mons, and fails its reconcile before the first mon
  # pod without them ("no matches for kind CephConnection in version csi.ceph.io/v1", then the
  # next reconcile detects the Ceph version again: docs/e2e-transcripts/2026-11-25-rook-operator-second.md).
  # Server-side: two of them are too big for client-side apply's annotation. Retried like the
  # chart below: at host load 10 the apiserver timed out two of the five creates (2026-11-26).
  local try
  for try in 1 2 3 4 5; do
    k apply --server-side -f /opt/e2e/csi-crds.yaml >>"$logs/helm.log" 2>&1 && break
    ((try < 5)) || fail "apply the csi.ceph.io CRDs ($(tail -2 "$logs/helm.log"))"
    mark "csi.ceph.io CRDs: try $try failed ($(grep -c Timeout "$logs/helm.log") timeouts so far), again"
    sleep 10
  done
  mark "csi.ceph.io CRDs applied ($((SECONDS - t0)) s, try $try)"
  local pin
  mapfile -t pin < <(rook_operator_pin)
  t0=$SECONDS
  # Under TCG on a loaded host the apiserver can answer a create with "Timeout: request did
  # not complete within requested timeout" (seen: 9 of the chart's objects, helm install
  # failed, the rest created): upgrade --install makes a retry finish the same release.
  for try in 1 2 3; do
    helm --kubeconfig /etc/kubernetes/admin.conf upgrade --install rook-ceph /opt/e2e/rook-ceph \
      --namespace rook-ceph --create-namespace \
      --set image.repository="$repo" --set image.tag="$tag" --set image.pullPolicy=Never \
      --set csi.installCsiOperator=false --set resources=null \
      --set-string cephCommandsTimeoutSeconds="$ROOK_CEPH_TIMEOUT" "${pin[@]}" \
      >>"$logs/helm.log" 2>&1 && break
    ((try < 3)) || fail "helm install rook-ceph ($(tail -3 "$logs/helm.log"))"
    mark "helm install rook-ceph: try $try failed ($(grep -c Timeout "$logs/helm.log") timeouts so far), again"
  done
  mark "helm install rook-ceph ($((SECONDS - t0)) s, try $try)"
  k get crd -o name | grep -c 'ceph.rook.io' | sed 's/^/ceph.rook.io CRDs: /' | tee -a "$out/marks.txt"
  wait_for 300 "CephCluster CRD established" condition - crd/cephclusters.ceph.rook.io Established
  wait_for 300 "CephConnection CRD established" condition - crd/cephconnections.csi.ceph.io Established
}

# Two nodes: Ceph's mon and mgr and Rook's operator on node 1 (prism-guest), beside the control
# plane. Left to the scheduler they go to node 2, the emptier one, whose 6 GiB were sized for its
# drives' daemons only (decision 0054); and the stage reads the mgr's log from node 1's own files
# (mgr_log_lines). One node: nothing (its CephCluster and chart values as before).
# rook_placement: the CephCluster's spec.placement for that, a YAML block indented for spec.
rook_placement() {
  [[ ${E2E_NODES:-1} == 2 ]] || return 0
  local on1="{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [prism-guest]}]}]}}}"
  printf '  placement:\n    mon: %s\n    mgr: %s\n' "$on1" "$on1"
}
# rook_operator_pin: helm's arguments for Rook's chart that keep its operator on node 1, one a line.
rook_operator_pin() {
  [[ ${E2E_NODES:-1} == 2 ]] || return 0
  printf '%s\n' --set-string 'nodeSelector.kubernetes\.io/hostname=prism-guest'
}

# rook_cluster [DEVICE [METADATA]]: the CephCluster, one mon, useAllNodes: false; with DEVICE,
# that one drive on this node for an OSD (Rook's prepare job decides how), its BlueStore DB on
# METADATA when given (config.metadataDevice).
rook_cluster() {
  local storage="storage: {useAllNodes: false, useAllDevices: false}" mgr="" placement
  placement=$(rook_placement)
  # The mgr's settings for its modules' SQLite store (libcephsqlite), when asked for: decision
  # 0051's diagnostics and its hypothesis put to the test.
  [[ -z ${E2E_CEPHSQLITE_DEBUG:-} ]] || mgr+="
      debug_cephsqlite: \"$E2E_CEPHSQLITE_DEBUG\""
  [[ -z ${E2E_CEPHSQLITE_LOCK_TIMEOUT:-} ]] || mgr+="
      cephsqlite_lock_renewal_timeout: \"$E2E_CEPHSQLITE_LOCK_TIMEOUT\""
  [[ -z ${1:-} ]] || storage="storage:
    useAllNodes: false
    useAllDevices: false
    nodes:
    - name: prism-guest
      devices:
      - name: \"$1\"${2:+
        config: {metadataDevice: \"$2\"\}}"
  k apply -f - <<EOF || fail "create CephCluster"
apiVersion: ceph.rook.io/v1
kind: CephCluster
metadata: {name: e2e, namespace: rook-ceph}
spec:
  dataDirHostPath: /var/lib/rook
  cephVersion: {image: "$E2E_ROOK_IMAGE"}
  mon: {count: 1, allowMultiplePerNode: true}
  mgr: {count: 1, allowMultiplePerNode: true}
  dashboard: {enabled: false}
  crashCollector: {disable: true}
  # metricsDisabled: no ceph-exporter DaemonSet. Debian packages no ceph-exporter binary, so
  # its pod crash-loops in an image of Debian's Ceph ("exec: ceph-exporter: executable file not
  # found", 2026-11-26). Prism reads the OSDs' admin sockets itself (decision 0027).
  monitoring: {enabled: false, metricsDisabled: true}
  $storage${placement:+
$placement}
  # Rook's probes run the ceph CLI (Python) in the daemon's container with a 5 s timeout, and
  # the startup probe gives a mon or mgr 70 s in all: too little for an emulated CPU, where the
  # CLI alone can take that long. The kubelet would restart the daemons the stage waits for.
  healthCheck:
    daemonHealth:
      mon: {interval: 45s, timeout: 600s}
    livenessProbe: {mon: {disabled: true}, mgr: {disabled: true}, osd: {disabled: true}}
    startupProbe: {mon: {disabled: true}, mgr: {disabled: true}, osd: {disabled: true}}
  cephConfig:
    global:
      osd_pool_default_size: "1"
      mon_warn_on_pool_no_redundancy: "false"
      # Debian's Ceph 20.2.4 (the image is the guest's root) defaults osd_class_dir to a
      # relative path, lib/x86_64-linux-gnu/rados-classes, and Rook runs every daemon in
      # /var/log/ceph: the OSD found no object class ("_load_class could not stat class
      # lib/x86_64-linux-gnu/rados-classes/libcls_lock.so"), answered the mgr's lock call with
      # EOPNOTSUPP, and devicehealth failed with "disk I/O error" (decision 0051). Ceph's own
      # images set an absolute path.
      osd_class_dir: "/usr/lib/x86_64-linux-gnu/rados-classes"${mgr:+
    mgr:$mgr}
EOF
  mark "CephCluster applied (accepted by Rook's CRD schema)"
}

# ceph_op ARGS...: the ceph CLI with the admin key the operator keeps, run in the operator's
# pod (the operator's image is the Ceph image).
ceph_op() {
  k -n rook-ceph exec deploy/rook-ceph-operator -- ceph --connect-timeout 30 \
    -c /var/lib/rook/rook-ceph/rook-ceph.config -k /var/lib/rook/rook-ceph/client.admin.keyring "$@"
}

# mgr_restarts: each mgr pod's container restarts (restartCount). A mgr that restarts leaves the
# RADOS lock on its SQLite store (libcephsqlite, the .mgr pool) to its successor: one suspect
# of the devicehealth module's failure (docs/decisions/0051-devicehealth-on-a-fresh-cluster.md).
mgr_restarts() {
  k -n rook-ceph get pods -l app=rook-ceph-mgr \
    -o jsonpath='{range .items[*]}{.metadata.name}={.status.containerStatuses[?(@.name=="mgr")].restartCount} {end}'
}

# mgr_log_lines: the mgr's log lines about its modules' SQLite store and what can break it (the
# module's failure and traceback, libcephsqlite and its striper, blocklisting, respawns), from
# the kubelet's files of every mgr container, with the lines around them.
mgr_log_lines() {
  grep -h -a -i -E -B3 -A15 'devicehealth|sqlite|RADOSStriper|blocklist|I/O error|respawn|Traceback' \
    /var/log/pods/rook-ceph_rook-ceph-mgr-*/*/*.log 2>/dev/null | head -3000
}

# mgr_store_failure: the mgr's log around its store's failure (a lock renewal that failed, the
# module's unhandled exception), apart from mgr_log_lines: with debug_cephsqlite 20 the store's
# calls fill those 3000 lines long before it fails.
mgr_store_failure() {
  grep -h -a -E -B5 -A30 'lock renewal failed|Unhandled exception|disk I/O error' \
    /var/log/pods/rook-ceph_rook-ceph-mgr-*/*/*.log 2>/dev/null | head -3000
}

# mgr_lock_keeper: every line of libcephsqlite's lock keeper (debug_cephsqlite 10: each renewal;
# 20: each 2 s tick): a gap between two is a renewal that waited on its OSD, or a keeper that
# did not run, and when.
mgr_lock_keeper() {
  grep -h -a -E 'lock_keeper_main|renewing lock|lock renewal' /var/log/pods/rook-ceph_rook-ceph-mgr-*/*/*.log 2>/dev/null
}

# ceph_diag DIR: what Ceph says about its health, its pools and PGs, crashes, the blocklist and
# the configuration Rook set, with the mgr's restarts and log lines (mgr_log_lines): enough to
# tell from one run why a mgr module fails.
ceph_diag() {
  local d=$1 id
  mkdir -p "$d"
  ceph_op health detail >"$d/health-detail.txt" 2>&1
  ceph_op -s >"$d/status.txt" 2>&1
  ceph_op osd pool ls detail >"$d/osd-pool-ls-detail.txt" 2>&1
  ceph_op pg dump pgs_brief >"$d/pg-dump-pgs-brief.txt" 2>&1
  ceph_op osd blocklist ls >"$d/osd-blocklist-ls.txt" 2>&1
  ceph_op config dump >"$d/config-dump.txt" 2>&1
  ceph_op mgr module ls >"$d/mgr-module-ls.txt" 2>&1
  ceph_op crash ls >"$d/crash-ls.txt" 2>&1
  for id in $(awk '$1 ~ /^[0-9]{4}-/ {print $1}' "$d/crash-ls.txt"); do
    ceph_op crash info "$id"
  done >"$d/crash-info.txt" 2>&1
  mgr_restarts >"$d/mgr-restarts.txt" 2>&1
  mgr_log_lines >"$d/mgr-log.txt"
  mgr_store_failure >"$d/mgr-store-failure.txt"
  mgr_lock_keeper >"$d/mgr-lock-keeper.txt"
  # The OSDs' slow and current ops with their durations: whether a write to the .mgr pool (the
  # store's lock renewal) took longer than the lock's timeout.
  ceph_op tell 'osd.*' dump_historic_slow_ops >"$d/osd-historic-slow-ops.txt" 2>&1
  ceph_op tell 'osd.*' dump_ops_in_flight >"$d/osd-ops-in-flight.txt" 2>&1
}

# watch_health: from the mgr's start, Ceph's health every minute as Rook's operator last read it
# (the CephCluster's status.ceph: health, check codes, when read) with the mgr's restarts, one
# line each (state/health-timeline.txt), and every tenth minute `ceph -s` (pools, PG states) on
# its own line; ceph_diag at the first MGR_MODULE_ERROR (state/health-at-module-error/): when a
# module fails and what the cluster was doing then. One ceph CLI call costs 25-60 s of the
# guest's two emulated CPUs (Python's start 10 s, librados's 4 s; 2026-12-08): three a minute,
# as this loop once made, left Rook and Ceph little of them.
watch_health() {
  local line seen="" n=0
  while sleep 60; do
    line="$(uptime_s) $(date -u +%T) mgr: $(mgr_restarts) | rook: $(rook_health 2>&1)"
    echo "$line" >>"$out/state/health-timeline.txt"
    if ((n++ % 10 == 0)); then
      echo "$(uptime_s) $(date -u +%T) ceph -s: $(ceph_op -s 2>&1 | tr -s ' \n' ' ')" >>"$out/state/health-timeline.txt"
    fi
    if [[ -z $seen && $line == *MGR_MODULE_ERROR* ]]; then
      seen=1
      mark "MGR_MODULE_ERROR: $(grep -o "Module '[^']*' has failed[^|;]*" <<<"$line" | head -1)"
      ceph_diag "$out/state/health-at-module-error"
    fi
  done
}

# rook_health: the CephCluster's status.ceph as one line: health, each check's code, severity
# and message, and when Rook's operator read them (it asks Ceph every minute).
rook_health() {
  k -n rook-ceph get cephcluster e2e -o go-template='{{with .status.ceph}}{{.health}} {{range $code, $c := .details}}{{$code}} {{$c.severity}}: {{$c.message}}; {{end}}(read {{.lastChecked}}){{else}}no status.ceph yet{{end}}'
}

# ceph_answers DIR: Ceph's own answers on the cluster's health and on whether osd.0 may go, as
# JSON, each command's exit status beside (ok-to-stop and safe-to-destroy say no with one): the
# replacement gate's inputs (issue 30 item 2; internal/plan/rook/testdata/ceph20 keeps copies).
ceph_answers() {
  local d=$1 name
  mkdir -p "$d"
  : >"$d/exit-status.txt"
  answer() {
    name=$1
    shift
    ceph_op "$@" -f json >"$d/$name.json" 2>"$d/$name.stderr"
    echo "$name $? ceph $*" >>"$d/exit-status.txt"
  }
  answer health health
  answer health-detail health detail
  answer pg-stat pg stat
  answer device-ls-by-host device ls-by-host prism-guest
  answer safe-to-destroy osd safe-to-destroy 0
  answer ok-to-stop osd ok-to-stop 0
}

# db_lv DISK: a 4 GiB GPT partition on DISK wrapped in LVM (one PV, VG prism-e2e-db, LV db
# filling it), as decision 0036 proposes Prism's agent hand DB slots to Rook: Ceph 20's
# ceph-volume loses a bare partition given as block.db (decision 0035). Prints the LV's path.
db_lv() {
  sgdisk --new=1:0:+4G --change-name=1:prism-e2e-db "$1" >&2 && udevadm settle --timeout=60 &&
    pvcreate "$1-part1" >&2 && vgcreate prism-e2e-db "$1-part1" >&2 &&
    lvcreate --yes --extents 100%FREE --name db prism-e2e-db >&2 && udevadm settle --timeout=60 &&
    echo /dev/prism-e2e-db/db
}

rook_stage() {
  local osd_dev db_dev meta=""
  osd_dev=$(ls /dev/disk/by-id/nvme-*_e2e-osd 2>/dev/null | head -1)
  db_dev=$(ls /dev/disk/by-id/nvme-*_e2e-db 2>/dev/null | head -1)
  if [[ -n $db_dev ]]; then
    meta=$(db_lv "$db_dev" 2>>"$logs/db-lv.log") || fail "DB LV on $db_dev ($(tail -2 "$logs/db-lv.log"))"
    mark "DB LV $meta on $db_dev-part1 ($(lvs --noheadings --units b --nosuffix -o lv_size prism-e2e-db/db | tr -d ' ') bytes)"
  fi
  watch_rook &
  imported
  rook_chart
  wait_for "$E2E_TIMEOUT" "ROOK OPERATOR RUNNING" condition rook-ceph deploy/rook-ceph-operator Available
  rook_cluster "$osd_dev" "$meta"
  mon_running() { [[ $(k -n rook-ceph get pods -l app=rook-ceph-mon -o jsonpath='{.items[*].status.phase}') == *Running* ]]; }
  wait_for "$E2E_TIMEOUT" "MON POD RUNNING" mon_running
  # The quorum as the mon itself reports it, through its admin socket.
  in_quorum() {
    k -n rook-ceph exec deploy/rook-ceph-mon-a -c mon -- ceph --admin-daemon /run/ceph/ceph-mon.a.asok mon_status >"$out/state/mon_status.json" 2>&1 &&
      grep -q '"quorum": \[' "$out/state/mon_status.json" && grep -q '"state": "leader"' "$out/state/mon_status.json"
  }
  wait_for "$E2E_TIMEOUT" "MON QUORUM (mon.a leader)" in_quorum
  # And the operator's own view: it logs the quorum and moves on to the mgr.
  op_saw_quorum() { k -n rook-ceph logs deploy/rook-ceph-operator 2>/dev/null | grep -q 'Monitors in quorum: \[a'; }
  wait_for "$E2E_TIMEOUT" "operator reports the mon quorum" op_saw_quorum
  mgr_running() { [[ $(k -n rook-ceph get pods -l app=rook-ceph-mgr -o jsonpath='{.items[*].status.phase}') == *Running* ]]; }
  wait_for "$E2E_TIMEOUT" "MGR POD RUNNING" mgr_running
  watch_health &
  k -n rook-ceph get cephcluster e2e -o jsonpath='{.status.phase} {.status.message}{"\n"}' | tee -a "$out/marks.txt"
  [[ -n $osd_dev ]] || return 0
  prepared() { [[ $(k -n rook-ceph get pods -l app=rook-ceph-osd-prepare -o jsonpath='{.items[*].status.phase}') == *Succeeded* ]]; }
  wait_for "$E2E_TIMEOUT" "OSD PREPARE JOB SUCCEEDED ($osd_dev)" prepared
  osd_running() { [[ $(k -n rook-ceph get pods -l app=rook-ceph-osd -o jsonpath='{.items[*].status.phase}') == *Running* ]]; }
  wait_for "$E2E_TIMEOUT" "OSD POD RUNNING" osd_running
  osd_up() { ceph_op osd dump --format json >"$out/state/osd-dump.json" 2>&1 && grep -q '"up": *1' "$out/state/osd-dump.json"; }
  wait_for "$E2E_TIMEOUT" "OSD UP (ceph osd dump)" osd_up
  ceph_op osd metadata 0 --format json-pretty >"$out/state/osd-metadata.json" 2>&1
  ceph_op -s >"$out/state/ceph-status.txt" 2>&1
  grep -E '"(devices|bluestore_bdev_dev_node|bluestore_bdev_size|bluefs_dedicated_db|bluefs_db_devices|bluefs_db_size|osd_objectstore|ceph_version)"' \
    "$out/state/osd-metadata.json" | tee -a "$out/marks.txt"
  ceph_diag "$out/state/health-end"
  ceph_answers "$out/state/ceph-answers/end"
  mark "health at the end: $(head -1 "$out/state/health-end/health-detail.txt")"
}

# drill_env: the suite's settings for the failure drills (E2E_DRILLS=1 in the chain), one
# NAME=VALUE a line; nothing otherwise, so that the default chain is unchanged. The drives are
# the lines run.sh wrote; --remove kills a drive by its fabric serial (prism-nvmet-loop).
drill_env() {
  [[ ${E2E_DRILLS:-} == 1 && $E2E_STAGE == chain ]] || return 0
  echo "PRISM_E2E_DRILLS=1"
  echo "PRISM_E2E_DRILL_ADD=prism-nvmet-loop /etc/prism-e2e-nvmet-drill-add.txt"
  echo "PRISM_E2E_DRILL_REPLACE=prism-nvmet-loop /etc/prism-e2e-nvmet-drill-new.txt"
  echo "PRISM_E2E_DRILL_FAIL=prism-nvmet-loop --remove"
  echo "PRISM_E2E_RUNBOOKS=/opt/e2e/runbooks"
}

# suite_timeout: the suite's -test.timeout and -ginkgo.timeout: 100 min, 190 with the drills,
# 200 on two nodes (each guest at half speed, as hack/e2e/run.sh doubles the guest's limit).
suite_timeout() {
  if [[ -n $(drill_env) ]]; then
    echo 190m
  elif [[ ${E2E_NODES:-1} == 2 ]]; then
    echo 200m
  else
    echo 100m
  fi
}

# upgrade_drill: with E2E_UPGRADE_FROM (hack/e2e/run.sh PRISM_E2E_UPGRADE_FROM), the suite runs
# the upgrade drill alone (test/e2e/upgrade_test.go, label upgrade): the previous release's
# chart (/opt/e2e/prism-previous) and image (prism-previous.tar), then this tree's. Adds to
# prism_stage's suite_env and suite_args.
upgrade_drill() {
  [[ -n ${E2E_UPGRADE_FROM:-} ]] || return 0
  suite_env+=(PRISM_E2E_UPGRADE_FROM="$E2E_UPGRADE_FROM" PRISM_E2E_UPGRADE_CHART=/opt/e2e/prism-previous
    PRISM_E2E_UPGRADE_IMAGE="$E2E_UPGRADE_IMAGE" PRISM_E2E_UPGRADE_VERSION="$E2E_UPGRADE_VERSION"
    PRISM_E2E_VERSION="$E2E_VERSION")
  suite_args+=(-ginkgo.label-filter=upgrade)
  mark "upgrade drill: from $E2E_UPGRADE_FROM ($E2E_UPGRADE_IMAGE, $E2E_UPGRADE_VERSION) to this tree ($E2E_VERSION)"
}

# 8. Prism (E2E_STAGE=prism): the drives, Rook's chart and a CephCluster (no operator: the
# suite checks what Prism writes into it), Prism's image, then the suite, which installs
# Prism's chart itself. Each spec's outcome becomes a mark. E2E_STAGE=chain: the same with
# Rook's real operator started first (as rook_stage does), and the suite told so: it then
# waits for Ceph's OSDs too.
prism_stage() {
  # The stranger pod that tries Prism's endpoints runs the sleep image's probe (hack/e2e/sleep);
  # the suite's Prometheus runs hack/e2e/prometheus-image.sh's image.
  local suite_env=(PRISM_E2E_HOTADD="prism-nvmet-loop /etc/prism-e2e-nvmet-hotadd.txt" PRISM_E2E_PROBE_IMAGE=prism.local/e2e/sleep:v1
    PRISM_E2E_PROMETHEUS_IMAGE=prism.local/e2e/prometheus:v2.42.0)
  # The emulated control plane answers a lease renewal in seconds, tens of seconds on a loaded
  # host: with kube-controller-manager's 10 s renew deadline both operator replicas lost the
  # lease in turn and restarted 8 times in the chain's first 16 min (2026-12-07).
  suite_env+=(PRISM_E2E_HELM_SET=operator.leaderElection.leaseDuration=120s,operator.leaderElection.renewDeadline=90s,operator.leaderElection.retryPeriod=20s)
  prism-nvmet-loop /etc/prism-e2e-nvmet.txt >"$out/state/nvmet.txt" 2>"$logs/nvmet.log" ||
    fail "prism-nvmet-loop ($(tail -2 "$logs/nvmet.log"))"
  while read -r q _ dev model; do mark "drive $q: /dev/$dev \"$model\""; done <"$out/state/nvmet.txt"
  if [[ $E2E_STAGE == chain ]]; then
    watch_rook &
    imported
    rook_chart
    wait_for "$E2E_TIMEOUT" "ROOK OPERATOR RUNNING" condition rook-ceph deploy/rook-ceph-operator Available
    rook_cluster
    watch_health &
    suite_env+=(PRISM_E2E_ROOK_OPERATOR=1)
  else
    rook_chart
    rook_cluster
    imported
  fi
  local suite_args=() line
  if [[ ${E2E_NODES:-1} == 2 ]]; then
    wait_for "$E2E_TIMEOUT" "NODE 2 READY" condition - node/prism-guest-2 Ready
    wait_for "$E2E_TIMEOUT" "node 2's drives connected and images in" test -e /mnt/xfer/node2-ready
    suite_env+=(PRISM_E2E_NODES=2 PRISM_E2E_NODE2=prism-guest-2)
  fi
  while IFS= read -r line; do suite_env+=("$line"); done < <(drill_env)
  [[ -z ${E2E_SUITE_LABELS:-} ]] || suite_args+=(-ginkgo.label-filter "$E2E_SUITE_LABELS")
  upgrade_drill
  if [[ -n $E2E_REBOOT ]]; then
    suite_env+=(PRISM_E2E_REBOOT=record PRISM_E2E_REBOOT_RECORD=/var/lib/e2e/reboot-record.json)
    suite_args+=(-ginkgo.label-filter reboot-before)
  fi
  run_suite
  [[ -z $E2E_REBOOT ]] || reboot_shutdown
}

# run_suite: the e2e suite with suite_env and suite_args (the caller's), each spec's outcome a
# mark; its limit 100 min, 190 with the drills (suite_timeout).
run_suite() {
  local rc=0 timeout
  timeout=$(suite_timeout)
  mark "PRISM SUITE START ${suite_args[*]} (timeout $timeout)"
  env "${suite_env[@]}" PRISM_E2E=1 KUBECONFIG=/etc/kubernetes/admin.conf PRISM_E2E_HELM=/mnt/host/bin/helm \
    PRISM_E2E_CHART=/opt/e2e/prism PRISM_E2E_CEPHCLUSTER=rook-ceph/e2e PRISM_E2E_NODE=prism-guest \
    PRISM_E2E_KUBECTL_PRISM=/mnt/host/bin/kubectl-prism PRISM_E2E_SAMPLES=/opt/e2e/samples \
    PRISM_E2E_TIMEOUT="${E2E_TIMEOUT}s" PRISM_E2E_ARTIFACTS="$out/state/suite" prism-e2e.test -test.v -test.timeout "$timeout" -ginkgo.timeout "$timeout" \
    -ginkgo.v -ginkgo.no-color -ginkgo.junit-report "$out/junit-boot$E2E_BOOT.xml" "${suite_args[@]}" 2>&1 |
    tee "$logs/suite.log" | while IFS= read -r line; do
      [[ $line != e2e-spec:* ]] || mark "${line#e2e-spec: }"
      [[ $line != e2e-drill:* ]] || mark "drill: ${line#e2e-drill: }"
    done
  rc=${PIPESTATUS[0]}
  ((rc == 0)) || fail "PRISM SUITE FAILED (exit $rc): $(grep -E '^\s*\[FAIL\]|Summarizing' "$logs/suite.log" | head -3 | tr '\n' ' ')"
  mark "PRISM SUITE PASSED"
}

# children PID: the pids whose parent is PID.
children() {
  local f
  for f in /proc/[0-9]*/stat; do
    awk -v p="$1" '$4 == p {print $1}' "$f" 2>/dev/null
  done
}

# stop NAME: the bg daemon NAME and its restart loop, SIGTERM, up to 60 s to exit.
stop() {
  local loop kids k
  loop=$(cat "/run/e2e-$1.pid")
  kids=$(children "$loop")
  kill "$loop" $kids 2>/dev/null
  for k in $kids; do
    for _ in $(seq 60); do [[ -d /proc/$k ]] || break; sleep 1; done
  done
  mark "stopped $1"
}

# reboot_shutdown: the end of the reboot drill's first boot, as a node's shutdown: the node's
# identity kept on the work disk (the root is RAM), the kubelet and etcd stopped, the disks
# synced; the guest then powers off (hack/guest/init) and hack/e2e/run.sh boots it again.
reboot_shutdown() {
  mkdir -p /var/lib/e2e/node-etc
  cp -a /etc/kubernetes /etc/machine-id /etc/nvme /var/lib/e2e/node-etc/ || fail "save /etc's node identity"
  collect
  mv "$out/state" "$out/state-boot1" && mkdir -p "$out/state"
  stop kubelet
  stop etcd
  sync
  mark "REBOOT: first boot done, disks synced, powering off"
  exit 0
}

# hide_backing_disks FILE: the reboot drill's second boot, before anything of the node runs. The
# prism stage's emulated disks under the fabric drives (FILE's lines that name a QEMU serial)
# hold the GPT and the LVM labels the agent wrote through the fabric; at this boot the kernel
# read their partitions and udev's LVM rule (no systemd: vgchange -aay at once) activated
# Prism's VGs on them. A node has no such second path: with it, LVM finds each PV twice once the
# fabric connects and keeps the one in use, the emulated disk's partition, so the agent refuses
# the slot's volume ("a volume group named ... exists on" that partition). So their VGs are
# deactivated, the kernel forgets their partitions (BLKPG: nothing is written to a disk) and
# LVM its record of what autoactivation saw; the fabric's partitions are then the PVs' only path,
# and udev activates the VGs through them when the fabric connects, as on a node that boots.
hide_backing_disks() {
  local q _ link name p vg vgs=() names=()
  while read -r q _; do
    [[ -z $q || $q == \#* || $q == sparse:* ]] && continue
    link=$(ls /dev/disk/by-id/nvme-*_"$q" 2>/dev/null | head -1)
    [[ -n $link ]] || { echo "no emulated disk with serial $q" >&2; return 1; }
    name=$(basename "$(readlink -f "$link")")
    for p in /sys/block/"$name"/"$name"p*; do
      [[ -e $p ]] || continue
      names+=("$name")
      vg=$(pvs --noheadings -o vg_name "/dev/$(basename "$p")" 2>/dev/null | tr -d ' ')
      [[ -z $vg ]] || vgs+=("$vg")
    done
  done <"$1"
  if ((${#vgs[@]})); then
    # lvchange on a VG's name: every LV of it.
    lvchange --activate n "${vgs[@]}" || return 1
  fi
  # udev's probes of the partitions (a brief open each) would make the deletion EBUSY.
  udevadm settle --timeout=60
  for name in $(printf '%s\n' "${names[@]}" | sort -u); do
    partx --delete "/dev/$name" || return 1
    ! compgen -G "/sys/block/$name/${name}p*" >/dev/null || { echo "$name still has partitions" >&2; return 1; }
  done
  rm -rf /run/lvm/pvs_online /run/lvm/vgs_online /run/lvm/pvs_lookup /run/lvm/hints
}

# reboot_stage: the reboot drill's second boot. The kubelet restarts the agent before any
# drive is connected (a node whose fabric or HBA comes up late): the agent must publish without
# them and touch nothing; then the drives appear, under other kernel names, and the suite
# compares the node with what it recorded before the reboot.
reboot_stage() {
  local boot_time suite_env suite_args
  boot_time=$(date -u -d "@$(($(date +%s) - $(cut -d. -f1 /proc/uptime)))" +%Y-%m-%dT%H:%M:%SZ)
  agent_started() {
    k -n prism-system get pods -l app.kubernetes.io/component=agent \
      -o jsonpath='{range .items[*].status.containerStatuses[*]}{.state.running.startedAt}{"\n"}{end}' 2>/dev/null |
      awk -v b="$boot_time" '$1 >= b {ok = 1} END {exit !ok}'
  }
  wait_for "$E2E_TIMEOUT" "AGENT RUNNING AGAIN (since $boot_time), no drive connected" agent_started
  inventoried() { [[ $(k get storagenode prism-guest -o jsonpath='{.status.lastInventoryTime}' 2>/dev/null) > "$boot_time" ]]; }
  wait_for "$E2E_TIMEOUT" "the agent published an inventory without its drives" inventoried
  k get storagenode prism-guest -o yaml >"$out/state/storagenode-no-drives.yaml" 2>&1
  k -n rook-ceph get cephcluster e2e -o yaml >"$out/state/cephcluster-no-drives.yaml" 2>&1
  awk '{l[NR] = $0} END {for (i = NR; i > 0; i--) print l[i]}' /etc/prism-e2e-nvmet.txt >/run/prism-e2e-nvmet-reversed.txt
  prism-nvmet-loop /run/prism-e2e-nvmet-reversed.txt >"$out/state/nvmet.txt" 2>"$logs/nvmet.log" ||
    fail "prism-nvmet-loop ($(tail -2 "$logs/nvmet.log"))"
  while read -r q back dev model; do mark "drive $q: /dev/$dev over $back \"$model\" (boot $E2E_BOOT)"; done <"$out/state/nvmet.txt"
  suite_env=(PRISM_E2E_REBOOT=verify PRISM_E2E_REBOOT_RECORD=/var/lib/e2e/reboot-record.json)
  suite_args=(-ginkgo.label-filter reboot-after)
  run_suite
}

mark "start stage=$E2E_STAGE kernel=$(uname -r) $(dpkg-query -W ceph-mon containerd runc | tr '\t\n' '= ')"

# 1. The host side of a node: shared mounts, cgroup v2 with its controllers, a work disk for
# everything that grows (the root is an initramfs in RAM), the modules and sysctls of a
# container network.
mount --make-rshared /
mount -t cgroup2 cgroup2 /sys/fs/cgroup || fail "mount cgroup2"
echo "+cpu +cpuset +io +memory +pids" >/sys/fs/cgroup/cgroup.subtree_control || fail "cgroup controllers"
work=$(ls /dev/disk/by-id/nvme-*_e2e-work 2>/dev/null | head -1)
[[ -n $work ]] || fail "no e2e-work disk (hack/e2e/run.sh adds --disk e2e-work:SIZE)"
mkdir -p /var/lib/e2e
if [[ $E2E_BOOT != 1 ]]; then
  # The reboot drill's second boot: everything as the first boot left it on the work disk,
  # and the node's identity (key material, tokens, machine-id, NVMe host NQN) back in /etc.
  mount "$work" /var/lib/e2e || fail "mount $work (boot $E2E_BOOT)"
  [[ -d /var/lib/e2e/node-etc ]] || fail "boot $E2E_BOOT: no node-etc on the work disk (the first boot did not finish)"
  cp -a /var/lib/e2e/node-etc/. /etc/
  mark "boot $E2E_BOOT: work disk as the first boot left it (etcd, kubelet, containerd, pod logs); /etc/kubernetes, machine-id, hostnqn restored"
  hide_backing_disks /etc/prism-e2e-nvmet.txt 2>"$logs/hide-backing.log" ||
    fail "boot $E2E_BOOT: hide the emulated disks under the fabric drives from LVM ($(tail -2 "$logs/hide-backing.log"))"
  mark "boot $E2E_BOOT: the emulated disks under the fabric drives hidden from LVM (VGs deactivated, partitions forgotten)"
elif [[ ${E2E_REUSE_WORK:-} == 1 && $(blkid -o value -s TYPE "$work") == ext4 ]]; then
  # A node rebooted into a new cluster: containerd's content and metadata stay (the old run's
  # containers in it are the kubelet's to remove, as after any reboot: their pods do not exist
  # in the new etcd); everything of the old cluster goes.
  mount "$work" /var/lib/e2e || fail "mount $work (reused)"
  rm -rf /var/lib/e2e/etcd /var/lib/e2e/kubelet /var/lib/e2e/rook /var/lib/e2e/log
  mark "work disk reused: containerd kept; etcd, kubelet, rook and pod logs anew"
else
  mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$work" || fail "mkfs.ext4 $work"
  mount "$work" /var/lib/e2e || fail "mount $work"
fi
for d in containerd kubelet etcd rook; do
  mkdir -p "/var/lib/e2e/$d" "/var/lib/$d"
  mount --bind "/var/lib/e2e/$d" "/var/lib/$d"
done
mkdir -p /var/lib/e2e/log /var/log/pods /var/log/containers
mount --bind /var/lib/e2e/log /var/log/pods
modprobe -a overlay br_netfilter bridge veth dummy nf_conntrack nf_tables nft_compat nft_chain_nat \
  xt_conntrack xt_comment xt_mark xt_addrtype xt_MASQUERADE xt_nat xt_multiport xt_statistic \
  nf_nat iptable_nat iptable_filter 2>"$logs/modprobe.log"
# The kubelet maps a local block volume (Prism's claims for cached OSDs, decision 0010) with
# `losetup -f`: a loop module (6.12) is not loaded by a /dev/loop-control that does not exist yet.
modprobe loop 2>>"$logs/modprobe.log" || fail "modprobe loop"
echo 1 >/proc/sys/net/ipv4/ip_forward
echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
echo 1 >/proc/sys/net/bridge/bridge-nf-call-ip6tables
node_name=prism-guest node_ip=10.250.0.1 pod_cidr=10.244.0.0/24 ip_masq=true
if [[ ${E2E_NODES:-1} == 2 ]]; then
  ident=$(node_identity "${E2E_NODE:-}") || fail "E2E_NODE=${E2E_NODE:-}: want 1 or 2"
  read -r node_name node_ip pod_cidr peer_ip peer_cidr <<<"$ident"
  # The hand-over share first: a failure from here on reaches the other node (fail, peer_gone),
  # the link's own included.
  mkdir -p /mnt/xfer && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 prism-xfer /mnt/xfer ||
    fail "mount the hand-over share (prism-xfer)"
  two_node_link "${E2E_NIC_MAC:-}" "$node_ip" "$peer_ip" "$peer_cidr" 2>"$logs/link.log" ||
    fail "the link to the other node ($(tail -2 "$logs/link.log"))"
  { ip -br link; ip -br addr; ip route; } >>"$logs/link.log" 2>&1 # the NIC's name and state, the routes
  ip_masq=false
  printf '127.0.0.1 localhost\n10.250.0.1 prism-guest\n10.250.0.2 prism-guest-2\n' >/etc/hosts
  hostname "$node_name"
  # The guest build ships one /etc/machine-id, the same in both guests: each node its own.
  tr -d '-' </proc/sys/kernel/random/uuid >/etc/machine-id
  # The clock, to compare the two guests' (node 2 checks certificates node 1 made: NotBefore).
  mark "two nodes: this is $node_name ($node_ip, pods $pod_cidr; $peer_cidr via $peer_ip), clock $(date -u +%FT%TZ)"
  # Node 2's QEMU may have ended once started (hack/e2e/run.sh then wrote xfer/node2-exited).
  gone=$(peer_gone) && fail "$gone"
else
ip link add prism0 type dummy && ip addr add "$node_ip/24" dev prism0 && ip link set prism0 up ||
  fail "dummy interface prism0"
ip route add default dev prism0 2>/dev/null # kube-proxy and the kubelet want a default route
printf '127.0.0.1 localhost\n%s prism-guest\n' "$node_ip" >/etc/hosts
fi
[[ -s /etc/machine-id ]] || tr -d '-' </proc/sys/kernel/random/uuid >/etc/machine-id
: >/etc/resolv.conf
mark "host ready"

# 2. containerd: the default configuration with the sandbox image replaced by the imported
# sleep image, and the CNI plugins where containerd looks for them.
mkdir -p /etc/containerd /etc/cni/net.d /opt/cni
ln -sfn /usr/lib/cni /opt/cni/bin
containerd config default >/etc/containerd/config.toml
sed -i 's#registry.k8s.io/pause:[0-9.]*#prism.local/e2e/sleep:v1#' /etc/containerd/config.toml
grep -q prism.local/e2e/sleep /etc/containerd/config.toml || fail "no sandbox image setting in containerd's default config"
# The kernel has AppArmor but the guest has no apparmor_parser (nor securityfs mounted).
sed -i 's/disable_apparmor = false/disable_apparmor = true/' /etc/containerd/config.toml
# A kernel that keeps the initramfs as the root mount itself (6.12: FSTYPE rootfs; 7.2 mounts
# it over another root) refuses runc's pivot_root ("pivot_root .: invalid argument"): runc
# must move the root and chroot instead.
if [[ $(findmnt -n -o FSTYPE /) == rootfs ]]; then
  opts="[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]"
  grep -qF "$opts" /etc/containerd/config.toml || fail "no runc options section in containerd's default config"
  grep -q NoPivotRoot /etc/containerd/config.toml && fail "containerd's default config sets NoPivotRoot already"
  awk -v h="$opts" '{ print; t = $0; gsub(/^ +| +$/, "", t); if (t == h) print "NoPivotRoot = true" }' \
    /etc/containerd/config.toml >/etc/containerd/config.toml.new && mv /etc/containerd/config.toml.new /etc/containerd/config.toml
  grep -q '^NoPivotRoot = true' /etc/containerd/config.toml || fail "NoPivotRoot not set in containerd's config"
  mark "the root is the initramfs (rootfs): runc runs without pivot_root"
fi
cni_conflist "$pod_cidr" "$ip_masq" >/etc/cni/net.d/10-prism-e2e.conflist
bg containerd containerd --config /etc/containerd/config.toml
wait_for 120 "containerd up" ctr version
# have_image FILE: containerd already holds the image FILE holds (E2E_IMAGES), by name and
# manifest digest: a reused work disk's image is used only if it is the same build.
have_image() {
  local e ref
  for e in ${E2E_IMAGES:-}; do
    [[ ${e%%=*} == "$(basename "$1")" ]] || continue
    ref=${e#*=}
    ctr -n k8s.io images ls "name==${ref%@*}" 2>/dev/null | awk 'NR > 1 {print $3}' | grep -qx "${ref##*@}" && return 0
  done
  return 1
}
# import_image FILE: one OCI archive into containerd's k8s.io namespace, unless it has it.
import_image() {
  local f=$1 t0=$SECONDS
  if have_image "$f"; then
    mark "$(basename "$f"): already in containerd (same name and digest), not imported"
    return 0
  fi
  ctr -n k8s.io images import "$f" >>"$logs/import-$(basename "$f" .tar).log" 2>&1 || return 1
  mark "imported $(basename "$f") $(du -m "$f" | cut -f1) MiB ($((SECONDS - t0)) s)"
}
# The sleep image first: it is the pod sandbox image. The others (the Rook/Ceph image is
# 840 MiB: minutes under TCG) import in the background while the control plane starts;
# stages that need them wait for the import (imported).
import_image /mnt/host/images/sleep.tar || fail "ctr import sleep.tar"
others=()
for f in /mnt/host/images/*.tar; do
  [[ -f $f && $f != */sleep.tar ]] && others+=("$f")
done
(for f in "${others[@]}"; do import_image "$f" || { echo "$f" >>/run/e2e-import-failed; }; done
  touch /run/e2e-imported) &
imported() {
  wait_for "$E2E_TIMEOUT" "images imported" test -e /run/e2e-imported
  [[ ! -e /run/e2e-import-failed ]] || fail "ctr import $(cat /run/e2e-import-failed)"
}

# 3. Key material, static tokens (the guest's only users) and kubeconfigs.
pki=/etc/kubernetes/pki
if [[ ${E2E_NODE:-1} == 2 ]]; then
  wait_for "$((3 * E2E_TIMEOUT))" "node 1's credentials for node 2" test -d /mnt/xfer/node2
  take_over /mnt/xfer || fail "take over node 1's credentials"
  mark "pki from node 1"
elif [[ $E2E_BOOT != 1 ]]; then
  [[ -f /etc/kubernetes/admin.conf && -f $pki/tokens.csv ]] || fail "boot $E2E_BOOT: no saved key material"
  mark "pki and tokens as the first boot made them"
else
pki -dir $pki -ip 127.0.0.1 -ip 10.96.0.1 -ip $node_ip -dns localhost -dns kubernetes \
  -dns kubernetes.default -dns kubernetes.default.svc -dns kubernetes.default.svc.cluster.local || fail "pki"
token() { tr -d '-' </proc/sys/kernel/random/uuid; }
declare -A tokens
: >$pki/tokens.csv
user() { # NAME [GROUP]: the bootstrap RBAC roles bind these names.
  tokens[$1]=$(token)
  echo "${tokens[$1]},$1,$1${2:+,\"$2\"}" >>$pki/tokens.csv
}
user admin system:masters
user system:kube-controller-manager
user system:kube-scheduler
user system:node:prism-guest system:nodes
user system:kube-proxy
[[ ${E2E_NODES:-1} != 2 ]] || user system:node:prism-guest-2 system:nodes
kubeconfig() { # FILE USER [SERVER]
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "${3:-https://127.0.0.1:6443}", certificate-authority: $pki/ca.crt}
users:
- name: $2
  user: {token: "${tokens[$2]}"}
contexts:
- name: e2e
  context: {cluster: e2e, user: "$2"}
current-context: e2e
EOF
}
kubeconfig /etc/kubernetes/admin.conf admin
kubeconfig /etc/kubernetes/kcm.conf system:kube-controller-manager
kubeconfig /etc/kubernetes/scheduler.conf system:kube-scheduler
kubeconfig /etc/kubernetes/kubelet.conf system:node:prism-guest
kubeconfig /etc/kubernetes/proxy.conf system:kube-proxy
if [[ ${E2E_NODES:-1} == 2 ]]; then
  handover /mnt/xfer || fail "hand node 2's credentials over"
  mark "node 2's credentials handed over"
fi
mark "pki ready"
fi

# 4. The control plane (node 2 of two: node 1's).
if [[ ${E2E_NODE:-1} == 2 ]]; then
  wait_for "$((3 * E2E_TIMEOUT))" "node 1's apiserver ready" k get --raw /readyz
else
bg etcd etcd --data-dir /var/lib/etcd --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
  --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380 \
  --unsafe-no-fsync
bg kube-apiserver kube-apiserver --etcd-servers http://127.0.0.1:2379 --advertise-address $node_ip \
  --secure-port 6443 --tls-cert-file $pki/apiserver.crt --tls-private-key-file $pki/apiserver.key \
  --client-ca-file $pki/ca.crt --token-auth-file $pki/tokens.csv --authorization-mode Node,RBAC \
  --enable-admission-plugins NodeRestriction --allow-privileged=true \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file $pki/sa.pub \
  --service-account-signing-key-file $pki/sa.key --service-cluster-ip-range 10.96.0.0/16 \
  --request-timeout 5m # TCG: creates can take longer than the default minute
wait_for "$E2E_TIMEOUT" "apiserver ready" k get --raw /readyz
# A reboot's second boot shares out/ with the first, whose linger may have left the mark.
rm -f "$out/cmd/.lingering"
live_cmds &
watcher_pid=$!
# --node-monitor-grace-period: under TCG the write count's load kept the kubelet from the
# apiserver ("TLS handshake timeout") past the default 50 s; the node went NotReady, and 5 min
# later the taint-eviction controller deleted Rook's operator mid-count (2026-12-07). A node
# that misses its heartbeats for 10 minutes here is a stalled emulator, not a lost node.
bg kube-controller-manager kube-controller-manager --kubeconfig /etc/kubernetes/kcm.conf \
  --authentication-kubeconfig /etc/kubernetes/kcm.conf --authorization-kubeconfig /etc/kubernetes/kcm.conf \
  --service-account-private-key-file $pki/sa.key --root-ca-file $pki/ca.crt \
  --use-service-account-credentials --leader-elect=false --bind-address 127.0.0.1 \
  --node-monitor-grace-period 10m0s
bg kube-scheduler kube-scheduler --kubeconfig /etc/kubernetes/scheduler.conf \
  --authentication-kubeconfig /etc/kubernetes/scheduler.conf --authorization-kubeconfig /etc/kubernetes/scheduler.conf \
  --leader-elect=false --bind-address 127.0.0.1
fi

# 5. The node: kubelet (cgroupfs, like containerd's default runc options) and kube-proxy.
cat >/etc/kubernetes/kubelet.yaml <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
# The guest is its own world: the apiserver reaches the kubelet (logs, exec) without credentials.
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
address: $node_ip
failSwapOn: false
resolvConf: ""
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
bg kubelet kubelet --config /etc/kubernetes/kubelet.yaml --kubeconfig /etc/kubernetes/kubelet.conf \
  --hostname-override "$node_name" --node-ip $node_ip --root-dir /var/lib/kubelet
bg kube-proxy kube-proxy --kubeconfig /etc/kubernetes/proxy.conf --hostname-override "$node_name" \
  --proxy-mode iptables --cluster-cidr 10.244.0.0/16 --conntrack-max-per-core 0 --bind-address 127.0.0.1
# Every two minutes, what the cluster looks like, on the share (readable while the guest runs);
# node 1's, with two nodes.
[[ ${E2E_NODE:-1} == 2 ]] || (while sleep 120; do
  { date; k get pods -A -o wide; } >"$out/state/live.txt.tmp" 2>&1
  mv "$out/state/live.txt.tmp" "$out/state/live.txt"
done) &
wait_for "$E2E_TIMEOUT" "node registered" k get node "$node_name"
wait_for "$E2E_TIMEOUT" "NODE READY" condition - "node/$node_name" Ready
k get node -o wide | tee -a "$out/marks.txt"

# 6. A pod from the imported image, through the scheduler, the kubelet, containerd and runc.
# Not in the reboot drill (E2E_REBOOT), which needs the node only for Prism's pods: on its
# second boot the kubelet restarts the pods the node had. Node 2 of two: node 1 runs them.
if [[ ${E2E_NODE:-1} == 2 ]]; then
  worker_stage
  collect
  mark "done"
  exit 0
fi
if [[ -z $E2E_REBOOT ]]; then
wait_for "$E2E_TIMEOUT" "default service account" k -n default get serviceaccount default
apply_retried "create pod" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: sleep, namespace: default}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - {name: sleep, image: prism.local/e2e/sleep:v1, imagePullPolicy: Never, args: ["3600"]}
EOF
wait_for "$E2E_TIMEOUT" "POD RUNNING" condition default pod/sleep Ready
k -n default get pod sleep -o wide | tee -a "$out/marks.txt"
k -n default logs sleep | tee -a "$out/marks.txt"

# 6b. The service network as an in-cluster client sees it: kube-proxy's rules to the apiserver,
# the service account's token and the published CA (what Rook's operator needs).
apply_retried "create apiprobe pod" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: apiprobe, namespace: default}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - {name: probe, image: prism.local/e2e/sleep:v1, imagePullPolicy: Never, args: ["apiprobe"]}
EOF
probed() { k -n default logs apiprobe 2>/dev/null | grep -q '^apiprobe: '; }
wait_for "$E2E_TIMEOUT" "apiprobe pod ran" probed
k -n default logs apiprobe | tee -a "$out/marks.txt"
k -n default logs apiprobe | grep -q '^apiprobe: 200 https://10.96.0.1:443/version' || fail "in-cluster API access"
mark "IN-CLUSTER API ACCESS (service 10.96.0.1 via kube-proxy)"
cross_node_probe
fi

if [[ -n ${E2E_HAND:-} ]]; then
  mark "by hand: $E2E_HAND"
  source "$E2E_HAND"
  collect
  release_peer
  mark "done"
  exit 0
fi
# linger: with E2E_LINGER=SECONDS (hack/e2e/run.sh PRISM_E2E_LINGER), the finished (or failed) stage keeps
# its cluster up that long for the scripts of run_cmds. A file cmd/done ends it early. For
# looking at a live cluster by hand; the guest's own time limit (hack/e2e/run.sh) still applies.
linger() {
  local limit=${E2E_LINGER:-0} t0
  ((limit > 0)) || return 0
  mkdir -p "$out/cmd"
  touch "$out/cmd/.lingering"
  # A script the stage's watcher (live_cmds) started runs on: the cluster stays up until it
  # ends (the guest's own limit still applies; a write count started there was cut off once),
  # and the watcher ends then, so that linger's scripts never run beside one of its own.
  while watcher_running && [[ ! -e /mnt/host/cmd/done ]]; do
    sleep 5
  done
  t0=$SECONDS
  mark "lingering up to $limit s: scripts in the share's cmd/ run here"
  while ((SECONDS - t0 < limit)) && [[ ! -e /mnt/host/cmd/done ]]; do
    run_cmds
    sleep 5
  done
  mark "linger over ($((SECONDS - t0)) s)"
}

# watcher_running: the stage's live_cmds (watcher_pid) has not ended.
watcher_running() {
  [[ -n ${watcher_pid:-} ]] && kill -0 "$watcher_pid" 2>/dev/null
}

case $E2E_STAGE in
  rook) rook_stage ;;
  prism | chain)
    if [[ $E2E_BOOT == 1 ]]; then prism_stage; else reboot_stage; fi
    if [[ $E2E_STAGE == chain && ${E2E_BENCH_WRITES_MIB:-} ]]; then
      BENCH_WRITES_MIB=$E2E_BENCH_WRITES_MIB
      source /opt/e2e/bench-writes.sh
      bench_writes
    fi
    ;;
  rook-chart)
    rook_chart
    rook_cluster
    k -n rook-ceph get deploy,pods -o wide | tee -a "$out/marks.txt"
    ;;
esac
linger
collect
release_peer
mark "done"
