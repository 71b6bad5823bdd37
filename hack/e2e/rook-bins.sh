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
#   csi-operator.yaml  Rook's deploy/examples/csi-operator.yaml, as in the zip: the csi.ceph.io
#               CRDs (the dropped subchart's) come from it (hack/e2e/crds); Rook's operator
#               writes a CephConnection and a ClientProfile whenever it saves its mons
#
# Nothing of Rook's or Helm's is copied into this repository: sources stay in the cache.
#
# Why Rook v1.20.2 and this pkg/apis (docs/decisions/0024-e2e-guest-forky.md, docs/e2e.md): the module
# proxy serves no pkg/apis version from any v1.20.x release commit. It serves
# v0.0.0-20260707223529-6c2a3a5f2b08, a master commit from the day v1.20.2 was tagged, whose
# Go files are v1.20.2's pkg/apis byte for byte except one comment line (object.go's
# isTLSv1_2orBelowEnabled doc comment); only its go.mod/go.sum differ (master had moved to
# k8s.io 0.36). The checksum database has no record of that pseudo-version, so the script
# fetches it with GONOSUMDB and checks the hash pinned here instead; and it writes pkg/apis's
# go.mod with no requirements, so the build list is exactly v1.20.2's own go.mod's.
# --chart-only: helm and the chart, not rook.
# Env: PRISM_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/prism)
set -euo pipefail

ROOK_VERSION=1.20.2
ROOK_APIS_VERSION=v0.0.0-20260707223529-6c2a3a5f2b08
ROOK_APIS_SUM=h1:u+Hp2VBML49bcIIzkSjQm5KorfYqM7GAsDTU6uBSRKo=
HELM_VERSION=3.22.0

chart_only=false
[[ ${1:-} != --chart-only ]] || chart_only=true

cache="${PRISM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism}"
apis_id=${ROOK_APIS_VERSION##*-}
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
if [[ ! -f $out/csi-operator.yaml ]]; then
  zip=$(zip_of "github.com/rook/rook@v$ROOK_VERSION")
  unzip -q -p "$zip" "github.com/rook/rook@v$ROOK_VERSION/deploy/examples/csi-operator.yaml" >"$out/csi-operator.yaml.tmp"
  mv "$out/csi-operator.yaml.tmp" "$out/csi-operator.yaml"
fi
if ! $chart_only && [[ ! -x $out/rook ]]; then
  src="$build/rook-$ROOK_VERSION/src"
  if [[ ! -f $src/go.mod || ! -f $src/pkg/apis/go.mod || ! -f $src/pkg/apis/.prism-$apis_id ]]; then
    rm -rf "$build/rook-$ROOK_VERSION"
    mkdir -p "$build/rook-$ROOK_VERSION/x"
    zip=$(zip_of "github.com/rook/rook@v$ROOK_VERSION")
    # No checksum-database record for this pseudo-version (404): the pinned hash replaces it.
    json=$(cd "$build" && GONOSUMDB=github.com/rook/rook/pkg/apis GOFLAGS=-mod=mod go mod download -json "github.com/rook/rook/pkg/apis@$ROOK_APIS_VERSION")
    sum=$(sed -n 's/.*"Sum": "\(.*\)".*/\1/p' <<<"$json")
    [[ $sum == "$ROOK_APIS_SUM" ]] || { log "pkg/apis@$ROOK_APIS_VERSION has hash '$sum', pinned $ROOK_APIS_SUM"; exit 1; }
    apis=$(sed -n 's/.*"Zip": "\(.*\)".*/\1/p' <<<"$json")
    unzip -q "$zip" -d "$build/rook-$ROOK_VERSION/x"
    mv "$build/rook-$ROOK_VERSION/x/github.com/rook/rook@v$ROOK_VERSION" "$src"
    unzip -q "$apis" -d "$build/rook-$ROOK_VERSION/x"
    mv "$build/rook-$ROOK_VERSION/x/github.com/rook/rook/pkg/apis@"* "$src/pkg/apis"
    chmod -R u+w "$src"
    # The API code is v1.20.2's; its go.mod is master's (k8s.io 0.36). With no requirements
    # the build list is Rook v1.20.2's go.mod's (tidy, so it already lists pkg/apis's imports).
    printf 'module github.com/rook/rook/pkg/apis\n\ngo 1.25.0\n' >"$src/pkg/apis/go.mod"
    rm -f "$src/pkg/apis/go.sum"
    touch "$src/pkg/apis/.prism-$apis_id"
    rm -rf "$build/rook-$ROOK_VERSION/x"
  fi
  log "building rook v$ROOK_VERSION (cold: many minutes on 2 cores)"
  t0=$SECONDS
  tk=$(ticker rook "$t0")
  # -tags ceph_preview as Rook's Makefile builds (TAGS ?= ceph_preview): go-ceph's rgw/admin
  # account API is behind that tag.
  if ! (cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -tags ceph_preview \
    -ldflags "-s -w -X github.com/rook/rook/pkg/version.Version=v$ROOK_VERSION" -o "$out/rook.tmp" ./cmd/rook); then
    kill "$tk"
    log "building rook failed"
    exit 1
  fi
  kill "$tk"
  mv "$out/rook.tmp" "$out/rook"
  log "built rook in $((SECONDS - t0)) s"
fi

echo "$out"
