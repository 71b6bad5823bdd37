#!/bin/bash
# prism-nvmet-loop (inside the guest): gives emulated disks the model strings of real drives.
# QEMU's emulated NVMe controller always says "QEMU NVMe Ctrl"; Linux's NVMe-oF target can
# report any model. Each line of the file given as $1 (or stdin) names one emulated disk by
# the serial QEMU was given, the model and the serial the guest should see:
#
#   <qemu serial> <fabric serial> <model, may contain spaces>
#   sparse:<bytes> <fabric serial> <model, may contain spaces>
#
# For each line it creates an nvmet subsystem (attr_model, attr_serial) whose namespace is the
# emulated disk, exports it on an NVMe/TCP port on 127.0.0.1:4420, and connects to it with
# `nvme connect`, so the guest gets a real /dev/nvmeXnY driven by nvme-tcp. It prints one
# line per disk: "<backing> <backing kernel name or file> <fabric kernel name> <model>".
#
# The backing disk stays visible too; LVM would see each PV twice (once through each path), so
# --lvm-filter writes a global_filter accepting only the fabric devices and their partitions.
# That filter is the guest's own: containers (Rook's OSD pods) bring their own lvm.conf. A
# sparse:<bytes> line backs the namespace with a sparse file of that size on a tmpfs instead
# (/run/prism-nvmet, 4 GiB of RAM at most), so there is no second path at all; the file's
# namespace has 4096-byte blocks (the tmpfs's block size). Run again with new lines, it adds
# those drives to the running target: a hot-add.
#
#   prism-nvmet-loop --remove <fabric serial>
#
# The drive dies (the e2e drill of docs/runbooks/replace-data-disk.md): its namespace is
# disabled and removed from its subsystem, as a controller does whose medium has failed. The
# target tells the host (an asynchronous event, namespace attributes changed); the host's
# rescan deletes the block device, and every I/O to it fails from then on. A sparse file behind
# it is deleted: its bytes are gone, as a dead drive's. The subsystem, its port link and the
# host's controller stay: no other drive's path is touched.
set -euo pipefail
cfg=/sys/kernel/config/nvmet
sparse_dir=/run/prism-nvmet

# nqn_of SERIAL: the subsystem of the drive with that fabric serial.
nqn_of() {
  echo "nqn.2024-01.io.prism-storage:guest-$(tr 'A-Z' 'a-z' <<<"$1")"
}

# remove_drive SERIAL: the drive with that fabric serial dies (above).
remove_drive() {
  local ns backing
  ns=$cfg/subsystems/$(nqn_of "$1")/namespaces/1
  [[ -d $ns ]] || { echo "prism-nvmet-loop: no namespace for serial $1 ($ns)" >&2; return 1; }
  backing=$(cat "$ns/device_path")
  echo 0 >"$ns/enable"
  rmdir "$ns"
  # Only a file this script made: a disk behind a namespace is never written here.
  [[ $backing != "$sparse_dir"/*.img ]] || rm -f "$backing"
  echo "$1 removed: $ns, backing $backing"
}

if [[ ${1:-} == --remove ]]; then
  [[ -n ${2:-} ]] || { echo "usage: prism-nvmet-loop --remove <fabric serial>" >&2; exit 2; }
  remove_drive "$2"
  exit 0
fi
lvm_filter=""
if [[ ${1:-} == --lvm-filter ]]; then
  lvm_filter=1
  shift
fi
spec=${1:-/dev/stdin}
port=$cfg/ports/1

# block device name (nvmeXnY) whose controller reports this serial.
by_serial() {
  local want=$1 d s
  for d in /sys/block/nvme*n*; do
    # nvmeXcYnZ is one path of a multipath namespace, hidden behind nvmeXnZ.
    [[ $(basename "$d") =~ ^nvme[0-9]+n[0-9]+$ && -e $d/device/serial ]] || continue
    s=$(tr -d ' \n' <"$d/device/serial")
    [[ $s == "$want" ]] && { basename "$d"; return 0; }
  done
  return 1
}

modprobe -a nvmet nvmet-tcp nvme-tcp
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
[[ -s /etc/nvme/hostnqn ]] || { mkdir -p /etc/nvme; nvme gen-hostnqn >/etc/nvme/hostnqn; }
if [[ ! -d $port ]]; then
  mkdir "$port"
  echo tcp >"$port/addr_trtype"
  echo ipv4 >"$port/addr_adrfam"
  echo 127.0.0.1 >"$port/addr_traddr"
  echo 4420 >"$port/addr_trsvcid"
fi

# sparse_file SERIAL BYTES: a sparse file of BYTES for that fabric serial, on the tmpfs.
sparse_file() {
  local dir=$sparse_dir
  mountpoint -q "$dir" || { mkdir -p "$dir" && mount -t tmpfs -o size=4G,mode=0700 prism-nvmet "$dir"; }
  truncate -s "$2" "$dir/$1.img"
  echo "$dir/$1.img"
}

fabric=()
while read -r qserial fserial model; do
  [[ -z $qserial || $qserial == \#* ]] && continue
  if [[ $qserial == sparse:* ]]; then
    backing=$(sparse_file "$fserial" "${qserial#sparse:}")
  else
    backing=$(by_serial "$qserial") || { echo "prism-nvmet-loop: no emulated disk with serial $qserial" >&2; exit 1; }
    backing=/dev/$backing
  fi
  nqn=$(nqn_of "$fserial")
  sub=$cfg/subsystems/$nqn
  mkdir "$sub"
  echo 1 >"$sub/attr_allow_any_host"
  # Both must be set before the first host connects; the kernel refuses them afterwards.
  echo -n "$model" >"$sub/attr_model"
  echo -n "$fserial" >"$sub/attr_serial"
  mkdir "$sub/namespaces/1"
  echo -n "$backing" >"$sub/namespaces/1/device_path"
  # A file: through the page cache (a tmpfs file is in it anyway).
  [[ -b $backing ]] || echo 1 >"$sub/namespaces/1/buffered_io"
  echo 1 >"$sub/namespaces/1/enable"
  ln -s "$sub" "$port/subsystems/$nqn"
  nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$nqn" >/dev/null
  dev=""
  for _ in $(seq 100); do
    dev=$(by_serial "$fserial") && break
    sleep 0.2
  done
  [[ -n $dev ]] || { echo "prism-nvmet-loop: $nqn connected but no block device with serial $fserial" >&2; exit 1; }
  fabric+=("$dev")
  echo "$qserial ${backing#/dev/} $dev $(cat "/sys/block/$dev/device/model" | sed 's/ *$//')"
done <"$spec"
udevadm settle --timeout=60

if [[ -n $lvm_filter && ${#fabric[@]} -gt 0 ]]; then
  accept=""
  for d in "${fabric[@]}"; do accept+="\"a|^/dev/${d}(p[0-9]+)?\$|\", "; done
  sed -i '/^devices {/a\	global_filter = [ '"$accept"'"r|.*|" ]' /etc/lvm/lvm.conf
fi
