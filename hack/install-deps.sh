#!/usr/bin/env bash
# Installs the Debian packages that a group of Prism's commands needs (hack/packages.txt):
#
#   hack/install-deps.sh test demo guest   # what make test runs
#   hack/install-deps.sh build demo        # what make demo runs
#   hack/install-deps.sh --list GROUP...   # print the groups' packages, one a line
#
# As root with apt-get it runs apt-get update, then installs what is missing; any apt failure
# prints apt's output and exits 1. Otherwise it names the missing packages and the command that
# installs them, and exits 0: the tests that need them skip and say so, the demo runs without
# caches.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
list=false
if [[ ${1:-} == --list ]]; then
  list=true
  shift
fi
(($#)) || { echo "usage: $0 [--list] GROUP... (groups: $(awk '!/^#/ && NF {print $1}' "$here/packages.txt" | sort -u | tr '\n' ' '))" >&2; exit 2; }

pkgs=()
for group in "$@"; do
  found=$(awk -v g="$group" '!/^#/ && $1 == g {print $2}' "$here/packages.txt")
  [[ -n $found ]] || { echo "install-deps: no group $group in hack/packages.txt" >&2; exit 2; }
  for p in $found; do
    [[ " ${pkgs[*]} " == *" $p "* ]] || pkgs+=("$p")
  done
done
if $list; then
  printf '%s\n' "${pkgs[@]}"
  exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0

groups="$*"
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
  echo "install-deps: missing Debian packages for ${groups// /, }: ${missing[*]}" >&2
  echo "install-deps: install them with: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# Other sessions and tests may hold dpkg's lock: wait for it rather than fail.
apt=(apt-get -o DPkg::Lock::Timeout=600 -qq)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run_apt() {
  if ! "${apt[@]}" "$@" >"$out" 2>&1; then
    echo "install-deps: apt-get $* failed:" >&2
    tail -40 "$out" >&2
    exit 1
  fi
}
start=$(date +%s)
echo "install-deps: installing ${missing[*]} for ${groups// /, } (apt-get update first)" >&2
run_apt update
run_apt install -y --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${#missing[@]} packages in $(($(date +%s) - start)) s" >&2
