#!/usr/bin/env bash
# Builds (once, cached) the Prism test guest from Debian 12 packages only, and prints the
# directory that holds it:
#
#   vmlinuz       Debian's kernel, from the linux-image-<release> package (apt-get download +
#                 dpkg -x, never installed on this host)
#   base.cpio     an uncompressed initramfs: a `debootstrap --variant=minbase bookworm` root
#                 with lvm2, nvme-cli, gdisk, udev and Ceph's OSD/mon packages, the kernel
#                 modules the guest needs, and hack/guest/init as /init
#   kernel.env    KERNEL_PACKAGE, KERNEL_VERSION and KERNEL_RELEASE, so that the matching
#                 linux-headers-<release> can be fetched (e.g. to build an out-of-tree module)
#   versions.txt  every package installed in the root, with its version
#
# The cache lives in ~/.cache/prism/guest/<key>, outside the clone; the key is a hash of the
# candidate versions of the packages above, of PRISM_GUEST_EXTRA_PACKAGES and of the files in
# hack/guest, so a new Debian point release or a changed script builds a new guest.
#
# Environment:
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

# The root's packages (hack/packages.txt, group guest-root). Debian 12 has no ceph-volume
# package: ceph-osd ships ceph-volume.
mapfile -t root_pkgs < <("$here/../install-deps.sh" --list guest-root)
((${#root_pkgs[@]})) || { log "hack/packages.txt lists no guest-root packages"; exit 1; }
read -r -a extra <<<"${PRISM_GUEST_EXTRA_PACKAGES:-}"

export DEBIAN_FRONTEND=noninteractive
updated=""
apt_update() {
  if [[ -z $updated ]]; then
    log "apt-get update"
    apt-get update -qq >/dev/null
    updated=1
  fi
}
# This host's tools for the build and the boot, depmod included (exits 1 on apt failures).
"$here/../install-deps.sh" guest

# The kernel: whatever linux-image-amd64 depends on now (linux-image-6.1.0-NN-amd64).
kernel_pkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
kpkg=$(kernel_pkg)
if [[ -z $kpkg ]]; then
  apt_update
  kpkg=$(kernel_pkg)
fi
[[ -n $kpkg ]] || { log "apt-cache knows no linux-image-amd64 (is this Debian 12?)"; exit 1; }

# Candidate versions of everything that goes into the guest, from this host's apt lists.
candidates() { apt-cache policy "$@" | awk '/^[^ ]/ {p=$1} /Candidate:/ {print p, $2}'; }
versions=$(candidates "$kpkg" debootstrap "${root_pkgs[@]}" "${extra[@]}")
if grep -q "(none)" <<<"$versions"; then
  apt_update
  versions=$(candidates "$kpkg" debootstrap "${root_pkgs[@]}" "${extra[@]}")
fi
if bad=$(grep "(none)" <<<"$versions"); then
  log "no installable version of: $bad"
  exit 1
fi
scripts=$(cd "$here" && sha256sum build.sh init nvmet-loop.sh)
key=$(printf '%s\n%s\n%s\n' "$versions" "${extra[*]}" "$scripts" | sha256sum | cut -c1-16)
cache_root=${PRISM_GUEST_CACHE:-$HOME/.cache/prism/guest}
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

# Debian's mirrors as this host's apt is set up (never named here).
mirror_of() { apt-cache policy | awk -v s="$1/main" '$3 == s && $4 == "amd64" {print $2; exit}'; }
mirror=$(mirror_of bookworm)
security=$(mirror_of bookworm-security)
[[ -n $mirror ]] || { log "this host's apt has no bookworm/main source"; exit 1; }
log "key $key: kernel package $kpkg, mirror from this host's apt sources"

# 1. The kernel, extracted (not installed).
mkdir -p "$tmp/kernel"
(cd "$tmp" && apt-get download -qq "$kpkg" 2>/dev/null)
dpkg -x "$tmp"/"$kpkg"_*.deb "$tmp/kernel"
krel=$(ls "$tmp/kernel/lib/modules")
kver=$(dpkg-deb -f "$tmp"/"$kpkg"_*.deb Version)
cp "$tmp/kernel/boot/vmlinuz-$krel" "$tmp/vmlinuz"
log "kernel $krel ($kpkg $kver) extracted ($(($(date +%s) - start)) s)"

# 2. The root.
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
  { tail -30 "$tmp/debootstrap.log" >&2; exit 1; }
log "debootstrap done ($(($(date +%s) - start)) s)"
{
  echo "deb $mirror bookworm main"
  echo "deb $mirror bookworm-updates main"
  [[ -z $security ]] || echo "deb $security bookworm-security main"
} >"$root/etc/apt/sources.list"
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
wanted=$(cd "$kmods" && find kernel/drivers/nvme kernel/drivers/md kernel/drivers/block kernel/drivers/virtio \
  kernel/fs/9p kernel/net/9p kernel/fs/netfs kernel/fs/fscache kernel/fs/configfs kernel/fs/xfs \
  -name '*.ko' 2>/dev/null)
closure=$( (echo "$wanted"; for m in $wanted; do
  awk -v m="$m:" '$1 == m { for (i = 2; i <= NF; i++) print $i }' "$kmods/modules.dep"
done) | sort -u)
for m in $closure; do
  install -D -m 644 "$kmods/$m" "$dest/$m"
done
depmod -b "$root" "$krel"
log "$(wc -l <<<"$closure") kernel modules copied"

# 5. Prism's guest pieces.
install -m 755 "$here/init" "$root/init"
install -m 755 "$here/nvmet-loop.sh" "$root/usr/local/sbin/prism-nvmet-loop"
[[ -e $root/dev/console ]] || mknod -m 600 "$root/dev/console" c 5 1
[[ -e $root/dev/null ]] || mknod -m 666 "$root/dev/null" c 1 3
echo prism-guest >"$root/etc/hostname"
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
