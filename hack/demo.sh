#!/usr/bin/env bash
# make demo: installs the demo's Debian packages (root), builds kubectl too (once, cached), then
# runs hack/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
# sfdisk, sgdisk, partx and losetup partition the loop devices; Prometheus scrapes the agents
# for the endurance page (hack/packages.txt, group demo). Not root: it says what is missing.
hack/install-deps.sh demo
KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh --with-kubectl)
export KUBEBUILDER_ASSETS
# A built binary, not go run: go run exits 1 when Ctrl-C reaches it, even after the demo's
# clean stop, and make then reports an error.
go build -o bin/demo ./hack/demo
exec bin/demo "$@"
