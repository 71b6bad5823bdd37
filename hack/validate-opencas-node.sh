#!/usr/bin/env bash
# Checks Prism's Open CAS handling against the real casadm of this node (Open CAS installed).
# Read-only unless --load-into-cache is given. Run it as root on the node, from a checkout:
#
#   hack/validate-opencas-node.sh                          # parse every casadm output the agent uses
#   hack/validate-opencas-node.sh --policy my-classes.yaml # ... and compile a ClassificationPolicy
#   hack/validate-opencas-node.sh --policy my-classes.yaml --load-into-cache 1
#       # ... and load it into cache 1 with casadm, read it back, then restore cache 1's classes
#
# Without a Go toolchain, copy a prism-agent binary to the node and run
# `prism-agent cache-check` with the same flags (--agent PATH points this script at one).
# Every line is OK or FAIL with what was read; the exit status is 1 when any check failed.
# Send FAIL lines and `casadm -V` to the Prism issue tracker: they mean Prism misreads your
# casadm release.
set -euo pipefail
cd "$(dirname "$0")/.."
agent=""
args=()
while (($#)); do
  case $1 in
    --agent) agent=$2; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
if ! command -v casadm >/dev/null; then
  echo "validate-opencas-node: casadm is not on PATH: install Open CAS on this node first" >&2
  exit 2
fi
if [[ -r /proc/modules ]] && ! grep -q '^cas_cache ' /proc/modules; then
  echo "validate-opencas-node: the cas_cache module is not loaded (modprobe cas_cache); casadm will fail" >&2
fi
if [[ -z $agent ]]; then
  agent=$(mktemp -d)/prism-agent
  CGO_ENABLED=0 go build -o "$agent" ./cmd/agent
fi
echo "casadm: $(casadm -V -o csv 2>/dev/null | tr '\n' ' ')"
exec "$agent" cache-check "${args[@]}"
