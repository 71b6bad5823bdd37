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
# rules FILE KIND: the rules of FILE's document of that kind (controller-gen writes the
# ClusterRole, then a Role for the namespaced markers, in one file).
rules() { awk -v kind="$2" '/^---/ {doc = ""; inrules = 0; next} /^kind:/ {doc = $2} doc == kind && inrules {print} doc == kind && /^rules:/ {inrules = 1}' "$1"; }
rules config/rbac/role.yaml ClusterRole >"$chart/files/operator-rules.yaml"
# The Ceph probe's rules (pods, CephClients), granted in each of operator.cephNamespaces only.
rules config/rbac/role.yaml Role >"$chart/files/operator-ceph-namespace-rules.yaml"
rules config/rbac/agent_role.yaml ClusterRole >"$chart/files/agent-rules.yaml"
