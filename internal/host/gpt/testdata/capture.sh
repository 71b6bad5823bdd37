#!/usr/bin/env bash
# Captures the golden `sfdisk --json` outputs in testdata/sfdisk/ from REAL runs on loop
# devices. Needs root, losetup, sgdisk (gdisk), sfdisk, mkfs.ext4. Re-run it to refresh the
# fixtures after a util-linux upgrade; the tests compare parsed values, not bytes, so the
# loop device numbers in the "device"/"node" fields do not matter.
#
#   sudo internal/host/gpt/testdata/capture.sh
#
# Each layout is made with the same sgdisk argv shapes that internal/host/gpt builds
# (--new=N:START:END --change-name=N:LABEL --typecode=N:GUID), from byte offsets planned the
# way internal/plan plans them: slot i at 1 MiB + i*slot, the cache after the last slot up to
# the last MiB.
set -euo pipefail
cd "$(dirname "$0")"
out=sfdisk
mkdir -p "$out"
work=$(mktemp -d)
# Detach every loop device backed by a file in $work (attach runs in $(...) subshells, so a
# list kept in a variable would not survive), after dropping its kernel partitions: on a loop
# without partscan they outlive losetup -d and the next user of the loop would inherit them.
cleanup() {
  losetup --list --noheadings --output NAME,BACK-FILE | awk -v w="$work/" 'index($2, w) == 1 {print $1}' |
    while read -r l; do
      partx --delete "$l" 2>/dev/null || true
      losetup -d "$l" || true
    done
  rm -rf "$work"
}
trap cleanup EXIT

MiB=$((1 << 20))
GiB=$((1 << 30))
DB=30cd0809-c2b2-499c-8879-2d6b78529876    # Ceph block.db (ceph-disk)
LINUX=0fc63daf-8483-4772-8e79-3d69d8477de4 # Linux filesystem data

# attach NAME SIZE [losetup flags...]: prints the new loop device.
attach() {
  local name=$1 size=$2
  shift 2
  truncate -s "$size" "$work/$name.img"
  losetup --find --show "$@" "$work/$name.img"
}

# part DEV SECTOR N START_BYTES SIZE_BYTES LABEL GUID: one sgdisk call, as internal/host/gpt builds it.
part() {
  local dev=$1 ss=$2 n=$3 start=$4 size=$5 label=$6 guid=$7
  sgdisk "--new=$n:$((start / ss)):$(((start + size) / ss - 1))" "--change-name=$n:$label" "--typecode=$n:$guid" "$dev" >/dev/null
}

# prism DEV SECTOR DEVSIZE NSLOTS CACHE(0|1) [UPTO]: the planner's layout, first UPTO slots only.
prism() {
  local dev=$1 ss=$2 devsize=$3 nslots=$4 cache=$5 upto=${6:-$4}
  local slot=$((2 * GiB)) i
  sgdisk --clear "$dev" >/dev/null
  for ((i = 0; i < upto; i++)); do
    part "$dev" "$ss" $((i + 1)) $((MiB + i * slot)) "$slot" "$(printf 'prism-db-%02d' "$i")" "$DB"
  done
  if [[ $cache == 1 && $upto == "$nslots" ]]; then
    local end=$((MiB + nslots * slot)) usable=$((devsize / MiB * MiB - MiB))
    part "$dev" "$ss" $((nslots + 1)) "$end" $(((usable - end) / MiB * MiB)) prism-cache "$LINUX"
  fi
}

# capture NAME DEV: sfdisk --json, with stderr and the exit status when it fails.
capture() {
  local name=$1 dev=$2 rc=0
  sfdisk --json "$dev" >"$out/$name.json" 2>"$work/stderr" || rc=$?
  if [[ $rc != 0 ]]; then
    rm -f "$out/$name.json"
    { echo "exit status $rc"; cat "$work/stderr"; } >"$out/$name.stderr"
  fi
  echo "captured $name ($dev, exit $rc)"
}

size=$((12 * GiB))

dev=$(attach empty $size)
capture empty "$dev"

dev=$(attach ext4 $size)
mkfs.ext4 -q -F "$dev"
capture ext4 "$dev"

dev=$(attach gpt-empty $size)
sgdisk --clear "$dev" >/dev/null
capture gpt-empty "$dev"

dev=$(attach prism-full $size)
prism "$dev" 512 $size 3 1
capture prism-full "$dev"

dev=$(attach prism-partial $size)
prism "$dev" 512 $size 3 1 2 # a crash after the second slot
capture prism-partial "$dev"

dev=$(attach prism-4k $size --sector-size 4096)
prism "$dev" 4096 $size 3 1
capture prism-4k "$dev"

dev=$(attach foreign $size)
sgdisk --clear "$dev" >/dev/null
sgdisk --new=1:0:+100M --change-name=1:data --typecode=1:8300 "$dev" >/dev/null
sgdisk --new=3:0:+200M --change-name=3:'EFI System' --typecode=3:ef00 "$dev" >/dev/null # a gap: no partition 2
capture foreign-gap "$dev"

dev=$(attach dos $((1 * GiB)))
printf 'label: dos\nstart=2048, size=204800, type=83, bootable\nstart=206848, size=204800, type=8e\n' | sfdisk -q "$dev"
capture dos "$dev"

{
  echo "Captured by internal/host/gpt/testdata/capture.sh on $(date -u +%Y-%m-%d)"
  echo "$(sfdisk --version), $(sgdisk --version | head -1), kernel $(uname -r)"
} >"$out/VERSIONS"
