#!/usr/bin/env bash
# Runs every Fuzz* target in the module for the given time each (default 20s).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-20s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($fuzztime)"
    go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" >/tmp/prism-fuzz.log 2>&1 || { cat /tmp/prism-fuzz.log; exit 1; }
  done
done
