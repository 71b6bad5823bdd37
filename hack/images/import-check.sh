#!/usr/bin/env bash
# Imports bin/images/prism.oci.tar into a private containerd (Debian's, in a temporary root; it
# never touches a containerd this machine may run) as kind does for the kubelet's containerd:
# `ctr -n k8s.io images import --all-platforms --digests`, what `kind load image-archive` runs.
# Checks the image gets the chart's name, is complete, and unpacks with the agent's tools.
#
#   hack/images/import-check.sh [ARCHIVE]
#
# Needs root (containerd) and hack/packages.txt's images group (containerd).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
archive=${1:-$here/../../bin/images/prism.oci.tar}
[[ -f $archive ]] || { echo "import-check: no $archive: run make images" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "import-check: needs root (containerd)" >&2; exit 3; }
"$here/../install-deps.sh" images
ref=$(cd "$here/../.." && go run ./hack/images/mkimage inspect "$archive" | awk '$1 == "ref" {print $2}')

dir=$(mktemp -d /tmp/prism-containerd.XXXXXX)
sock="$dir/containerd.sock"
containerd --root "$dir/root" --state "$dir/state" --address "$sock" --config /dev/null >"$dir/containerd.log" 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
[[ -S $sock ]] || { cat "$dir/containerd.log" >&2; exit 1; }
ctr=(ctr --address "$sock" --namespace k8s.io)
# native: a snapshotter that works in any file system (overlayfs may not, inside a container).
"${ctr[@]}" images import --snapshotter native --all-platforms --digests "$archive"
"${ctr[@]}" images ls
"${ctr[@]}" images ls -q | grep -qxF "$ref" || { echo "import-check: containerd has no image named $ref" >&2; exit 1; }
"${ctr[@]}" images check | grep -F "$ref" | grep -q complete || { echo "import-check: $ref is incomplete in containerd" >&2; exit 1; }
"${ctr[@]}" snapshots --snapshotter native ls | grep -q Committed || { echo "import-check: $ref was not unpacked" >&2; exit 1; }
# The unpacked root holds what the agent runs (a mount of the image's snapshot).
mnt="$dir/mnt"
mkdir -p "$mnt"
"${ctr[@]}" images mount --snapshotter native "$ref" "$mnt" >/dev/null
for f in prism-manager prism-agent sbin/wipefs sbin/blkid usr/bin/partx sbin/sfdisk bin/udevadm usr/sbin/smartctl usr/bin/nsenter; do
  [[ -x $mnt/$f ]] || { echo "import-check: /$f missing in containerd's unpacked image" >&2; "${ctr[@]}" images unmount "$mnt" >/dev/null; exit 1; }
done
"${ctr[@]}" images unmount "$mnt" >/dev/null
echo "import-check: containerd $(containerd --version | awk '{print $3}') imported $ref, complete and unpacked"
