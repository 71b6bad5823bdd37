#!/usr/bin/env bash
# The e2e guest's work disk (vm/disk-e2e-work.qcow2) made on the host, its containerd already
# holding the run's images: importing the 660-840 MiB Rook/Ceph archive with the guest's own
# `ctr -n k8s.io images import` took about 25 min under TCG, natively well under a minute
# (docs/decisions/0053-host-made-work-disk.md). Prints the path of the cached qcow2 image.
#
#   hack/e2e/workdisk.sh GUEST_DIR SIZE ARCHIVE=NAME@DIGEST...
#
# GUEST_DIR is the forky guest hack/guest/build.sh printed; its own containerd and ctr (from
# base.cpio, run through the guest root's dynamic loader and libc, whatever this host's glibc)
# import each ARCHIVE (an OCI archive, hack/e2e/run.sh's image_ref names its one manifest) into
# a private root, unpacked with the overlayfs snapshotter as in the guest. That root becomes
# containerd/ of an ext4 file system of SIZE (mkfs.ext4 -d), converted to qcow2: the guest mounts
# it where it mounts its work disk (guest-cluster.sh, E2E_REUSE_WORK) and finds every image
# there. The host's own services never see this containerd: its socket is in a temporary
# directory, it runs in a mount namespace of its own (unshare -m), CRI and NRI are disabled (no
# CNI, no sandbox, no shim), and it stops before the file system is made.
#
# Cached in PRISM_CACHE_DIR (~/.cache/prism)/e2e/workdisk/KEY.qcow2; KEY hashes the guest build
# (its directory's name: the key of its package versions), SIZE, the NAME@DIGEST of every
# archive (sorted; not the archives' paths) and this script. The four most recently used stay.
# Needs root (containerd, mounts) and qemu-img (hack/packages.txt, guest).
set -euo pipefail
log() { echo "workdisk: $*" >&2; }

# workdisk_key GUEST_DIR SIZE SCRIPT_SUM ARCHIVE=NAME@DIGEST...: the cache key (16 hex digits).
workdisk_key() {
  local guest=$1 size=$2 sum=$3
  shift 3
  {
    echo "guest $(basename "$guest")"
    echo "size $size"
    echo "script $sum"
    printf '%s\n' "${@#*=}" | LC_ALL=C sort
  } | sha256sum | cut -c1-16
}

# in_containerd LISTING NAME DIGEST: `ctr images ls` printed NAME with DIGEST.
in_containerd() {
  awk -v n="$2" -v d="$3" 'NR > 1 && $1 == n && $3 == d {found = 1} END {exit !found}' <<<"$1"
}

[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0 # sourced by a test for its functions

(($# >= 3)) || { echo "usage: $0 GUEST_DIR SIZE ARCHIVE=NAME@DIGEST..." >&2; exit 2; }
guest=$1 size=$2
shift 2
[[ -f $guest/base.cpio ]] || { log "GUEST_DIR $guest: no base.cpio"; exit 2; }
for a in "$@"; do
  [[ $a == *=*@sha256:* && -f ${a%%=*} ]] || { log "argument $a: want ARCHIVE=NAME@sha256:DIGEST with an existing ARCHIVE"; exit 2; }
done
[[ $(id -u) -eq 0 ]] || { log "needs root (containerd mounts its snapshots)"; exit 3; }

cache="${PRISM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism}/e2e/workdisk"
mkdir -p "$cache"
key=$(workdisk_key "$guest" "$size" "$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-16)" "$@")
out="$cache/$key.qcow2"
# One build per key at a time (concurrent e2e runs share the cache).
exec 9>"$cache/.lock-$key"
flock 9
if [[ -f $out ]]; then
  touch "$out"
  log "cached $out"
  echo "$out"
  exit 0
fi

start=$SECONDS
tmp=$(mktemp -d "$cache/build-$key.XXXXXX")
# Sockets and state in a short path of their own: a unix socket's path has at most 107 bytes.
run=$(mktemp -d /tmp/prism-workdisk.XXXXXX)
pid=""
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  rm -rf "$tmp" "$run"
}
trap cleanup EXIT

# 1. The guest's containerd and ctr, with the loader and libc they were built against.
lib=usr/lib/x86_64-linux-gnu
(cd "$tmp" && cpio -idm --quiet usr/bin/containerd usr/bin/ctr "$lib/ld-linux-x86-64.so.2" "$lib/libc.so.6" <"$guest/base.cpio")
for f in usr/bin/containerd usr/bin/ctr "$lib/ld-linux-x86-64.so.2"; do
  [[ -x $tmp/$f ]] || { log "$guest/base.cpio has no $f"; exit 1; }
done
ld=("$tmp/$lib/ld-linux-x86-64.so.2" --library-path "$tmp/$lib")
# Every library they need must come from the guest root, none from this host.
if bad=$("${ld[@]}" --list "$tmp/usr/bin/containerd" | awk -v t="$tmp/" '/=>/ && index($3, t) != 1 {print $1}') && [[ -n $bad ]]; then
  log "containerd needs libraries base.cpio's extract lacks: $bad"
  exit 1
fi

# 2. A private containerd: root in $tmp, state and sockets in $run, CRI, NRI and the sandbox controllers
# disabled, no opt plugin (its default is /opt/containerd on this host).
root="$tmp/fs/containerd" sock="$run/containerd.sock"
mkdir -p "$root" "$run/state"
cat >"$tmp/config.toml" <<EOF
version = 3
root = "$root"
state = "$run/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images",
  "io.containerd.podsandbox.controller.v1.podsandbox", "io.containerd.grpc.v1.sandbox-controllers",
  "io.containerd.sandbox.controller.v1.shim", "io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt"]
[grpc]
  address = "$sock"
EOF
# Its snapshot mounts live and die in a mount namespace of its own.
unshare -m --propagation private -- "${ld[@]}" "$tmp/usr/bin/containerd" --config "$tmp/config.toml" >"$tmp/containerd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.2; done
[[ -S $sock ]] || { tail -20 "$tmp/containerd.log" >&2; log "containerd did not start"; exit 1; }
ctr=("${ld[@]}" "$tmp/usr/bin/ctr" --address "$sock" -n k8s.io)

# 3. The archives, as the guest imports them (guest-cluster.sh import_image).
for a in "$@"; do
  t0=$SECONDS
  "${ctr[@]}" images import "${a%%=*}" >>"$tmp/import.log" 2>&1 || { cat "$tmp/import.log" >&2; log "ctr import ${a%%=*} failed"; exit 1; }
  log "imported $(basename "${a%%=*}") $(du -m "${a%%=*}" | cut -f1) MiB ($((SECONDS - t0)) s)"
done
listing=$("${ctr[@]}" images ls)
checked=$("${ctr[@]}" images check)
for a in "$@"; do
  ref=${a#*=}
  in_containerd "$listing" "${ref%@*}" "${ref##*@}" || { log "containerd lists no ${ref%@*} with ${ref##*@}"; exit 1; }
  awk -v n="${ref%@*}" '$1 == n && /complete/ && $NF == "true" {ok = 1} END {exit !ok}' <<<"$checked" ||
    { log "${ref%@*} is incomplete or not unpacked: $(grep -F "${ref%@*}" <<<"$checked")"; exit 1; }
done
kill "$pid"
wait "$pid" || true
pid=""
import_s=$((SECONDS - start))

# 4. The file system, as the guest's mkfs.ext4 would make it, holding containerd/; then qcow2.
t0=$SECONDS
mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 -d "$tmp/fs" "$tmp/disk.raw" "$size" >&2 # "Creating regular file"
qemu-img convert -O qcow2 "$tmp/disk.raw" "$tmp/disk.qcow2" >&2
mv "$tmp/disk.qcow2" "$out"
log "work disk $out: import $import_s s, file system and qcow2 $((SECONDS - t0)) s, $(du -m "$out" | cut -f1) MiB"

# Keep the four most recently used disks; each holds its images twice (content and snapshot).
ls -1t "$cache"/*.qcow2 2>/dev/null | tail -n +5 | while read -r old; do
  log "removing old work disk $old"
  rm -f "$old"
done
echo "$out"
