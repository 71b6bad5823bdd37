#!/usr/bin/env bash
# Regenerates the lock of Prism's image's Debian packages: each package's version,
# architecture, size and SHA256 from apt's signed indexes. hack/images/build.sh installs exactly
# these, checks each .deb's SHA256 and keys its cache on the lock, so a changed lock builds a
# new root layer.
#
#   hack/images/lock.sh [--check]               # hack/images/packages.lock (amd64)
#   hack/images/lock.sh [--check] --arch arm64  # hack/images/packages.arm64.lock
#
# packages.lock is resolved by apt from the image-root group of hack/packages.txt as if onto an
# empty system (no Recommends), from today's candidates. Another architecture's lock pins the
# same packages at the same versions as packages.lock (every image has the same software), read
# from that architecture's indexes (hack/images/apt-arch.sh); apt must resolve those pins onto
# an empty system to exactly that set, or the lock is refused.
# --check exits 1 when the lock written today would differ from the committed one.
#
# Run it when build.sh reports that a locked version is no longer on the mirror (a Debian point
# release replaced it), review the diff, commit; after a new packages.lock, run --arch arm64 too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/images/apt-arch.sh
source "$here/apt-arch.sh"
base="$here/packages.lock"
check=false
arch=amd64
while (($#)); do
  case $1 in
  --check) check=true ;;
  --arch) arch=${2:?--arch needs an architecture}; shift ;;
  *) echo "usage: $0 [--check] [--arch ARCH]" >&2; exit 2 ;;
  esac
  shift
done
lock=$base
[[ $arch == amd64 ]] || lock="$here/packages.$arch.lock"
apt_setup "$arch" "${PRISM_IMAGES_CACHE:-$HOME/.cache/prism/images}"
# A private state starts empty, and a lock is written from today's indexes.
! $apt_private || apt_refresh

mapfile -t top < <("$here/../install-deps.sh" --list image-root)
((${#top[@]})) || { echo "lock: hack/packages.txt lists no image-root packages" >&2; exit 1; }
want=("${top[@]}")
if [[ $lock != "$base" ]]; then
  mapfile -t want < <(awk '!/^#/ {print $1 "=" $2}' "$base")
fi

# apt's own resolver, against an empty dpkg status: the whole Depends/Pre-Depends closure.
empty=$(mktemp)
trap 'rm -f "$empty"' EXIT
resolve() {
  apt-get "${apt_opts[@]}" -s -o Dir::State::status="$empty" -o APT::Install-Recommends=false install "${want[@]}" 2>&1 |
    awk '/^Inst / {gsub(/[()]/, "", $3); print $2, $3}'
}
resolved=$(resolve)
if [[ -z $resolved ]]; then
  apt_refresh || true
  resolved=$(resolve)
fi
[[ -n $resolved ]] || { echo "lock: apt ($arch) resolved nothing for: ${want[*]}" >&2; exit 1; }
if [[ $lock != "$base" ]]; then
  if ! diff <(tr '=' ' ' < <(printf '%s\n' "${want[@]}") | LC_ALL=C sort) <(LC_ALL=C sort <<<"$resolved") >&2; then
    echo "lock: on $arch, apt resolves the pins of packages.lock to another set (above: < pinned, > resolved)" >&2
    exit 1
  fi
fi

new=$(
  echo "# Prism's image: the Debian packages of its root layer (hack/images/lock.sh writes this file)."
  if [[ $lock == "$base" ]]; then
    echo "# top-level (hack/packages.txt, image-root): ${top[*]}"
  else
    echo "# $arch: the packages and versions of packages.lock, from Debian's $arch indexes"
  fi
  echo "# package version architecture size sha256"
  while read -r name version; do
    apt-cache "${apt_opts[@]}" show --no-all-versions "$name=$version" | awk -v n="$name" -v v="$version" '
      /^Architecture:/ {a=$2} /^Size:/ {s=$2} /^SHA256:/ {h=$2}
      END {if (h == "") exit 1; print n, v, a, s, h}'
  done <<<"$resolved" | LC_ALL=C sort
)
if $check; then
  if ! diff <(grep -v '^#' "$lock") <(grep -v '^#' <<<"$new"); then
    opt=""
    [[ $lock == "$base" ]] || opt=" --arch $arch"
    echo "lock: today's candidates differ from ${lock#"$here/"} (run hack/images/lock.sh$opt)" >&2
    exit 1
  fi
  exit 0
fi
printf '%s\n' "$new" >"$lock"
echo "lock: $(grep -vc '^#' "$lock") packages in $lock" >&2
