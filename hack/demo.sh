#!/usr/bin/env bash
# make demo: builds kubectl too (once, cached), then runs hack/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
# sfdisk, sgdisk, partx and losetup partition the loop devices; Prometheus scrapes the agents
# for the endurance page (hack/packages.txt, group demo). Not root: it says what is missing.
hack/install-deps.sh demo
KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh --with-kubectl)
export KUBEBUILDER_ASSETS
exec go run ./hack/demo "$@"
