# Sourced by hack/images/build.sh and lock.sh: apt for the image's architecture.
#
#   apt_setup ARCH CACHE_ROOT   sets apt_opts, the options every apt-get/apt-cache call takes
#   apt_refresh                 updates the indexes apt_opts reads (1 when it cannot)
#
# For this machine's own architecture apt runs as it is, on the host's lists. For another one
# (arm64 on an amd64 machine) it runs on a private state under CACHE_ROOT/apt-ARCH: the host's
# sources and keyring (the indexes are checked against Debian's signed InRelease as usual),
# that architecture's Packages indexes, an empty dpkg status. The host's dpkg never learns of
# a foreign architecture (no dpkg --add-architecture), and no root is needed.
apt_setup() {
  local arch=$1 dir="$2/apt-$1"
  apt_opts=()
  apt_private=false
  [[ $arch == "$(dpkg --print-architecture)" ]] && return 0
  apt_private=true
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  : >"$dir/status"
  apt_opts=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" -o "Dir::State::Lists=$dir/lists"
    -o "Dir::Cache=$dir/cache" -o "Dir::State::status=$dir/status" -o Debug::NoLocking=1)
  # As root apt drops to the _apt user for downloads, which cannot write the private lists.
  [[ $(id -u) -ne 0 ]] || apt_opts+=(-o APT::Sandbox::User=root)
}

apt_refresh() {
  if $apt_private; then
    apt-get "${apt_opts[@]}" update -qq >/dev/null
  elif [[ $(id -u) -eq 0 ]]; then
    apt-get update -qq >/dev/null
  else
    return 1
  fi
}
