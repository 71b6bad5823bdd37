#!/usr/bin/env bash
# Captures the torn-state fixtures (issue 29, item 5): LVM's reports and the first MiB of a DB
# slot partition after Prism's pvcreate or vgcreate was killed by SIGKILL on entry to one of its
# writes (strace's fault injection; LVM writes with io_submit), and the report of a foreign PV
# whose VG lost the only disk with its metadata. Run as root from this directory:
#
#   bash capture-torn.sh
#
# The loop device is laid out as capture.sh's. pvcreate writes at its 9th to 12th io_submit and
# vgcreate at its 10th to 14th when LVM sees only the loop's partitions (--devices), so
# `when=12` kills pvcreate before its label and `when=14` kills vgcreate after it marked the
# label used and before its last metadata area header. It detaches only its own loop devices.
set -euo pipefail
export LVM_SUPPRESS_FD_WARNINGS=1
# LVM's metadata backups of these throwaway VGs go to a directory of their own, not /etc/lvm.
conf=$(mktemp -d /var/tmp/prism-lvm-torn-conf.XXXXXX)
touch "$conf/lvm.conf"
export LVM_SYSTEM_DIR=$conf
img=$(mktemp /var/tmp/prism-lvm-torn.XXXXXX)
img2=$(mktemp /var/tmp/prism-lvm-torn.XXXXXX)
loop="" meta=""
cleanup() {
  if [[ -n $loop ]]; then
    pvremove -ff -y --devices "${loop}p1,${loop}p2" "${loop}p1" "${loop}p2" >/dev/null 2>&1 || true
    losetup -d "$loop"
  fi
  [[ -z $meta ]] || losetup -d "$meta" 2>/dev/null || true
  rm -f "$img" "$img2"
  rm -rf "$conf"
}
trap cleanup EXIT
truncate -s 3G "$img"
truncate -s 200M "$img2"
loop=$(losetup --find --show --partscan "$img")
sgdisk -n1:1M:+1G -c1:prism-db-00 -t1:30CD0809-C2B2-499C-8879-2D6B78529876 -u1:8f3c1e52-6a0b-4c1d-9e2f-0123456789ab \
  -n2:0:+1G -c2:prism-db-01 -t2:30CD0809-C2B2-499C-8879-2D6B78529876 -u2:1b2c3d4e-5f60-4172-8394-a5b6c7d8e9f0 "$loop" >/dev/null
partx --update "$loop" || true
devs="${loop}p1,${loop}p2"
pvf=pv_name,pv_uuid,pv_major,pv_minor,dev_size,pv_size,vg_name,vg_uuid,pv_tags,pv_missing
vgf=vg_name,vg_uuid,pv_count,lv_count,vg_size,vg_free,vg_extent_size,vg_missing_pv_count,vg_tags
lvf=lv_name,lv_uuid,vg_name,lv_path,lv_size,lv_attr,lv_tags
uuid=8f3c1e-526a-0b4c-1d9e-2f01-2345-6789ab
tags=(--addtag prism.storage.io/db-slot --addtag prism.storage.io/partuuid=8f3c1e52-6a0b-4c1d-9e2f-0123456789ab)
killed() { strace -qq -o /dev/null -e trace=io_submit -e "inject=io_submit:signal=KILL:when=$1" "${@:2}" 2>/dev/null || true; }
head_of() { dd if="${loop}p1" bs=1M count=1 status=none | gzip -9n >"$1-head.bin.gz"; }

# pvcreate killed before its label: a metadata area header and nothing else.
killed 12 pvcreate --devices "$devs" --uuid "$uuid" --norestorefile "${loop}p1"
head_of torn-pv
# vgcreate killed before its last write: the label marked used, the VG's metadata not found.
pvcreate --devices "$devs" --uuid "$uuid" --norestorefile "${loop}p1" >/dev/null
killed 14 vgcreate --devices "$devs" "${tags[@]}" prism-db-49bd38895b20-00 "${loop}p1"
head_of torn-vg
# A foreign PV without metadata of its own in a VG whose metadata disk is gone.
meta=$(losetup --find --show "$img2")
pvcreate --devices "$devs,$meta" --metadatacopies 0 "${loop}p2" >/dev/null
pvcreate --devices "$devs,$meta" "$meta" >/dev/null
vgcreate --devices "$devs,$meta" othervg "$meta" "${loop}p2" >/dev/null
losetup -d "$meta"
meta=""
pvs --reportformat json --units b --nosuffix -o "$pvf" --devices "$devs" >unknown-pvs.json 2>/dev/null
vgs --reportformat json --units b --nosuffix -o "$vgf" --devices "$devs" >unknown-vgs.json 2>/dev/null
lvs --reportformat json --units b --nosuffix -o "$lvf" --devices "$devs" >unknown-lvs.json 2>/dev/null
# The PV and VG as complete: their heads.
pvremove -ff -y --devices "$devs" "${loop}p1" >/dev/null 2>&1
dd if=/dev/zero of="${loop}p1" bs=1M count=1 status=none
pvcreate --devices "$devs" --uuid "$uuid" --norestorefile "${loop}p1" >/dev/null
head_of pv
vgcreate --devices "$devs" "${tags[@]}" prism-db-49bd38895b20-00 "${loop}p1" >/dev/null
head_of vg
lvcreate --devices "$devs" --driverloaded n --activate n --zero n --name prism-db-00 --extents 100%FREE "${tags[@]}" prism-db-49bd38895b20-00 >/dev/null
head_of lv
