#!/usr/bin/env bash
# Builds (once, cached) the Prism test guest from Debian packages only, and prints the
# directory that holds it. Two suites (PRISM_GUEST_SUITE):
#   bookworm  (default) Debian 12: kernel 6.1, Ceph 16.2; test/guest and the Open CAS record
#   forky     Debian testing: kernel 7.2, Ceph 20.2 Tentacle, containerd, runc, CNI plugins;
#             the e2e guest (docs/decisions/0024-e2e-guest-forky.md). This host's apt
#             knows only bookworm, so forky's package lists live in a private apt state under
#             the cache (PRISM_GUEST_CACHE/apt-forky), refreshed when older than a day.
# The directory holds:
#
#   vmlinuz       Debian's kernel, from the linux-image-<release> package (apt-get download +
#                 dpkg -x, never installed on this host)
#   base.cpio     an uncompressed initramfs: a `debootstrap --variant=minbase <suite>` root
#                 with hack/packages.txt's guest-root (bookworm) or e2e-root (forky) packages,
#                 the kernel modules the guest needs, and hack/guest/init as /init
#   kernel.env    KERNEL_PACKAGE, KERNEL_VERSION and KERNEL_RELEASE, so that the matching
#                 linux-headers-<release> can be fetched (e.g. to build an out-of-tree module)
#   versions.txt  every package installed in the root, with its version
#   candidates.txt  the candidate versions the cache key was computed from
#
# The cache lives in ~/.cache/prism/guest/<key>, outside the clone; the key is a hash of the
# candidate versions of the packages above, of PRISM_GUEST_EXTRA_PACKAGES and of the files in
# hack/guest, so a new Debian point release or a changed script builds a new guest.
#
# Environment:
#   PRISM_GUEST_SUITE           bookworm (default) or forky
#   PRISM_GUEST_KERNEL_SUITE    the suite whose kernel boots the root (default: the root's own),
#                               e.g. trixie's 6.12 under the forky root for an out-of-tree
#                               module that builds against 6.12 but not 7.2 (Open CAS v26.03.2:
#                               docs/opencas-real-module.md); its own private apt state
#   PRISM_GUEST_EXTRA_PACKAGES  more Debian packages for the root (e.g. "build-essential
#                               linux-headers-6.1.0-56-amd64")
#   PRISM_GUEST_CACHE           cache root (default ~/.cache/prism/guest)
# Needs root (debootstrap, chroot) and apt-get; installs what it runs on this host itself
# (hack/install-deps.sh guest: qemu-system-x86, qemu-utils, debootstrap, cpio, kmod).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
log() { echo "guest-build: $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
  echo "guest-build: needs root (debootstrap and chroot); running as uid $(id -u)" >&2
  exit 3
fi

suite=${PRISM_GUEST_SUITE:-bookworm}
ksuite=${PRISM_GUEST_KERNEL_SUITE:-$suite}
[[ $ksuite =~ ^(bookworm|trixie|forky)$ ]] || { log "PRISM_GUEST_KERNEL_SUITE=$ksuite: want bookworm, trixie or forky"; exit 2; }
cache_root=${PRISM_GUEST_CACHE:-$HOME/.cache/prism/guest}
# The root's packages (hack/packages.txt): group guest-root for bookworm (Debian 12 has no
# ceph-volume package: ceph-osd ships ceph-volume), e2e-root for forky.
case $suite in
  bookworm) group=guest-root ;;
  forky) group=e2e-root ;;
  *) log "PRISM_GUEST_SUITE=$suite: want bookworm or forky"; exit 2 ;;
esac
mapfile -t root_pkgs < <("$here/../install-deps.sh" --list $group)
((${#root_pkgs[@]})) || { log "hack/packages.txt lists no $group packages"; exit 1; }
read -r -a extra <<<"${PRISM_GUEST_EXTRA_PACKAGES:-}"

export DEBIAN_FRONTEND=noninteractive
# This host's tools for the build and the boot, depmod included (exits 1 on apt failures).
"$here/../install-deps.sh" guest

# Debian's mirrors as this host's apt is set up (never named here).
mirror_of() { apt-cache policy | awk -v s="$1/main" '$3 == s && $4 == "amd64" {print $2; exit}'; }
mirror=$(mirror_of bookworm)
security=$(mirror_of bookworm-security)
[[ -n $mirror ]] || { log "this host's apt has no bookworm/main source"; exit 1; }

# apt: this host's own for bookworm; for any other suite a private state (lists, cache,
# sources) that leaves this host's apt untouched, refreshed when older than a day.
private_apt() {
  local dir="$cache_root/apt-$1"
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $1 main" >"$dir/sources.list"
  printf '%s\n' -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o "Dir::Etc::SourceList=$dir/sources.list" \
    -o Dir::Etc::SourceParts=/dev/null -o Dir::State::status=/dev/null -o APT::Architecture=amd64 \
    -o APT::Sandbox::User=root -o Acquire::Check-Valid-Until=false
}
apt_opts=() kapt_opts=()
[[ $suite == bookworm ]] || mapfile -t apt_opts < <(private_apt "$suite")
[[ $ksuite == bookworm ]] || mapfile -t kapt_opts < <(private_apt "$ksuite")
declare -A updated=()
# apt_update SUITE OPTS: apt-get update of SUITE's state (OPTS: the name of its options array),
# once per build and suite.
apt_update() {
  local s=$1
  local -n o=$2
  if [[ -z ${updated[$s]:-} ]]; then
    log "apt-get update ($s)"
    apt-get "${o[@]}" update -qq >/dev/null
    updated[$s]=1
  fi
}
for pair in "$suite apt_opts" "$ksuite kapt_opts"; do
  read -r s opts <<<"$pair"
  if [[ $s != bookworm ]] && [[ -z $(find "$cache_root/apt-$s/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null) ]]; then
    apt_update "$s" "$opts"
  fi
done

# The kernel: whatever linux-image-amd64 depends on now in the kernel's suite
# (linux-image-6.1.0-NN-amd64 on bookworm).
kernel_pkg() { apt-cache "${kapt_opts[@]}" depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
kpkg=$(kernel_pkg)
if [[ -z $kpkg ]]; then
  apt_update "$ksuite" kapt_opts
  kpkg=$(kernel_pkg)
fi
[[ -n $kpkg ]] || { log "apt-cache knows no linux-image-amd64 for $ksuite"; exit 1; }
# Since 7.x Debian splits a kernel release into linux-image-<rel> (a meta package),
# linux-binary-<rel> (vmlinuz), linux-modules-<rel> and linux-base-<rel>: fetch them all.
mapfile -t kparts < <(apt-cache "${kapt_opts[@]}" depends "$kpkg" 2>/dev/null |
  awk '/Depends: linux-(binary|modules|base)-[0-9]/ {print $2}' | sort -u)

# Candidate versions of everything that goes into the guest, from the suites' apt lists.
# candidates OPTS PKG...: from the apt state whose options array is named OPTS.
candidates() {
  local -n o=$1
  shift
  apt-cache "${o[@]}" policy "$@" | awk '/^[^ ]/ {p=$1} /Candidate:/ {print p, $2}'
}
all_candidates() { candidates kapt_opts "$kpkg" "${kparts[@]}"; candidates apt_opts debootstrap "${root_pkgs[@]}" "${extra[@]}"; }
versions=$(all_candidates)
if grep -q "(none)" <<<"$versions"; then
  apt_update "$suite" apt_opts
  apt_update "$ksuite" kapt_opts
  versions=$(all_candidates)
fi
if bad=$(grep "(none)" <<<"$versions"); then
  log "no installable version of: $bad"
  exit 1
fi
scripts=$(cd "$here" && sha256sum build.sh init nvmet-loop.sh)
key=$(printf '%s\n%s\n%s\n' "$versions" "${extra[*]}" "$scripts" | sha256sum | cut -c1-16)
[[ $ksuite == "$suite" ]] || key="k$ksuite-$key"
[[ $suite == bookworm ]] || key="$suite-$key"
out="$cache_root/$key"
mkdir -p "$cache_root"

# One build per key at a time (other sessions may share the machine and the cache).
exec 9>"$cache_root/.lock-$key"
flock 9
if [[ -f $out/ok ]]; then
  touch "$out/ok"
  log "cached guest $out"
  echo "$out"
  exit 0
fi

start=$(date +%s)
tmp=$(mktemp -d "$cache_root/build-$key.XXXXXX")
root="$tmp/root"
cleanup() {
  mountpoint -q "$root/proc" 2>/dev/null && umount -l "$root/proc"
  if grep -q " $root/" /proc/self/mounts; then
    log "something is still mounted under $root: leaving $tmp in place"
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

log "key $key: $suite, kernel package $kpkg ($ksuite), mirror from this host's apt sources"

# 1. The kernel, extracted (not installed).
mkdir -p "$tmp/kernel"
(cd "$tmp" && apt-get "${kapt_opts[@]}" download -qq "$kpkg" "${kparts[@]}" 2>/dev/null)
for p in "$kpkg" "${kparts[@]}"; do
  dpkg -x "$tmp"/"$p"_*.deb "$tmp/kernel"
done
# Newer kernel packages ship their modules in /usr/lib/modules (merged /usr).
if [[ ! -d $tmp/kernel/lib/modules && -d $tmp/kernel/usr/lib/modules ]]; then
  ln -s usr/lib "$tmp/kernel/lib"
fi
krel=$(ls "$tmp/kernel/lib/modules")
kver=$(dpkg-deb -f "$tmp"/"$kpkg"_*.deb Version)
if [[ -f $tmp/kernel/boot/vmlinuz-$krel ]]; then
  cp "$tmp/kernel/boot/vmlinuz-$krel" "$tmp/vmlinuz"
else
  cp "$tmp/kernel/lib/modules/$krel/vmlinuz" "$tmp/vmlinuz" # linux-binary-<rel>
fi
log "kernel $krel ($kpkg $kver) extracted ($(($(date +%s) - start)) s)"

# 2. The root.
# Debian 12's debootstrap has no script named forky: testing bootstraps as sid does.
script=()
[[ -e /usr/share/debootstrap/scripts/$suite ]] || script=(/usr/share/debootstrap/scripts/sid)
debootstrap --variant=minbase "$suite" "$root" "$mirror" "${script[@]}" >"$tmp/debootstrap.log" 2>&1 ||
  { tail -30 "$tmp/debootstrap.log" >&2; exit 1; }
log "debootstrap done ($(($(date +%s) - start)) s)"
if [[ $suite == bookworm ]]; then
  {
    echo "deb $mirror bookworm main"
    echo "deb $mirror bookworm-updates main"
    [[ -z $security ]] || echo "deb $security bookworm-security main"
  } >"$root/etc/apt/sources.list"
else
  echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
  # This machine's mirror is a snapshot: its testing Release file is past its Valid-Until.
  echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99prism-snapshot"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Nothing may start a service in the chroot.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
mount -t proc proc "$root/proc"
chroot "$root" apt-get update -qq >/dev/null
chroot "$root" apt-get install -y -qq --no-install-recommends "${root_pkgs[@]}" "${extra[@]}" >"$tmp/apt.log" 2>&1 ||
  { tail -30 "$tmp/apt.log" >&2; exit 1; }
chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' >"$tmp/versions.txt"
umount "$root/proc"
log "packages installed ($(($(date +%s) - start)) s)"

# 3. Slim it: no docs, manuals, locales or apt caches (the guest has no network).
rm -rf "$root"/usr/share/{doc,man,info}/* "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* \
  "$root"/usr/sbin/policy-rc.d "$root"/etc/resolv.conf
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +

# 4. Kernel modules: storage, device-mapper, bcache, NVMe host and target, loop, 9p over
# virtio, and everything they depend on (from the package's own modules.dep).
kmods="$tmp/kernel/lib/modules/$krel"
depmod -b "$tmp/kernel" "$krel" # the package leaves modules.dep to its postinst
dest="$root/lib/modules/$krel"
mkdir -p "$dest"
cp "$kmods"/modules.{order,builtin,builtin.modinfo} "$dest/"
# The e2e guest also runs containers: overlayfs, veth and bridge for CNI, netfilter for
# kube-proxy, ext4 for its work disk; and virtio_net for the link between two guests
# (hack/guest/run.sh --link; in 7.2.12 it needs net_failover and failover, from modules.dep).
dirs=(kernel/drivers/nvme kernel/drivers/md kernel/drivers/block kernel/drivers/virtio
  kernel/fs/9p kernel/net/9p kernel/fs/netfs kernel/fs/fscache kernel/fs/configfs kernel/fs/xfs)
# ext4 asks for crc32c through the crypto API (a soft dependency, not in modules.dep): 6.12
# has it as a module ("EXT4-fs: Cannot load crc32c driver" without it), 7.2 built in.
[[ $suite == bookworm ]] || dirs+=(kernel/fs/overlayfs kernel/fs/ext4 kernel/net/netfilter kernel/net/ipv4
  kernel/net/ipv6 kernel/net/bridge kernel/net/sched kernel/net/packet kernel/drivers/net/veth.ko.xz
  kernel/drivers/net/dummy.ko.xz kernel/drivers/net/veth.ko kernel/drivers/net/dummy.ko
  kernel/drivers/net/virtio_net.ko.xz kernel/drivers/net/virtio_net.ko
  kernel/crypto/crc32c_generic.ko.xz kernel/crypto/crc32c_generic.ko
  kernel/arch/x86/crypto/crc32c-intel.ko.xz kernel/arch/x86/crypto/crc32c-intel.ko)
wanted=$(cd "$kmods" && find "${dirs[@]}" -name '*.ko*' 2>/dev/null || true)
closure=$( (echo "$wanted"; for m in $wanted; do
  awk -v m="$m:" '$1 == m { for (i = 2; i <= NF; i++) print $i }' "$kmods/modules.dep"
done) | sort -u)
for m in $closure; do
  install -D -m 644 "$kmods/$m" "$dest/$m"
done
if [[ $suite == bookworm ]]; then
  depmod -b "$root" "$krel"
else
  chroot "$root" depmod "$krel" # the root's own kmod, as new as the kernel
fi
log "$(wc -l <<<"$closure") kernel modules copied"

# 5. Prism's guest pieces.
install -m 755 "$here/init" "$root/init"
install -m 755 "$here/nvmet-loop.sh" "$root/usr/local/sbin/prism-nvmet-loop"
[[ -e $root/dev/console ]] || mknod -m 600 "$root/dev/console" c 5 1
[[ -e $root/dev/null ]] || mknod -m 666 "$root/dev/null" c 1 3
echo prism-guest >"$root/etc/hostname"
printf 'SUITE=%s\nKERNEL_SUITE=%s\n' "$suite" "$ksuite" >"$root/etc/prism-guest-suite.env"
printf 'KERNEL_PACKAGE=%s\nKERNEL_VERSION=%s\nKERNEL_RELEASE=%s\n' "$kpkg" "$kver" "$krel" | tee "$tmp/kernel.env" >"$root/etc/prism-guest-kernel.env"

# 6. Pack.
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$tmp/base.cpio"
log "root $(du -sh "$root" | cut -f1), initramfs $(du -h "$tmp/base.cpio" | cut -f1) ($(($(date +%s) - start)) s)"
mkdir -p "$out"
mv "$tmp/vmlinuz" "$tmp/base.cpio" "$tmp/kernel.env" "$tmp/versions.txt" "$out/"
printf '%s\n' "$versions" >"$out/candidates.txt"
touch "$out/ok"
log "built guest $out in $(($(date +%s) - start)) s"

# Keep the three most recently used guests; each is about a gigabyte.
ls -1dt "$cache_root"/*/ok 2>/dev/null | tail -n +4 | while read -r old; do
  d=$(dirname "$old")
  log "removing old guest $d"
  rm -rf "$d"
done
echo "$out"
