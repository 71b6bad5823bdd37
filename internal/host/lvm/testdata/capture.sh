#!/usr/bin/env bash
# Captures the fixtures in this directory: real `pvs`, `vgs` and `lvs` JSON reports (the
# fields of lvm.PVFields, VGFields, LVFields) of a DB slot volume in each state Prism passes
# through, on a loop device of its own. Run as root from this directory:
#
#   bash capture.sh
#
# The reports are restricted to the loop's partitions (--devices) so that nothing of the
# host's own LVM is recorded. On a kernel without device-mapper lvcreate cannot activate,
# so it runs with --driverloaded n --activate n --zero n here (Prism's LVCreateArgv activates); lv_attr then
# says inactive. It detaches only its own loop device.
set -euo pipefail
export LVM_SUPPRESS_FD_WARNINGS=1
img=$(mktemp /var/tmp/prism-lvm-capture.XXXXXX)
loop=""
cleanup() {
  if [[ -n $loop ]]; then
    vgremove --force --devices "${loop}p1,${loop}p2" prism-db-49bd38895b20-00 othervg >/dev/null 2>&1 || true
    pvremove --devices "${loop}p1,${loop}p2" "${loop}p1" "${loop}p2" >/dev/null 2>&1 || true
    losetup -d "$loop"
  fi
  rm -f "$img"
}
trap cleanup EXIT
truncate -s 3G "$img"
loop=$(losetup --find --show --partscan "$img")
# Two DB slots as Prism lays them out (1 GiB here), with fixed partition GUIDs.
sgdisk -n1:1M:+1G -c1:prism-db-00 -t1:30CD0809-C2B2-499C-8879-2D6B78529876 -u1:8f3c1e52-6a0b-4c1d-9e2f-0123456789ab \
  -n2:0:+1G -c2:prism-db-01 -t2:30CD0809-C2B2-499C-8879-2D6B78529876 -u2:1b2c3d4e-5f60-4172-8394-a5b6c7d8e9f0 "$loop" >/dev/null
partx --update "$loop" || true
devs="${loop}p1,${loop}p2"
pvf=pv_name,pv_uuid,pv_major,pv_minor,dev_size,pv_size,vg_name,vg_uuid,pv_tags,pv_missing
vgf=vg_name,vg_uuid,pv_count,lv_count,vg_size,vg_free,vg_extent_size,vg_missing_pv_count,vg_tags
lvf=lv_name,lv_uuid,vg_name,lv_path,lv_size,lv_attr,lv_tags
report() {
  pvs --reportformat json --units b --nosuffix -o "$pvf" --devices "$devs" >"$1-pvs.json"
  vgs --reportformat json --units b --nosuffix -o "$vgf" --devices "$devs" >"$1-vgs.json"
  lvs --reportformat json --units b --nosuffix -o "$lvf" --devices "$devs" >"$1-lvs.json"
}
tags=(--addtag prism.storage.io/db-slot --addtag prism.storage.io/partuuid=8f3c1e52-6a0b-4c1d-9e2f-0123456789ab)
report empty
pvcreate --devices "$devs" "${loop}p1" >/dev/null
report pv-only
vgcreate --devices "$devs" "${tags[@]}" prism-db-49bd38895b20-00 "${loop}p1" >/dev/null
report pv-vg
lvcreate --devices "$devs" --driverloaded n --activate n --zero n --name prism-db-00 --extents 100%FREE "${tags[@]}" prism-db-49bd38895b20-00 >/dev/null
report ready
vgcreate --devices "$devs" othervg "${loop}p2" >/dev/null
lvcreate --devices "$devs" --driverloaded n --activate n --zero n --name data --size 100M --addtag owner=someone othervg >/dev/null
report foreign
echo "device: $loop (major:minor $(lsblk -dno MAJ:MIN "${loop}p1") and $(lsblk -dno MAJ:MIN "${loop}p2"))"
