#!/usr/bin/env bash
# Copies generated artefacts into the chart:
# - CRDs into templates/crds/ (not crds/: Helm never upgrades CRDs in crds/, so users would
#   keep stale schemas after `helm upgrade`), kept on uninstall;
# - the RBAC rules of config/rbac into files/, so the chart grants exactly what the code needs.
set -euo pipefail
cd "$(dirname "$0")/.."
chart=charts/prism
mkdir -p "$chart/templates/crds" "$chart/files"
rm -f "$chart"/templates/crds/*.yaml
for f in config/crd/bases/*.yaml; do
  {
    echo "{{- if .Values.crds.install }}"
    sed '/^  annotations:/a\    helm.sh/resource-policy: keep' "$f"
    echo "{{- end }}"
  } >"$chart/templates/crds/$(basename "$f")"
done
rules() { sed -n '/^rules:/,$p' "$1" | tail -n +2; }
rules config/rbac/role.yaml >"$chart/files/operator-rules.yaml"
rules config/rbac/agent_role.yaml >"$chart/files/agent-rules.yaml"
