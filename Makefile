# Prism — make help lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

GO ?= go
BIN := $(CURDIR)/bin
CONTROLLER_GEN_VERSION := v0.21.0
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the API types and markers.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=prism-operator paths="{./controllers/...,./cmd/manager/...}" output:rbac:artifacts:config=config/rbac
	hack/sync-chart.sh

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code and the API reference.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(GO) run ./hack/apidocs config/crd/bases > docs/api.md

.PHONY: fmt
fmt: ## Run gofmt.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...

.PHONY: verify
verify: manifests generate ## Fail when generated files or formatting drift from their sources.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@git diff --exit-code -- config charts docs/api.md api || { echo "generated files drifted: run make manifests generate and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- config charts docs/api.md api)" || { echo "untracked generated files:"; git status --porcelain -- config charts docs/api.md api; exit 1; }

##@ Test

.PHONY: envtest-bins
envtest-bins: ## Build (once, cached) kube-apiserver and etcd from the Go module proxy; fetch Rook's CRDs.
	hack/envtest-bins.sh

.PHONY: test
test: ## Run every test: unit, fuzz, envtest, root tests on loop devices, real Ceph, the demo end to end, and the QEMU guest (test-guest). Installs its Debian packages as root.
	hack/test.sh

.PHONY: test-guest
test-guest: ## Rook's exact OSD path (ceph-volume lvm) and the agent's DB slot volumes (LVM, device-mapper) in a QEMU guest built from Debian packages (root; see docs/provisioning.md).
	$(GO) test ./test/guest/ -count=1 -timeout 45m -v

.PHONY: drill-replace-data-disk
drill-replace-data-disk: ## The replace-data-disk runbook's Ceph commands, as the page has them, through a failed QLC drive on a real Ceph 16 on loop devices (root, about 4.5 min).
	PRISM_CEPH_DRILL=1 $(GO) test ./test/ceph/ -run '^TestRunbookReplaceDataDisk$$' -count=1 -timeout 20m -v

.PHONY: drill-replace-fast-device
drill-replace-fast-device: ## The replace-fast-device runbook's Ceph commands and Prism's replacement gate on the live cluster's answers, through a failed fast device on a real Ceph 16 on loop devices (root, about 3 min).
	PRISM_CEPH_DRILL=1 $(GO) test ./test/ceph/ -run '^TestRunbookReplaceFastDevice$$' -count=1 -timeout 40m -v

.PHONY: e2e-guest
e2e-guest: ## The e2e foundations in the forky QEMU guest (root, slow): a real control plane + kubelet to a Ready node and a pod (docs/e2e.md).
	hack/e2e/run.sh node

.PHONY: e2e-rook
e2e-rook: ## e2e-guest, then Rook v1.20.2's chart and its real operator: mon quorum, mgr, an OSD on an emulated NVMe drive (docs/e2e.md).
	hack/e2e/run.sh rook

.PHONY: e2e-rook-chart
e2e-rook-chart: ## e2e-guest, then Rook v1.20.2's own Helm chart with helm and a CephCluster its CRD accepts (no operator: docs/e2e.md).
	hack/e2e/run.sh rook-chart

.PHONY: e2e-prism
e2e-prism: ## e2e-rook-chart, then Prism's image and the Ginkgo suite test/e2e in the guest: helm install, inventory, DryRun, Apply, partitions, CephCluster entries, metrics (docs/e2e.md).
	hack/e2e/run.sh prism

.PHONY: e2e-chain
e2e-chain: ## The whole chain: e2e-prism with Rook's real operator, asserted from Ceph too (OSDs with BlueFS DB on Prism's partitions, a hot-added drive, the policy deleted; docs/e2e.md).
	hack/e2e/run.sh chain

.PHONY: e2e-drills
e2e-drills: ## e2e-chain with the failure drills: a QLC drive dies and docs/runbooks/replace-data-disk.md, run as written, replaces it (docs/e2e.md; not run in a guest yet).
	PRISM_E2E_DRILLS=1 hack/e2e/run.sh chain

.PHONY: e2e-two-nodes
e2e-two-nodes: ## e2e-chain on two QEMU guests linked over the host's loopback, each a node with its own drives (decision 0054; never booted yet: docs/e2e.md).
	PRISM_E2E_NODES=2 hack/e2e/run.sh chain

.PHONY: e2e-kind
e2e-kind: ## The Ginkgo suite test/e2e in a kind cluster (kind v0.33.0's Go library; needs docker or podman: docs/e2e.md).
	$(GO) run ./test/e2e/kind

.PHONY: e2e
e2e: e2e-chain ## Issue 17's items 2-4 at once: the guest cluster, Rook's real operator, Prism's image and chart, and the suite asserted from Ceph (docs/e2e.md).

.PHONY: fuzz
fuzz: ## Fuzz every parser for FUZZTIME each (default 20s).
	hack/fuzz.sh $${FUZZTIME:-20s}

.PHONY: bench
bench: build ## Run the benchmarks in bench/ and print results (see docs/benchmarks*.md).
	bench/run.sh
	$(GO) test ./internal/plan/ ./internal/plan/rook/ ./internal/ioclass/ -run '^$$' -bench . -benchmem -count 5
	KUBEBUILDER_ASSETS=$$(hack/envtest-bins.sh) $(GO) run ./bench/convergence --nodes 1000
	$(GO) run ./bench/sparse -sparse 16 -allocated 2 -runs 5
	@if [ -x bench/footprint/run.sh ]; then bench/footprint/run.sh; fi

.PHONY: bench-writes
bench-writes: ## Client bytes that reach QLC with and without Prism's layout, on the host's Ceph (root, about 20 min; docs/benchmarks.md).
	bench/writes/run.sh

##@ Build

.PHONY: build
build: ## Build the operator, the agent and the kubectl plugin into bin/.
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/prism-manager ./cmd/manager
	LDFLAGS="$(LDFLAGS)" hack/build-agent.sh $(BIN)/prism-agent
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/kubectl-prism ./cmd/kubectl-prism

.PHONY: images
images: ## Build Prism's image as an OCI archive, bin/images/prism.oci.tar, without a container engine (docs/container-image.md).
	VERSION=$(VERSION) hack/images/build.sh

.PHONY: images-arm64
images-arm64: ## The same image for arm64 (Debian's arm64 builds of the same packages, GOARCH=arm64): bin/images/prism-arm64.oci.tar.
	PRISM_IMAGE_ARCH=arm64 VERSION=$(VERSION) hack/images/build.sh

.PHONY: images-multiarch
images-multiarch: images images-arm64 ## Both images as one multi-platform image (an OCI image index, what a registry serves under one tag): bin/images/prism-multiarch.oci.tar.
	$(GO) run ./hack/images/mkimage index --chart charts/prism --created $${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct)} \
		--out bin/images/prism-multiarch.oci.tar bin/images/prism.oci.tar bin/images/prism-arm64.oci.tar

##@ Run

.PHONY: demo
demo: ## Start a local control plane, the operator, four simulated nodes and Prometheus; apply the sample policies. Installs its Debian packages as root, libblkid-dev included, so the agents are the image's libblkid build.
	hack/install-deps.sh build demo
	$(MAKE) --no-print-directory build
	hack/demo.sh

$(CONTROLLER_GEN):
	mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/controller-gen $(CONTROLLER_GEN)
