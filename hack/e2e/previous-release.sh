#!/usr/bin/env bash
# The previous Prism release's image and chart for the e2e upgrade drill (issue 31 item 1;
# hack/e2e/run.sh with PRISM_E2E_UPGRADE_FROM=COMMIT). Prints the directory that holds them:
#
#   hack/e2e/previous-release.sh COMMIT VERSION
#
#   DIR/prism.tar  the image that tree's own builder (its hack/images/build.sh, VERSION as the
#                  binaries' -X main.version) wrote, renamed to prism.local/e2e/prism:VERSION
#                  (hack/e2e/retag: only the name in index.json changes, not the manifest):
#                  both releases' charts name ghcr.io/prism-storage/prism:0.1.0, and one name
#                  holds one image in containerd
#   DIR/prism/     that tree's charts/prism, as it is
#
# The tree is `git archive COMMIT`, as test/upgrade builds the same release's binaries.
# Cached in PRISM_CACHE_DIR (~/.cache/prism)/e2e/previous/COMMIT-VERSION-KEY, KEY hashing this
# script and hack/e2e/retag (the old tree's build is fixed by its commit). Needs git, Go and
# what hack/images/build.sh needs (apt-get download on a cold image cache).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
log() { echo "previous-release: $*" >&2; }
(($# == 2)) || { echo "usage: $0 COMMIT VERSION" >&2; exit 2; }
commit=$(git -C "$repo" rev-parse --verify -q "$1^{commit}") ||
  { log "commit $1 is not in $repo (a shallow clone? git fetch --unshallow)"; exit 2; }
version=$2
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || { log "VERSION $version: want vMAJOR.MINOR.PATCH"; exit 2; }

cache="${PRISM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism}/e2e/previous"
key=$(cat "${BASH_SOURCE[0]}" "$here"/retag/*.go | sha256sum | cut -c1-12)
dir="$cache/$commit-$version-$key"
mkdir -p "$cache"
exec 9>"$cache/.lock-$commit"
flock 9
if [[ -f $dir/prism.tar && -f $dir/prism/Chart.yaml ]]; then
  log "cached $dir"
  echo "$dir"
  exit 0
fi
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
t0=$SECONDS
mkdir "$tmp/src" "$tmp/out"
git -C "$repo" archive --format=tar "$commit" | tar -x -C "$tmp/src"
# No .git in the extracted tree: its build.sh's git describe/rev-parse find no repository
# (the cache is outside any clone), so VERSION and the labels' revision are given here.
(cd "$tmp/src" && VERSION=$version PRISM_IMAGES_OUT="$tmp/images" hack/images/build.sh >/dev/null)
(cd "$repo" && go run ./hack/e2e/retag -in "$tmp/images/prism.oci.tar" -out "$tmp/out/prism.tar" \
  -name "prism.local/e2e/prism:$version")
cp -r "$tmp/src/charts/prism" "$tmp/out/prism"
echo "$commit" >"$tmp/out/commit"
rm -rf "$dir"
mv "$tmp/out" "$dir"
log "built $commit as $version in $((SECONDS - t0)) s: $dir"
echo "$dir"
