#!/usr/bin/env bash
# Boots the Prism test guest (hack/guest/build.sh builds and caches it) in QEMU with TCG:
# Debian 12's kernel, the initramfs root, and emulated NVMe controllers backed by sparse
# qcow2 images. By hand:
#
#   hack/guest/run.sh --shell --disk fast:800G --disk qlc:30T     # a root shell on the console
#   hack/guest/run.sh --run my-test.sh --share /tmp/out           # run a script, then power off
#
# Options:
#   --shell              interactive root shell on the serial console (the default without --run;
#                        with --run, after the script). Ctrl-A X quits QEMU.
#   --run SCRIPT         copy SCRIPT into the guest as /prism/run.sh and run it with bash; its
#                        exit status becomes this command's (written to SHARE/rc)
#   --overlay DIR        copy DIR's tree into the guest's / (binaries, data for the script)
#   --share DIR          the host directory mounted at /mnt/host in the guest (9p); results go here
#   --share-tag TAG=DIR  one more host directory, as a 9p share with mount tag TAG; init does
#                        not mount it, the guest's script does (mount -t 9p TAG DIR); repeatable
#   --link LPORT:RPORT   a virtio-net NIC on a point-to-point Ethernet link over UDP on the
#                        host's loopback (QEMU's dgram netdev): the guest's frames go from
#                        127.0.0.1:LPORT to 127.0.0.1:RPORT, where the other guest's QEMU is bound
#                        (given RPORT:LPORT); nothing else is reachable. Needs --mac
#   --mac MAC            the NIC's fixed MAC address (unicast, locally administered: 52:54:00:...)
#   --disk SERIAL:SIZE   an emulated NVMe controller with that serial and a SIZE (qemu-img
#                        syntax, or bytes) qcow2 namespace; repeat for more disks
#   --virtio-disk SERIAL:SIZE:LOGICAL:PHYSICAL
#                        a virtio-blk disk with those logical and physical block sizes (bytes):
#                        QEMU's NVMe controller reports no physical block size (NPWG), a
#                        virtio-blk disk does, so the guest's kernel sees one; repeatable
#   --workdir DIR        where disk images, the initrd, qemu.pid and console.log go (default: a
#                        new directory under /var/tmp, removed at the end unless --keep)
#   --keep               keep the work directory
#   --reuse-disks        use the disk images already in --workdir (from an earlier --keep run)
#                        instead of creating empty ones: a second boot on the same disks, as
#                        after a crash or a reboot (a missing image is still created)
#   --mem SIZE --smp N   guest memory (4G) and vCPUs (2)
#   --accel ACCEL        QEMU accelerator (tcg)
#   --timeout SECONDS    kill QEMU after this long (default 1800; 0 = none)
# The console is printed on stdout and saved in WORKDIR/console.log. QEMU is stopped by its pid
# when this script exits, whatever the reason.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
log() { echo "guest-run: $*" >&2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

shell="" script="" overlay="" share="" workdir="" keep="" reuse="" mem=4G smp=2 accel=tcg timeout=1800
link="" mac=""
disks=() vdisks=() tags=()
while (($#)); do
  case $1 in
    --shell) shell=1 ;;
    --run) script=$2; shift ;;
    --overlay) overlay=$2; shift ;;
    --share) share=$2; shift ;;
    --share-tag) tags+=("$2"); shift ;;
    --link) link=$2; shift ;;
    --mac) mac=$2; shift ;;
    --disk) disks+=("$2"); shift ;;
    --virtio-disk) vdisks+=("$2"); shift ;;
    --workdir) workdir=$2; shift ;;
    --keep) keep=1 ;;
    --reuse-disks) reuse=1 ;;
    --mem) mem=$2; shift ;;
    --smp) smp=$2; shift ;;
    --accel) accel=$2; shift ;;
    --timeout) timeout=$2; shift ;;
    -h | --help) usage ;;
    *) log "unknown argument $1"; usage ;;
  esac
  shift
done
[[ -n $script || -n $shell ]] || shell=1
[[ -z $script || -f $script ]] || { log "--run $script: no such file"; exit 2; }
[[ -z $overlay || -d $overlay ]] || { log "--overlay $overlay: not a directory"; exit 2; }
[[ -z $share || -d $share ]] || { log "--share $share: not a directory"; exit 2; }
[[ -z $reuse || -n $workdir ]] || { log "--reuse-disks needs --workdir (where the images are)"; exit 2; }
# link_args LPORT:RPORT MAC: QEMU's arguments for the NIC of --link, one a line. dgram (UDP),
# not stream (TCP): both ends are alike, so either guest may start first or boot again, and
# QEMU 7.2's stream client gives up at once when no server listens (reconnect came in 8.0).
link_args() {
  local lport=${1%%:*} rport=${1#*:}
  [[ $lport =~ ^[0-9]+$ && $rport =~ ^[0-9]+$ && $1 == "$lport:$rport" ]] && ((lport > 0 && lport < 65536 && rport > 0 && rport < 65536 && lport != rport)) ||
    { log "--link $1: want LPORT:RPORT, two different ports"; return 2; }
  [[ $2 =~ ^[0-9a-f][26ae](:[0-9a-f]{2}){5}$ ]] ||
    { log "--mac ${2:-(none)}: want a unicast, locally administered MAC in lower case (52:54:00:xx:xx:xx)"; return 2; }
  printf '%s\n' -netdev "dgram,id=link0,local.type=inet,local.host=127.0.0.1,local.port=$lport,remote.type=inet,remote.host=127.0.0.1,remote.port=$rport"
  printf '%s\n' -device "virtio-net-pci,netdev=link0,mac=$2"
}
# tag_args TAG=DIR: QEMU's arguments for one --share-tag (one a line, as link_args).
tag_args() {
  local tag=${1%%=*} dir=${1#*=}
  [[ $tag =~ ^[a-z][a-z0-9-]{0,30}$ && $tag != prism && $1 == "$tag=$dir" && -d $dir ]] ||
    { log "--share-tag $1: want TAG=DIR, TAG lower case and not prism, DIR a directory"; return 2; }
  printf '%s\n' -virtfs "local,path=$dir,mount_tag=$tag,security_model=none,id=$tag"
}
extra=()
if [[ -n $link || -n $mac ]]; then
  mapfile -t extra < <(link_args "$link" "$mac")
  ((${#extra[@]})) || exit 2
fi
for t in "${tags[@]}"; do
  mapfile -t more < <(tag_args "$t")
  ((${#more[@]})) || exit 2
  extra+=("${more[@]}")
done

guest=$("$here/build.sh")
if [[ -z $workdir ]]; then
  workdir=$(mktemp -d /var/tmp/prism-guest.XXXXXX)
else
  mkdir -p "$workdir"
fi
qpid=""
finish() {
  [[ -n $qpid || ! -f $workdir/qemu.pid ]] || qpid=$(cat "$workdir/qemu.pid")
  if [[ -n $qpid ]] && kill -0 "$qpid" 2>/dev/null; then
    log "stopping QEMU (pid $qpid)"
    kill "$qpid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$qpid" 2>/dev/null || true
  fi
  if [[ -z $keep ]]; then
    rm -rf "$workdir"
  else
    log "kept $workdir"
  fi
}
trap finish EXIT
trap 'exit 130' INT TERM HUP

# The run's own files (script, overlay) go in a second cpio archive appended to the cached
# one: the kernel unpacks both, later files winning.
stage="$workdir/overlay"
mkdir -p "$stage/prism"
[[ -z $overlay ]] || cp -a "$overlay/." "$stage/"
[[ -z $script ]] || install -m 755 "$script" "$stage/prism/run.sh"
(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) >"$workdir/overlay.cpio"
cat "$guest/base.cpio" "$workdir/overlay.cpio" >"$workdir/initrd.cpio"
rm -f "$workdir/overlay.cpio"

mode=shell
if [[ -n $script ]]; then
  mode=run
  [[ -z $shell ]] || mode=run+shell
fi
args=(-accel "$accel" -cpu max -smp "$smp" -m "$mem" -no-reboot -nic none
  -kernel "$guest/vmlinuz" -initrd "$workdir/initrd.cpio"
  -append "console=ttyS0 panic=-1 quiet loglevel=4 prism.mode=$mode"
  -pidfile "$workdir/qemu.pid")
if [[ -n $shell ]]; then
  args+=(-nographic)
else
  args+=(-display none -monitor none -serial stdio)
fi
if [[ -n $share ]]; then
  rm -f "$share/rc"
  args+=(-virtfs "local,path=$share,mount_tag=prism,security_model=none,id=prism")
fi
args+=("${extra[@]}")
# disk_image SERIAL SIZE: the disk's qcow2 image, created empty unless --reuse-disks finds one.
disk_image() {
  local img="$workdir/disk-$1.qcow2"
  if [[ -n $reuse && -f $img ]]; then
    log "reusing $img"
  else
    qemu-img create -q -f qcow2 "$img" "$2"
  fi
  echo "$img"
}
i=0
for d in "${disks[@]}"; do
  serial=${d%%:*}
  size=${d#*:}
  [[ -n $serial && -n $size && $serial != "$d" ]] || { log "--disk $d: want SERIAL:SIZE"; exit 2; }
  img=$(disk_image "$serial" "$size")
  args+=(-drive "if=none,id=disk$i,file=$img,format=qcow2,cache=unsafe,discard=unmap"
    -device "nvme,serial=$serial,drive=disk$i")
  i=$((i + 1))
done
for d in "${vdisks[@]}"; do
  IFS=: read -r serial size lbs pbs <<<"$d"
  [[ -n $serial && -n $size && -n $lbs && -n $pbs ]] || { log "--virtio-disk $d: want SERIAL:SIZE:LOGICAL:PHYSICAL"; exit 2; }
  img=$(disk_image "$serial" "$size")
  args+=(-drive "if=none,id=disk$i,file=$img,format=qcow2,cache=unsafe"
    -device "virtio-blk-pci,serial=$serial,drive=disk$i,logical_block_size=$lbs,physical_block_size=$pbs")
  i=$((i + 1))
done

log "booting $guest ($accel, $smp vCPUs, $mem, ${#disks[@]} NVMe disks, ${#vdisks[@]} virtio disks, mode $mode)"
start=$(date +%s)
if [[ -n $shell ]]; then
  # In the foreground: a background job's stdin would be /dev/null, not the terminal.
  qemu-system-x86_64 "${args[@]}" || true
else
  qemu-system-x86_64 "${args[@]}" </dev/null > >(tee "$workdir/console.log") 2>&1 &
  qpid=$!
  # Poll rather than start a watchdog process: a sleeping child would hold stdout open.
  waited=0
  while kill -0 "$qpid" 2>/dev/null; do
    if ((timeout > 0 && waited >= timeout)); then
      log "timed out after $timeout s"
      kill "$qpid" 2>/dev/null || true
    fi
    sleep 1
    waited=$((waited + 1))
  done
  wait "$qpid" || true
fi
qpid=""
rm -f "$workdir/qemu.pid"
log "QEMU exited after $(($(date +%s) - start)) s"
if [[ -n $script ]]; then
  if [[ -n $share && -f $share/rc ]]; then
    rc=$(cat "$share/rc")
  else
    rc=$(sed -n 's/^PRISM-GUEST-RC=\([0-9]*\).*/\1/p' "$workdir/console.log" 2>/dev/null | tail -1)
  fi
  if [[ -z $rc ]]; then
    log "the guest script did not finish (no exit status)"
    exit 1
  fi
  exit "$rc"
fi
