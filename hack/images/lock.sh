#!/usr/bin/env bash
# Regenerates hack/images/packages.lock: the exact Debian packages of Prism's image, resolved
# by apt from the image-root group of hack/packages.txt as if onto an empty system (no
# Recommends), with each package's version, architecture, size and SHA256 from this host's apt
# lists. hack/images/build.sh installs exactly these, checks each .deb's SHA256 and keys its
# cache on this file, so a changed lock builds a new root layer.
#
#   hack/images/lock.sh            # rewrite the lock from today's candidates
#   hack/images/lock.sh --check    # exit 1 when today's candidates differ from the lock
#
# Run it when build.sh reports that a locked version is no longer on the mirror (a Debian point
# release replaced it), review the diff, commit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/packages.lock"
check=false
[[ ${1:-} == --check ]] && check=true

mapfile -t top < <("$here/../install-deps.sh" --list image-root)
((${#top[@]})) || { echo "lock: hack/packages.txt lists no image-root packages" >&2; exit 1; }

# apt's own resolver, against an empty dpkg status: the whole Depends/Pre-Depends closure.
empty=$(mktemp)
trap 'rm -f "$empty"' EXIT
resolve() {
  apt-get -s -o Dir::State::status="$empty" -o APT::Install-Recommends=false install "${top[@]}" 2>&1 |
    awk '/^Inst / {gsub(/[()]/, "", $3); print $2, $3}'
}
resolved=$(resolve)
if [[ -z $resolved ]]; then
  [[ $(id -u) -eq 0 ]] && apt-get update -qq >/dev/null
  resolved=$(resolve)
fi
[[ -n $resolved ]] || { echo "lock: apt resolved nothing for: ${top[*]}" >&2; exit 1; }

new=$(
  echo "# Prism's image: the Debian packages of its root layer (hack/images/lock.sh writes this file)."
  echo "# top-level (hack/packages.txt, image-root): ${top[*]}"
  echo "# package version architecture size sha256"
  while read -r name version; do
    apt-cache show --no-all-versions "$name=$version" | awk -v n="$name" -v v="$version" '
      /^Architecture:/ {a=$2} /^Size:/ {s=$2} /^SHA256:/ {h=$2}
      END {if (h == "") exit 1; print n, v, a, s, h}'
  done <<<"$resolved" | LC_ALL=C sort
)
if $check; then
  if ! diff <(grep -v '^#' "$lock") <(grep -v '^#' <<<"$new"); then
    echo "lock: today's candidates differ from hack/images/packages.lock (run hack/images/lock.sh)" >&2
    exit 1
  fi
  exit 0
fi
printf '%s\n' "$new" >"$lock"
echo "lock: $(grep -vc '^#' "$lock") packages in $lock" >&2
