#!/bin/bash
# Runs inside the test guest (hack/guest/run.sh --run), as root, in a real kernel with
# device-mapper. Steps, each timed in $out/steps.tsv:
#  1. NVMe-oF/TCP on loopback gives the emulated disks real drive models (prism-nvmet-loop).
#  2. prism-agent inventory -o json; kubectl-prism plan from it and /prism/policy.yaml.
#  3. The agent's partitioner (prism-apply-plan) carries out the plan, twice (the second run
#     must change nothing).
#  4. A mon (cluster "prismguest", cephx, 127.0.0.1) and bluestore_min_alloc_size from the
#     QLC drives' internal write unit, in the `osd` section (docs/decisions/0007).
#  5. Exactly what Rook v1.20.4 runs for each CephCluster entry Prism planned (a partition as
#     metadataDevice): ceph-volume lvm prepare --data <qlc> --block.db <slot partition>.
#  6. Rook's whole-disk metadataDevice path on the second pair: ceph-volume lvm batch.
#  7. Both OSDs activated as Rook's OSD pod does and started; what Ceph's tools say is saved.
#  8. A drive the database lacks, whose evidence comes from a real kernel: an NVMe-oF/TCP
#     namespace on a dm-ebs device with 64 KiB physical blocks, so the kernel's target reports
#     NPWG 64 KiB and no endurance group; the agent's inventory of it is saved.
# Everything the host test asserts on is a tool's own output, saved under $out.
set -euo pipefail
guest_script=rook-path.sh
# $out, step, json and the failure trap (test/guest/lib.sh).
source /prism/lib.sh
cluster=prismguest
node=prism-guest
ceph=(ceph --cluster "$cluster" --connect-timeout 30)
cv=(ceph-volume --cluster "$cluster")

on_failure() {
  mkdir -p "$out/logs"
  cp -r /tmp/ceph-log /var/log/ceph "$out/logs/" 2>/dev/null || true
  tail -40 /tmp/ceph-log/ceph-volume.log 2>/dev/null || true
  for f in /var/log/ceph/*.out; do [[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; }; done
}

{
  uname -r
  ceph --version
  lvm version | head -1
  nvme version
} >"$out/versions.txt"

# 1. Real models.
prism-nvmet-loop --lvm-filter /prism/targets | tee "$out/nvmet.txt"
fabric() { awk -v s="$1" '$1 == s {print $3}' "$out/nvmet.txt"; }
step nvmet

# 2. Inventory and plan.
prism-agent inventory -o json --node-name "$node" >"$out/inventory.json"
prism-agent inventory -o table
kubectl-prism plan --inventory "$out/inventory.json" --policy /prism/policy.yaml -o json >"$out/plan.json"
kubectl-prism plan --inventory "$out/inventory.json" --policy /prism/policy.yaml -o yaml | sed -n '/rookStorageNodes/,$p'
step inventory-plan

# 3. The agent's partitioner, then once more: the second run must find nothing to do.
prism-apply-plan --plan "$out/plan.json" --inventory "$out/inventory.json" --node "$node" --mode Apply >"$out/apply-1.json"
udevadm settle --timeout=60
prism-apply-plan --plan "$out/plan.json" --inventory "$out/inventory.json" --node "$node" --mode Apply >"$out/apply-2.json"
fast_a=$(readlink -f "$(json "$out/plan.json" 'd["nodes"][0]["plan"]["fastDevices"][0]["stablePath"]')")
sfdisk --json "$fast_a" >"$out/sfdisk-fast.json"
for p in /sys/block/"${fast_a#/dev/}"/"${fast_a#/dev/}"p*; do
  echo "$(basename "$p") $(cat "$p/partition") $(cat "$p/start") $(cat "$p/size")"
done >"$out/partitions-sysfs.txt"
ls -l /dev/disk/by-id/ >"$out/by-id.txt"
step partition

# 4. The cluster: one mon.
mkdir -p /etc/ceph /var/lib/ceph/bootstrap-osd /var/lib/ceph/mon /run/ceph /var/log/ceph /tmp/ceph-log
chown ceph:ceph /run/ceph /var/log/ceph
fsid=$(cat /proc/sys/kernel/random/uuid)
cat >/etc/ceph/$cluster.conf <<EOF
[global]
fsid = $fsid
mon initial members = a
mon host = [v2:127.0.0.1:3300]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.1/32
ms bind msgr1 = false
ms bind msgr2 = true
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
osd pool default size = 1
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
[osd]
osd memory target = 1073741824
EOF
ceph-authtool --create-keyring /tmp/mon.keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool --create-keyring /etc/ceph/$cluster.client.admin.keyring --gen-key -n client.admin \
  --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
ceph-authtool --create-keyring /var/lib/ceph/bootstrap-osd/$cluster.keyring --gen-key -n client.bootstrap-osd \
  --cap mon 'profile bootstrap-osd' --cap mgr 'allow r' >/dev/null
ceph-authtool /tmp/mon.keyring --import-keyring /etc/ceph/$cluster.client.admin.keyring >/dev/null
ceph-authtool /tmp/mon.keyring --import-keyring /var/lib/ceph/bootstrap-osd/$cluster.keyring >/dev/null
monmaptool --create --fsid "$fsid" --addv a '[v2:127.0.0.1:3300]' /tmp/monmap >/dev/null
ceph-mon --cluster $cluster -i a --mkfs --monmap /tmp/monmap --keyring /tmp/mon.keyring
ceph-mon --cluster $cluster -i a -f >/var/log/ceph/mon.a.out 2>&1 &
echo $! >/run/ceph/mon.a.pid
for _ in $(seq 120); do "${ceph[@]}" mon stat >/dev/null 2>&1 && break; sleep 1; done
"${ceph[@]}" mon stat
# bluestore_min_alloc_size: the capacity devices' internal write unit, from the inventory.
iu=$(json "$out/inventory.json" 'sorted({x["internalWriteUnitBytes"] for x in d["devices"] if x["tier"]=="Capacity"})')
[[ $iu =~ ^[0-9]+$ ]] || { echo "capacity devices disagree on their write unit or lack one: $iu"; false; }
"${ceph[@]}" config set osd bluestore_min_alloc_size "$iu"
step mon

# Rook's prepare pod edits lvm.conf first (pkg/daemon/ceph/osd/volume.go, UpdateLVMConfig).
cp /etc/lvm/lvm.conf /tmp/lvm.conf.orig
sed -i -e '0,/udev_sync = 1/s//udev_sync = 0/' -e '0,/allow_changes_with_duplicate_pvs = 0/s//allow_changes_with_duplicate_pvs = 1/' \
  -e '0,/udev_rules = 1/s//udev_rules = 0/' -e '0,/use_lvmetad = 1/s//use_lvmetad = 0/' \
  -e '0,/obtain_device_list_from_udev = 1/s//obtain_device_list_from_udev = 0/' /etc/lvm/lvm.conf
diff /tmp/lvm.conf.orig /etc/lvm/lvm.conf >"$out/lvm-conf.diff" || true

osds_now() { "${ceph[@]}" osd ls | sort; }
new_osd() {
  echo "$1" >/tmp/osds.before
  osds_now | comm -13 /tmp/osds.before -
}

# 5. Rook, for each device entry Prism planned: the devices resolve to kernel names (Rook
# matches name and metadataDevice against each disk's udev links and passes /dev/<kernel name>),
# databaseSizeMB becomes --block.db-size in bytes (Rook skips it below 1024 MB), and the node
# config's deviceClass becomes --crush-device-class.
json "$out/plan.json" '[" ".join([x["name"], x["config"]["metadataDevice"], x["config"].get("databaseSizeMB", n["config"].get("databaseSizeMB","0")), x["config"].get("deviceClass", n["config"].get("deviceClass",""))]) for n in d["rookStorageNodes"] for x in n["devices"]]' >"$out/rook-entries.txt"
[[ -s $out/rook-entries.txt ]] || { echo "the plan has no Rook entries"; false; }
# The loops read from fd 3: ceph-volume and the daemons must not eat the list on stdin.
while read -r name md mb class <&3; do
  data=/dev/$(basename "$(readlink -f "$name")")
  db=/dev/$(basename "$(readlink -f "$md")")
  args=(-oL "${cv[@]}" --log-path /tmp/ceph-log lvm prepare --bluestore --data "$data" --block.db "$db")
  ((mb < 1024)) || args+=(--block.db-size "$((mb * 1024 * 1024))")
  [[ -z $class ]] || args+=(--crush-device-class "$class")
  printf '%s\n' stdbuf "${args[@]}" >"$out/prepare.argv"
  before=$(osds_now)
  stdbuf "${args[@]}" 2>&1 | tee "$out/prepare.log"
  new_osd "$before" >"$out/prepare.osd"
  echo "$db" >"$out/prepare.db"
done 3<"$out/rook-entries.txt"
step lvm-prepare

# 6. Rook's whole-disk metadataDevice path on the second pair, with the same DB size and class:
# the report, the JSON report (Rook checks block_db against the metadata device), the run.
read -r _ md mb class <"$out/rook-entries.txt"
qlc_b=/dev/$(fabric bk-qlc-b)
fast_b=/dev/$(fabric bk-fast-b)
batch=(-oL "${cv[@]}" --log-path /tmp/ceph-log lvm batch --prepare --bluestore --yes
  --osds-per-device 1 --block-db-size "$((mb * 1024 * 1024))" "$qlc_b" --db-devices "$fast_b" --crush-device-class "$class")
printf '%s\n' stdbuf "${batch[@]}" >"$out/batch.argv"
stdbuf "${batch[@]}" --report
stdbuf "${batch[@]}" --report --format json >"$out/batch-report.json"
before=$(osds_now)
stdbuf "${batch[@]}" 2>&1 | tee "$out/batch.log"
new_osd "$before" >"$out/batch.osd"
step lvm-batch

# 7. Activate and start every OSD as Rook's OSD pod does.
"${cv[@]}" lvm list --format json >"$out/lvm-list.json"
json "$out/lvm-list.json" '[i+" "+v[0]["tags"]["ceph.osd_fsid"] for i,v in d.items()]' >/tmp/osds
while read -r id osd_fsid <&3; do
  stdbuf -oL "${cv[@]}" lvm activate --no-systemd --bluestore "$id" "$osd_fsid"
  ceph-osd --cluster $cluster -i "$id" -f --setuser ceph --setgroup ceph >"/var/log/ceph/osd.$id.out" 2>&1 &
  echo $! >"/run/ceph/osd.$id.pid"
done 3</tmp/osds
step activate
want=$(wc -l </tmp/osds)
for _ in $(seq 600); do
  "${ceph[@]}" osd dump -f json >"$out/osd-dump.json" 2>/dev/null || true
  up=$(json "$out/osd-dump.json" 'sum(1 for o in d["osds"] if o["up"]==1 and o["in"]==1)' 2>/dev/null || echo 0)
  [[ $up == "$want" ]] && break
  sleep 1
done
json "$out/osd-dump.json" '["osd.%d up=%d in=%d" % (o["osd"], o["up"], o["in"]) for o in d["osds"]]'
step osds-up

# What Ceph and LVM say.
while read -r id _ <&3; do
  dir=/var/lib/ceph/osd/$cluster-$id
  for f in block block.db; do
    printf '%s %s %s\n' "$f" "$(readlink "$dir/$f")" "$(readlink -f "$dir/$f")"
    ceph-bluestore-tool show-label --dev "$dir/$f" >"$out/osd-$id-$f.label.json"
  done >"$out/osd-$id-paths.txt"
  "${ceph[@]}" daemon "osd.$id" perf dump bluefs >"$out/osd-$id-bluefs.json"
done 3</tmp/osds
# Each ceph CLI call costs seconds of emulated Python start-up: one call per fact, all OSDs at once.
"${ceph[@]}" osd metadata -f json >"$out/osd-metadata.json"
"${ceph[@]}" osd tree -f json >"$out/osd-tree.json"
pvs --reportformat json --units b --nosuffix -o pv_name,vg_name,pv_size >"$out/pvs.json"
lvs --reportformat json --units b --nosuffix -o lv_name,vg_name,lv_size,lv_path,devices >"$out/lvs.json"
lsblk -J -b -o NAME,KNAME,TYPE,SIZE,MODEL,SERIAL,PKNAME,PARTLABEL >"$out/lsblk.json"
lsblk -o NAME,TYPE,SIZE,MODEL,PARTLABEL
db=$(cat "$out/prepare.db")
blkid -p -o export "$db" >"$out/blkid-slot.txt" || true
dmsetup ls --tree >"$out/dmsetup.txt" 2>&1 || true
step collect

while read -r id _; do kill "$(cat "/run/ceph/osd.$id.pid")" 2>/dev/null || true; done </tmp/osds
kill "$(cat /run/ceph/mon.a.pid)" 2>/dev/null || true
step stop

# 8. A drive Prism never saw. Linux's NVMe target derives NPWG/NPWA from its backing device's
# physical block size (nvmet_bdev_set_limits); the backing disk is a virtio-blk disk with 4 KiB
# logical and 16 KiB physical blocks (QEMU's NVMe controller reports no physical block size).
# The model is in no database; nvmet reports no endurance group.
unseen_serial=${PRISM_UNSEEN_SERIAL:-bk-unseen}
unseen_model="OEM QLC NVMe-oF 16K NO-ENDGRP"
modprobe virtio_blk
udevadm settle --timeout=60 || true
backing=""
for _ in $(seq 50); do
  for d in /sys/block/vd*; do
    [[ -e $d/serial && $(tr -d ' \n' <"$d/serial") == "$unseen_serial" ]] && backing=$(basename "$d")
  done
  [[ -n $backing ]] && break
  sleep 0.2
done
[[ -n $backing ]] || { echo "rook-path.sh: no virtio disk with serial $unseen_serial" >&2; false; }
echo "$backing: logical $(cat "/sys/block/$backing/queue/logical_block_size") physical $(cat "/sys/block/$backing/queue/physical_block_size")" >"$out/unseen-backing.txt"
nqn=nqn.2024-01.io.prism-storage:guest-unseen
sub=/sys/kernel/config/nvmet/subsystems/$nqn
mkdir "$sub"
echo 1 >"$sub/attr_allow_any_host"
echo -n "$unseen_model" >"$sub/attr_model"
echo -n PRISM-UNSEEN >"$sub/attr_serial"
mkdir "$sub/namespaces/1"
echo -n "/dev/$backing" >"$sub/namespaces/1/device_path"
echo 1 >"$sub/namespaces/1/enable"
ln -s "$sub" /sys/kernel/config/nvmet/ports/1/subsystems/$nqn
nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$nqn" >/dev/null
unseen=""
for _ in $(seq 100); do
  for d in /sys/block/nvme*n*; do
    if [[ -e $d/device/serial && $(tr -d ' \n' <"$d/device/serial") == PRISM-UNSEEN ]]; then unseen=$(basename "$d"); fi
  done
  [[ -n $unseen ]] && break
  sleep 0.2
done
[[ -n $unseen ]] || { echo "rook-path.sh: $nqn connected but no block device with serial PRISM-UNSEEN" >&2; false; }
udevadm settle --timeout=60
echo "$unseen $unseen_model" >"$out/unseen.txt"
nvme id-ns "/dev/$unseen" -o json >"$out/unseen-id-ns.json"
prism-agent inventory -o json --node-name "$node" >"$out/inventory-unseen.json"
prism-agent inventory -o table | grep -E "NAME|$unseen" || true
step unseen
