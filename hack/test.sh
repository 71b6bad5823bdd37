#!/usr/bin/env bash
# Runs all of Prism's tests: vet, unit and table tests, fuzz seed corpora, envtest suites
# against a real kube-apiserver and etcd (built once by hack/envtest-bins.sh), real-tool and
# loop-device tests (root), and a short fuzzing pass over every parser.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# Every Debian package the tests, the demo and the guest build run (hack/packages.txt); build:
# libblkid-dev, which the agent links (hack/build-agent.sh).
hack/install-deps.sh test demo guest build
KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh)
export KUBEBUILDER_ASSETS
echo "test: envtest assets in $KUBEBUILDER_ASSETS ($(($(date +%s) - start)) s)"
# took NAME: says how long the stage since the last took (or the start) ran, so that a CI log
# shows where the minutes of make test go (the target is about 45 minutes cold).
since=$(date +%s)
took() {
  echo "test: $1 took $(($(date +%s) - since)) s"
  since=$(date +%s)
}
go vet ./...
go vet -tags libblkid ./internal/host/blkid/ ./internal/node/inventory/ ./cmd/agent/
took vet
# Prism's image as an OCI archive (cached root layer; seconds when warm): hack/images' tests
# check every agent tool is in it and runs there (docs/decisions/0023); the arm64 image and
# the multi-platform index too, checked by their files (they cannot run here).
make images
make images-arm64
make images-multiarch
took images
# test/guest boots a QEMU guest; it runs alone below (make test-guest) rather than beside the
# other packages' tests, which would slow its emulated CPUs.
# The packages that inventory every loop device of the machine, or look for the processes
# that hold their own loops open (decision 0040), run one at a time after the others: each
# one's inventory opens the others' loops, which the opener scan rightly counts as users.
loops=(./test/foreign ./test/crash ./test/provision ./test/loopdev ./test/ceph ./internal/node/inventory)
go test $(go list ./... | grep -v -e '/test/guest$' $(printf -- ' -e /%s$' "${loops[@]#./}")) -count=1 -timeout 30m
took packages
go test -p 1 "${loops[@]}" -count=1 -timeout 45m
took loop-packages
# The agent as make build and the image build it: libblkid in process (cgo, -tags libblkid),
# which must find what the wipefs child finds (real formats on loop devices as root).
go test -p 1 -tags libblkid ./internal/host/blkid/ ./internal/node/inventory/ ./cmd/agent/ ./test/loopdev/ -count=1
took libblkid-packages
hack/fuzz.sh "${FUZZTIME:-5s}"
took fuzz
# End to end: the demo's real control plane, operator binary and agent binaries on the fixture
# nodes; as root, the agents partition loop-backed fast devices and run caches on the casadm
# emulator, and every dashboard query must have data from the real agents (--check-panels,
# with Debian's Prometheus). About 45 s, 30 s more than without caches and the check.
make build
took build
demo_args=(--once)
if [[ $(id -u) -eq 0 ]]; then
  demo_args+=(--check-panels)
else
  echo "test: not root: the demo runs without loop devices, caches and the dashboard check" >&2
fi
demo_dir=$(mktemp -d)
demo_start=$(date +%s)
go run ./hack/demo "${demo_args[@]}" --dir "$demo_dir" >"$demo_dir/demo.out" || { cat "$demo_dir/demo.out" "$demo_dir"/*.log; exit 1; }
grep -q "with both tiers" "$demo_dir/demo.out"
echo "test: demo ran end to end with ${demo_args[*]} in $(($(date +%s) - demo_start)) s (output in $demo_dir/demo.out)"
guest_start=$(date +%s)
make test-guest
echo "test: guest test took $(($(date +%s) - guest_start)) s"
echo "test: all passed in $(($(date +%s) - start)) s"
