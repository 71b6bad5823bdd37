#!/usr/bin/env bash
# Builds (once, cached) what the e2e guest's Rook stage needs, from the Go module proxy at
# pinned versions, and prints the directory that holds it:
#
#   rook        Rook's operator binary (cmd/rook), built from the github.com/rook/rook module
#               zip; the zip lacks the nested github.com/rook/rook/pkg/apis module that Rook's
#               go.mod replaces with ./pkg/apis, so that module's zip (ROOK_APIS_VERSION) is
#               unpacked there
#   helm        helm.sh/helm/v3's cmd/helm (Debian has no helm package)
#   rook-ceph/  Rook's own chart (deploy/charts/rook-ceph) with its file:// dependency
#               (deploy/charts/library) in charts/; its other dependency, the ceph-csi-operator
#               subchart, lives in a Helm repository this machine cannot reach, so it is
#               dropped from Chart.yaml (the e2e installs with csi.installCsiOperator=false)
#
# Nothing of Rook's or Helm's is copied into this repository: sources stay in the cache.
#
# Known limit (docs/e2e.md): the module proxy this machine reaches has no version of
# github.com/rook/rook/pkg/apis from v1.20.4's commit; the only ones it serves are older
# pseudo-versions (the one Rook's go.mod requires is from 2024-12), which lack v1.20's types,
# and rook does not compile against them. ROOK_APIS_ZIP=FILE supplies the module zip of
# pkg/apis at v1.20.4's commit (made where GitHub is reachable, e.g. with
# `go mod download -json github.com/rook/rook/pkg/apis@a3794e0ce8ea`).
# --chart-only: helm and the chart, not rook.
# Env: PRISM_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/prism), ROOK_APIS_ZIP
set -euo pipefail

ROOK_VERSION=1.20.4
# The only version of the nested module on the proxy: the one Rook's go.mod requires (the
# proxy has no pseudo-version for v1.20.4's commit).
ROOK_APIS_VERSION=v0.0.0-20241216163035-3170ac6a0c58
HELM_VERSION=3.22.0

chart_only=false
[[ ${1:-} != --chart-only ]] || chart_only=true

cache="${PRISM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism}"
apis_id=${ROOK_APIS_VERSION##*-}
[[ -z ${ROOK_APIS_ZIP:-} ]] || apis_id=zip-$(sha256sum "$ROOK_APIS_ZIP" | cut -c1-12)
out="$cache/e2e/rook-$ROOK_VERSION-apis-$apis_id-helm-$HELM_VERSION"
build="$cache/build"
mkdir -p "$out" "$build"
log() { echo "rook-bins: $*" >&2; }
zip_of() { (cd "$build" && GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/.*"Zip": "\(.*\)".*/\1/p'); }
ticker() { (while sleep 30; do log "still building $1 ($((SECONDS - $2)) s)"; done) >&2 & echo $!; }

if [[ ! -x $out/helm ]]; then
  dir="$build/helm-$HELM_VERSION"
  mkdir -p "$dir"
  [[ -f $dir/go.mod ]] || printf 'module prism.local/helmbuild\ngo 1.26\nrequire helm.sh/helm/v3 v%s\n' "$HELM_VERSION" >"$dir/go.mod"
  log "building helm v$HELM_VERSION"
  t0=$SECONDS
  tk=$(ticker helm "$t0")
  if ! (cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION" -o "$out/helm.tmp" helm.sh/helm/v3/cmd/helm); then
    kill "$tk"
    log "building helm failed"
    exit 1
  fi
  kill "$tk"
  mv "$out/helm.tmp" "$out/helm"
  log "built helm in $((SECONDS - t0)) s"
fi

if [[ ! -f $out/rook-ceph/Chart.yaml ]]; then
  zip=$(zip_of "github.com/rook/rook@v$ROOK_VERSION")
  tmp=$(mktemp -d "$out/chart.XXXXXX")
  unzip -q "$zip" "github.com/rook/rook@v$ROOK_VERSION/deploy/charts/*" -d "$tmp"
  charts="$tmp/github.com/rook/rook@v$ROOK_VERSION/deploy/charts"
  mkdir -p "$charts/rook-ceph/charts"
  cp -r "$charts/library" "$charts/rook-ceph/charts/library"
  # Drop the ceph-csi-operator dependency (a list item of 5 lines: name, version, repository,
  # alias, condition), keep the library one.
  awk '/^  - name: ceph-csi-operator$/ {skip=1; next} skip && /^  - name:/ {skip=0} skip && /^    / {next} {skip=0; print}' \
    "$charts/rook-ceph/Chart.yaml" >"$charts/rook-ceph/Chart.yaml.new"
  grep -q ceph-csi-operator "$charts/rook-ceph/Chart.yaml.new" && { log "could not drop the ceph-csi-operator dependency"; exit 1; }
  mv "$charts/rook-ceph/Chart.yaml.new" "$charts/rook-ceph/Chart.yaml"
  rm -rf "$out/rook-ceph"
  mv "$charts/rook-ceph" "$out/rook-ceph"
  rm -rf "$tmp"
fi
if ! $chart_only && [[ ! -x $out/rook ]]; then
  src="$build/rook-$ROOK_VERSION/src"
  if [[ ! -f $src/go.mod || ! -f $src/pkg/apis/go.mod || ! -f $src/pkg/apis/.prism-$apis_id ]]; then
    rm -rf "$build/rook-$ROOK_VERSION"
    mkdir -p "$build/rook-$ROOK_VERSION/x"
    zip=$(zip_of "github.com/rook/rook@v$ROOK_VERSION")
    apis=${ROOK_APIS_ZIP:-$(zip_of "github.com/rook/rook/pkg/apis@$ROOK_APIS_VERSION")}
    unzip -q "$zip" -d "$build/rook-$ROOK_VERSION/x"
    mv "$build/rook-$ROOK_VERSION/x/github.com/rook/rook@v$ROOK_VERSION" "$src"
    unzip -q "$apis" -d "$build/rook-$ROOK_VERSION/x"
    mv "$build/rook-$ROOK_VERSION/x/github.com/rook/rook/pkg/apis@"* "$src/pkg/apis"
    touch "$src/pkg/apis/.prism-$apis_id"
    rm -rf "$build/rook-$ROOK_VERSION/x"
    chmod -R u+w "$src"
  fi
  log "building rook v$ROOK_VERSION (cold: many minutes on 2 cores)"
  t0=$SECONDS
  tk=$(ticker rook "$t0")
  if ! (cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/rook/rook/pkg/version.Version=v$ROOK_VERSION" -o "$out/rook.tmp" ./cmd/rook); then
    kill "$tk"
    log "building rook failed: if the errors are undefined ceph.rook.io/v1 names, pkg/apis $apis_id is"
    log "older than v$ROOK_VERSION (see the comment at the top; ROOK_APIS_ZIP supplies the right one)"
    exit 1
  fi
  kill "$tk"
  mv "$out/rook.tmp" "$out/rook"
  log "built rook in $((SECONDS - t0)) s"
fi

echo "$out"
