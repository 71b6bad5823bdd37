# One image for the operator (/prism-manager) and the node agent (/prism-agent).
FROM golang:1.26 AS build
WORKDIR /src
# libblkid's headers and static library: the agent links libblkid in (hack/build-agent.sh).
RUN apt-get update && apt-get install -y -q --no-install-recommends libblkid-dev && rm -rf /var/lib/apt/lists/*
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
COPY hack/build-agent.sh hack/
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/prism-manager ./cmd/manager && \
    LDFLAGS="-s -w -X main.version=${VERSION}" hack/build-agent.sh /out/prism-agent -trimpath

# Host tools the agent runs through its executor: wipefs, blkid, partx, nsenter (util-linux),
# sfdisk (fdisk), udevadm (udev), smartctl (smartmontools): hack/packages.txt's image-root
# group, from which make images builds the same image without Docker (docs/container-image.md;
# a test in hack/images keeps the two lists equal). The agent writes its GPTs itself
# (docs/decisions/0018).
# casadm is not in any registry: it comes with Open CAS on the host (docs/cache.md).
FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends fdisk mount smartmontools udev util-linux && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/prism-manager /out/prism-agent /
USER 65532:65532
ENTRYPOINT ["/prism-manager"]
