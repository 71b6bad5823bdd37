#!/bin/bash
# Sourced by the guest scripts (rook-path.sh, db-volumes.sh) after `set -euo pipefail`; the
# host test puts it in the guest as /prism/lib.sh. It empties the results directory
# $out ($PRISM_OUT/out), starts the step timer and sets the failure trap. A script names itself
# in $guest_script first, and may define on_failure to save more when a line fails.
out=${PRISM_OUT:?}/out
rm -rf "$out"
mkdir -p "$out"
t0=$(date +%s.%N)
last=$t0

# step NAME: records how long the step took, and the time since the script started.
step() {
  local now
  now=$(date +%s.%N)
  awk -v n="$1" -v a="$last" -v b="$now" -v z="$t0" 'BEGIN {printf "%s\t%.1f\t%.1f\n", n, b - a, b - z}' | tee -a "$out/steps.tsv" | sed 's/^/PRISM-STEP /'
  last=$now
}
failed() {
  local rc=$? line=$1
  echo "${guest_script:-$0}: line $line failed with status $rc" | tee "$out/failure.txt"
  if declare -F on_failure >/dev/null; then on_failure; fi
  exit "$rc"
}
trap 'failed $LINENO' ERR
# json FILE EXPR: evaluates a Python expression over the JSON document d.
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=eval(sys.argv[2]); print("\n".join(map(str,r)) if isinstance(r,list) else r)' "$@"; }
