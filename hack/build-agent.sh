#!/usr/bin/env bash
# Builds prism-agent, static either way:
#
#   hack/build-agent.sh OUT [go build flags...]     LDFLAGS="-X main.version=..." in the environment
#
# With libblkid's headers and static library (Debian libblkid-dev, hack/packages.txt's build
# group) and a C compiler, libblkid is linked in (cgo, -tags libblkid, glibc and libblkid
# linked statically; netgo and osusergo keep glibc's resolver and NSS out), and the inventory
# asks libblkid in process instead of running wipefs (decision 0034). Without them, or with
# PRISM_LIBBLKID=0, it builds with CGO_ENABLED=0 and the agent runs wipefs, as before.
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 1)) || { echo "usage: $0 OUT [go build flags...]" >&2; exit 2; }
out=$1
shift
ldflags=${LDFLAGS:-}

libblkid_static() { # true when libblkid.a and blkid.h are where the C compiler looks
  [[ -f /usr/include/blkid/blkid.h ]] || return 1
  local a
  for a in /usr/lib/*/libblkid.a /usr/lib/libblkid.a /usr/lib64/libblkid.a; do
    [[ -f $a ]] && return 0
  done
  return 1
}
cc=$(go env CC)
if [[ ${PRISM_LIBBLKID:-1} != 0 ]] && libblkid_static && command -v "${cc%% *}" >/dev/null; then
  CGO_ENABLED=1 go build -tags libblkid,netgo,osusergo \
    -ldflags "$ldflags -linkmode external -extldflags -static" "$@" -o "$out" ./cmd/agent
else
  if [[ ${PRISM_LIBBLKID:-1} != 0 ]]; then
    echo "build-agent: libblkid-dev or a C compiler is missing (hack/install-deps.sh build): $out runs wipefs for libblkid's probe" >&2
  fi
  CGO_ENABLED=0 go build -ldflags "$ldflags" "$@" -o "$out" ./cmd/agent
fi
