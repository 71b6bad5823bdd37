#!/usr/bin/env bash
# Builds the control-plane binaries envtest needs (kube-apiserver, etcd) from the Go module
# proxy at pinned versions, and extracts Rook's real CRDs from the rook module zip.
# setup-envtest cannot download here, so we build once and cache outside the clone.
#
# Usage: hack/envtest-bins.sh [--with-controllers] [--with-kubectl] [--with-node]   prints the
#        asset directory. --with-node adds kubelet and kube-proxy (the e2e guest's node, make e2e).
# Env:   PRISM_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/prism)
set -euo pipefail

K8S_VERSION=1.36.4       # k8s.io/kubernetes v1.36.4; staging modules at v0.36.4
ETCD_VERSION=3.6.9       # go.etcd.io/etcd/server/v3
ROOK_VERSION=1.20.4      # github.com/rook/rook (deploy/examples/crds.yaml)

with_controllers=false with_kubectl=false with_node=false
for arg in "$@"; do
  case "$arg" in
    --with-controllers) with_controllers=true ;;
    --with-kubectl) with_kubectl=true ;;
    --with-node) with_node=true ;;
    *) echo "envtest-bins: unknown argument $arg" >&2; exit 2 ;;
  esac
done

cache="${PRISM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism}"
assets="$cache/envtest/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
rookdir="$cache/rook/$ROOK_VERSION"
mkdir -p "$assets" "$rookdir"
log() { echo "envtest-bins: $*" >&2; }

# build_in_module DIR BIN PKG LDFLAGS: go build PKG inside the throw-away module DIR.
build_in_module() {
  local dir=$1 bin=$2 pkg=$3 ldflags=$4
  [[ -x "$assets/$bin" ]] && return 0
  log "building $bin from $pkg (cold, on 2 cores: about 6 min for kube-apiserver, 3 for etcd, 1-2 for kubectl)"
  local t0=$SECONDS ticker
  # A cold build prints nothing for minutes: say it is still going.
  # Its stdout is stderr: the caller reads the asset dir from stdout with $(...) and would wait.
  (while sleep 30; do log "still building $bin ($((SECONDS - t0)) s)"; done) >&2 &
  ticker=$!
  if ! (cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$assets/$bin.tmp" "$pkg"); then
    kill "$ticker"
    log "building $bin failed"
    return 1
  fi
  kill "$ticker"
  log "built $bin in $((SECONDS - t0)) s"
  mv "$assets/$bin.tmp" "$assets/$bin"
}

k8s_module() {
  local dir="$cache/build/k8s-$K8S_VERSION"
  mkdir -p "$dir"
  if [[ ! -f "$dir/go.mod" ]]; then
    local zip
    zip=$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"Zip": "\(.*\)".*/\1/p')
    {
      echo "module prism.local/envtestbuild"
      echo "go 1.26"
      echo "require k8s.io/kubernetes v$K8S_VERSION"
      echo "replace ("
      # Every staging module of k8s.io/kubernetes, pinned to its published v0.<minor>.<patch>.
      unzip -p "$zip" "k8s.io/kubernetes@v$K8S_VERSION/go.mod" |
        sed -n '/^replace (/,/^)/p' | awk '/=> \.\/staging/ {print "\t" $1 " => " $1 " v0." substr("'"$K8S_VERSION"'", 3)}'
      echo ")"
    } >"$dir/go.mod.tmp"
    mv "$dir/go.mod.tmp" "$dir/go.mod"
  fi
  echo "$dir"
}

etcd_module() {
  local dir="$cache/build/etcd-$ETCD_VERSION"
  mkdir -p "$dir"
  if [[ ! -f "$dir/go.mod" ]]; then
    printf 'module prism.local/etcdbuild\ngo 1.26\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" >"$dir/go.mod"
  fi
  echo "$dir"
}

kver="-X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#1.}"
kver="${kver%.*}"   # gitMinor is the minor number only
kdir=$(k8s_module)
build_in_module "$kdir" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "-s -w $kver"
if $with_controllers; then
  build_in_module "$kdir" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "-s -w $kver"
  build_in_module "$kdir" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "-s -w $kver"
fi
if $with_node; then
  build_in_module "$kdir" kubelet k8s.io/kubernetes/cmd/kubelet "-s -w $kver"
  build_in_module "$kdir" kube-proxy k8s.io/kubernetes/cmd/kube-proxy "-s -w $kver"
fi
if $with_kubectl; then
  build_in_module "$kdir" kubectl k8s.io/kubernetes/cmd/kubectl "-s -w $kver"
fi
build_in_module "$(etcd_module)" etcd go.etcd.io/etcd/server/v3 "-s -w"

if [[ ! -f "$rookdir/crds.yaml" ]]; then
  log "extracting Rook v$ROOK_VERSION CRDs"
  zip=$(cd "$(etcd_module)" && go mod download -json "github.com/rook/rook@v$ROOK_VERSION" | sed -n 's/.*"Zip": "\(.*\)".*/\1/p')
  unzip -p "$zip" "github.com/rook/rook@v$ROOK_VERSION/deploy/examples/crds.yaml" >"$rookdir/crds.yaml.tmp"
  mv "$rookdir/crds.yaml.tmp" "$rookdir/crds.yaml"
fi
ln -sfn "$rookdir/crds.yaml" "$assets/rook-crds.yaml"
echo "$assets"
