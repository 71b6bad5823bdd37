#!/usr/bin/env bash
# Runs every Fuzz* target in the module for the given time each (default 20s).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-20s}
# Per run: two runs on one machine must not share (and overwrite) the log.
log=$(mktemp -t prism-fuzz.XXXXXX)
trap 'rm -f "$log"' EXIT
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($fuzztime)"
    for attempt in 1 2; do
      if go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" >"$log" 2>&1; then
        break
      fi
      # Go's fuzzing coordinator can give up on a worker that a loaded machine did not schedule
      # in time ("context deadline exceeded", no input written): that is not a finding, so run
      # the target once more. A real finding writes its input under testdata/fuzz and fails.
      if [[ $attempt -eq 1 ]] && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
        echo "fuzz: $target: the coordinator lost a worker (context deadline exceeded, no failing input); running it again"
        continue
      fi
      cat "$log"
      exit 1
    done
  done
done
