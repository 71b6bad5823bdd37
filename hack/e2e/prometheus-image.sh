#!/usr/bin/env bash
# The e2e guest's Prometheus image, as an OCI archive (hack/e2e/run.sh puts it in the share,
# hack/e2e/workdisk.sh imports it; test/e2e/prometheus_test.go deploys it). Prints its path.
#
#   hack/e2e/prometheus-image.sh OCIARCHIVE
#
# OCIARCHIVE is hack/e2e/ociarchive built. The image holds Debian's own prometheus binary
# (hack/e2e/prometheus.lock: version and SHA256 of its .deb) with the libc it links
# (libc6, as hack/images/packages.lock pins it for Prism's image), and nothing else: no shell,
# no web UI assets; the suite reads only the HTTP API. Entrypoint /bin/prometheus.
#
# The .debs come from apt-get download into hack/images' pool (~/.cache/prism/images/debs,
# PRISM_IMAGES_CACHE), checked against the locks' SHA256. Cached in PRISM_CACHE_DIR
# (~/.cache/prism)/e2e/images/prometheus-KEY.tar; KEY hashes both pins and this script.
# Needs apt-get (cold pool), dpkg-deb; not root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
log() { echo "prometheus-image: $*" >&2; }

# The image name the suite runs (test/e2e, PRISM_E2E_PROMETHEUS_IMAGE from guest-cluster.sh).
image=prism.local/e2e/prometheus:v2.42.0

# pins: the lock lines of the two packages, "name version arch size sha256".
pins() {
  grep -v '^#' "$here/prometheus.lock"
  awk '$1 == "libc6" && $3 == "amd64"' "$repo/hack/images/packages.lock"
}

# image_key SCRIPT_SUM: the cache key (16 hex digits) of the pins and this script.
image_key() {
  { pins; echo "script $1"; echo "image $image"; } | sha256sum | cut -c1-16
}

[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0 # sourced by a test for its functions

(($# == 1)) && [[ -x $1 ]] || { echo "usage: $0 OCIARCHIVE" >&2; exit 2; }
ociarchive=$1
[[ $(pins | wc -l) -eq 2 ]] || { log "want one prometheus and one amd64 libc6 pin, got: $(pins | tr '\n' ';')"; exit 1; }

cache="${PRISM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism}/e2e/images"
pool="${PRISM_IMAGES_CACHE:-$HOME/.cache/prism/images}/debs"
mkdir -p "$cache" "$pool"
out="$cache/prometheus-$(image_key "$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-16)").tar"
if [[ -f $out ]]; then
  echo "$out"
  exit 0
fi

tmp=$(mktemp -d "$cache/.prometheus-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
while read -r name ver arch size sum; do
  deb="$pool/${name}_${ver//:/%3a}_${arch}.deb"
  if [[ ! -f $deb ]]; then
    log "downloading $name=$ver into $pool"
    (cd "$pool" && apt-get download -qq "$name=$ver") ||
      { log "$name=$ver is not on this host's Debian mirror (a point release replaced it?): update hack/e2e/prometheus.lock"; exit 1; }
  fi
  [[ $(stat -c %s "$deb") == "$size" && $(sha256sum "$deb" | cut -d' ' -f1) == "$sum" ]] ||
    { log "$deb: size or SHA256 differs from the lock ($size $sum)"; exit 1; }
  dpkg-deb -x "$deb" "$tmp/root"
done < <(pins)

# Debian 12 ships libc's files under /lib and /usr/lib; the loader is named in the binary.
lib=$tmp/root/lib/x86_64-linux-gnu
[[ -f $lib/libc.so.6 ]] || lib=$tmp/root/usr/lib/x86_64-linux-gnu
for f in "$tmp/root/usr/bin/prometheus" "$lib/libc.so.6" "$lib/ld-linux-x86-64.so.2"; do
  [[ -f $f ]] || { log "the packages hold no $f"; exit 1; }
done
"$ociarchive" -o "$out" -name "$image" \
  -file "$tmp/root/usr/bin/prometheus:/bin/prometheus:0755" \
  -file "$lib/libc.so.6:/lib/x86_64-linux-gnu/libc.so.6:0755" \
  -file "$lib/ld-linux-x86-64.so.2:/lib64/ld-linux-x86-64.so.2:0755" \
  -entrypoint /bin/prometheus >&2
echo "$out"
