#!/usr/bin/env bash
# Builds Prism's image as an OCI archive, without a container engine (make images):
#
#   bin/images/prism.oci.tar   one image for the operator (/prism-manager, the entrypoint) and
#                              the agent (/prism-agent), named as the chart's default
#                              image.repository:tag (ghcr.io/prism-storage/prism:<appVersion>)
#   bin/images/prism.spdx.json its SPDX SBOM (the locked Debian packages, the Go binaries and
#                              their modules), also in the image at /usr/share/doc/prism/
#
# PRISM_IMAGE_ARCH=arm64 (make images-arm64) builds the same image for arm64 into
# bin/images/prism-arm64.oci.tar and prism-arm64.spdx.json: the packages of
# hack/images/packages.arm64.lock (packages.lock's names and versions, Debian's arm64 builds;
# hack/images/lock.sh --arch arm64), binaries cross-compiled with GOARCH=arm64 CGO_ENABLED=0.
#
# Layers: the root, made of the Debian packages of the lock (exact versions, SHA256-checked;
# the closure of hack/packages.txt's image-root group, from hack/images/lock.sh), then the
# static Go binaries. go-containerregistry (go.mod's version) writes the OCI layout.
#
# The .debs and the root layer are cached outside the clone, in ~/.cache/prism/images
# (PRISM_IMAGES_CACHE): the root layer's key hashes the lock and the code that lays it out, so
# a warm build only compiles the binaries and writes the archive. Needs apt-get (for cold
# caches: apt-get download), dpkg-deb and Go; not root. As root it installs libblkid-dev
# (hack/packages.txt's build group) first, so the amd64 agent links libblkid as the
# Dockerfile's does whatever ran on the machine before; the arm64 agent has no cgo (no cross C
# toolchain) and runs wipefs for libblkid's probe (decision 0034's fallback).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
log() { echo "images: $*" >&2; }
start=$(date +%s.%N)
secs() { awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f s", n - s}'; }

image_arch=${PRISM_IMAGE_ARCH:-amd64}
case $image_arch in
amd64) lock="$here/packages.lock" archive_name=prism ;;
arm64) lock="$here/packages.arm64.lock" archive_name=prism-arm64 ;;
*) echo "images: PRISM_IMAGE_ARCH=$image_arch: amd64 or arm64" >&2; exit 2 ;;
esac
out_dir=${PRISM_IMAGES_OUT:-$repo/bin/images}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
created=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
cache_root=${PRISM_IMAGES_CACHE:-$HOME/.cache/prism/images}
pool="$cache_root/debs"
mkdir -p "$out_dir" "$pool"
# shellcheck source=hack/images/apt-arch.sh
source "$here/apt-arch.sh"
apt_setup "$image_arch" "$cache_root"

# The builder itself (go build caches it).
mkimage="$out_dir/.mkimage"
go build -o "$mkimage" ./hack/images/mkimage

# 1. The root layer, cached by the lock and the code that lays it out.
key=$( (cat "$lock"; cat hack/images/rootfs.go hack/images/mkimage/main.go; grep 'go-containerregistry ' go.sum) | sha256sum | cut -c1-16)
layer_dir="$cache_root/root-$image_arch-$key"
exec 9>"$cache_root/.lock-$key"
flock 9
if [[ -f $layer_dir/root.tar.gz ]]; then
  log "cached root layer $layer_dir ($(secs))"
else
  # The locked .debs, into a pool shared by every key (apt-get download checks them against
  # the signed indexes; mkimage root checks the lock's SHA256).
  missing=()
  while read -r name ver deb_arch _; do
    f="${name}_${ver//:/%3a}_${deb_arch}.deb"
    [[ -f $pool/$f ]] || missing+=("$name=$ver")
  done < <(grep -v '^#' "$lock")
  if ((${#missing[@]})); then
    log "downloading ${#missing[@]} packages into $pool"
    if ! (cd "$pool" && apt-get "${apt_opts[@]}" download -qq "${missing[@]}" 2>"$pool/.download.err"); then
      log "apt-get download failed; apt-get update ($image_arch) and once more"
      apt_refresh || true
      (cd "$pool" && apt-get "${apt_opts[@]}" download -qq "${missing[@]}" 2>"$pool/.download.err") || {
        cat "$pool/.download.err" >&2
        log "a locked version is not on this host's Debian mirror (a point release replaced it?): run hack/images/lock.sh (and --arch arm64), review and commit the new lock"
        exit 1
      }
    fi
    log "downloaded ($(secs))"
  fi
  tmp=$(mktemp -d "$cache_root/build-$key.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  "$mkimage" root --lock "$lock" --debs "$pool" --out "$tmp/root.tar.gz"
  cp "$lock" "$tmp/packages.lock"
  rm -rf "$layer_dir"
  mv "$tmp" "$layer_dir"
  trap - EXIT
  log "built root layer $layer_dir ($(du -h "$layer_dir/root.tar.gz" | cut -f1), $(secs))"
  # Keep the three most recently built root layers of this architecture.
  ls -1dt "$cache_root/root-$image_arch-"*/ 2>/dev/null | tail -n +4 | while read -r old; do
    log "removing old root layer $old"
    rm -rf "$old"
  done
fi
touch "$layer_dir"
flock -u 9

# 2. The static binaries, as the Dockerfile builds them.
bins="$out_dir/.bin-$image_arch"
mkdir -p "$bins"
export GOOS=linux GOARCH=$image_arch
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$bins/prism-manager" ./cmd/manager
# The amd64 agent links libblkid statically when libblkid-dev is installed
# (hack/build-agent.sh); a fresh machine's image would otherwise hold the wipefs-probing agent.
# No arm64 C toolchain and libblkid here: the arm64 agent is CGO_ENABLED=0.
libblkid=${PRISM_LIBBLKID:-1}
[[ $image_arch == amd64 ]] || libblkid=0
if [[ $libblkid != 0 ]]; then
  hack/install-deps.sh build
fi
PRISM_LIBBLKID=$libblkid LDFLAGS="-s -w -X main.version=$version" hack/build-agent.sh "$bins/prism-agent" -trimpath
unset GOOS GOARCH
log "binaries built ($(secs))"

# 3. The OCI archive.
read -r ref digest archive < <("$mkimage" image --arch "$image_arch" --root "$layer_dir/root.tar.gz" \
  --bin "/prism-manager=$bins/prism-manager" --bin "/prism-agent=$bins/prism-agent" \
  --chart charts/prism --created "$created" --revision "$revision" --version "$version" \
  --lock "$lock" --sbom-out "$out_dir/$archive_name.spdx.json" \
  --out "$out_dir/$archive_name.oci.tar")
log "$ref $digest"
log "$archive: $(du -h "$archive" | cut -f1) ($(secs) in all)"
echo "$archive"
