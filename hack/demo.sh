#!/usr/bin/env bash
# make demo: builds kubectl too (once, cached), then runs hack/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh --with-kubectl)
export KUBEBUILDER_ASSETS
exec go run ./hack/demo "$@"
