#!/usr/bin/env bash
# Installs the Debian packages the tests use (real tools for signature tests, loop devices).
# Runs only as root with apt-get; elsewhere the tests that need a tool skip and say which.
set -euo pipefail
pkgs=(e2fsprogs xfsprogs btrfs-progs dosfstools gdisk fdisk util-linux lvm2 cryptsetup-bin mdadm udev)
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
