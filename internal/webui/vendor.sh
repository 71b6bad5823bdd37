#!/usr/bin/env bash
# Vendors uPlot (https://github.com/leeoniya/uPlot, MIT) into static/: the built
# IIFE bundle, its stylesheet and its license, from the npm package at a pinned
# version, checked against a pinned SHA-256 of the package tarball.
#
#   internal/webui/vendor.sh            # re-vendor the pinned version
#
# To upgrade: change VERSION, run once with SHA256= (empty) to print the new
# tarball's digest, review the diff of static/, then pin the digest here.
set -euo pipefail
VERSION=1.6.32
SHA256=${SHA256-4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d}

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "uplot@${VERSION}" >/dev/null
tgz=uplot-${VERSION}.tgz
got=$(sha256sum "$tgz" | cut -d' ' -f1)
if [[ -z $SHA256 ]]; then
  echo "vendor: uplot@${VERSION} tarball sha256 ${got} (pin it as SHA256 in $0)" >&2
elif [[ $got != "$SHA256" ]]; then
  echo "vendor: uplot@${VERSION} tarball sha256 ${got}, want ${SHA256}" >&2
  exit 1
fi
tar xzf "$tgz"
install -m 0644 package/dist/uPlot.iife.min.js "$here/static/uPlot.iife.min.js"
install -m 0644 package/dist/uPlot.min.css "$here/static/uPlot.min.css"
install -m 0644 package/LICENSE "$here/static/uPlot.LICENSE"
echo "uplot ${VERSION}" >"$here/static/uPlot.VERSION"
echo "vendor: uplot ${VERSION} → ${here#"$PWD"}/static (uPlot.iife.min.js, uPlot.min.css, uPlot.LICENSE)" >&2
