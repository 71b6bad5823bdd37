#!/usr/bin/env bash
# Installs the Debian packages the tests use (real tools for signature tests, loop devices).
# Runs only as root with apt-get; elsewhere the tests that need a tool skip and say which.
set -euo pipefail
pkgs=(
  # partitioning, loop devices, probes (blkid, wipefs, fsfreeze, mkfs.minix/cramfs/bfs come with util-linux)
  gdisk fdisk util-linux udev
  # file systems (test/foreign makes each of them on a whole loop device)
  e2fsprogs xfsprogs btrfs-progs f2fs-tools dosfstools exfatprogs ntfs-3g nilfs-tools jfsutils reiserfsprogs udftools
  # cluster file systems, made for local use (no cluster stack)
  ocfs2-tools gfs2-utils
  # images written onto a device
  squashfs-tools erofs-utils xorriso genisoimage
  # volume managers, RAID, crypt, cache
  lvm2 dmsetup mdadm cryptsetup-bin bcache-tools
  # FUSE mounts for the formats this kernel may lack a driver for (exfat, vfat, iso9660; ntfs-3g above)
  exfat-fuse fusefat fuseiso
)
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
  echo "install-test-deps: not root or no apt-get; tests needing ${pkgs[*]} will skip" >&2
  exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-test-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
