#!/usr/bin/env bash
# make demo: builds kubectl too (once, cached), then runs hack/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
# A real Prometheus scrapes the simulated agents for the endurance page (Debian's package).
if ! command -v prometheus >/dev/null && [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null || true
fi
KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh --with-kubectl)
export KUBEBUILDER_ASSETS
exec go run ./hack/demo "$@"
