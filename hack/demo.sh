#!/usr/bin/env bash
# make demo, once it has installed the build and demo groups of hack/packages.txt (root) and
# run make build: builds kubectl too (once, cached), then runs hack/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh --with-kubectl)
export KUBEBUILDER_ASSETS
# A built binary, not go run: go run exits 1 when Ctrl-C reaches it, even after the demo's
# clean stop, and make then reports an error.
go build -o bin/demo ./hack/demo
exec bin/demo "$@"
