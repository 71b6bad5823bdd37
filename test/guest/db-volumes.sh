#!/bin/bash
# Runs inside the test guest (hack/guest/run.sh --run), as root, in a real kernel with
# device-mapper: the agent's DB slot volumes (decision 0036) made by the partitioner's volume
# phase with LVM run as the agent runs it (nsenter into PID 1's mount and IPC namespaces; in the
# guest PID 1 is hack/guest/init, in the same namespaces as this script). Steps, each timed in
# $out/steps.tsv:
#  1. NVMe-oF/TCP on loopback gives the emulated disks real drive models (prism-nvmet-loop).
#  2. prism-agent inventory -o json; kubectl-prism plan from it and /prism/policy.yaml.
#  3. DryRun with --db-volumes: the partitions Pending, nothing written.
#  4. Apply with --db-volumes --step-limit 1, again and again, as an agent killed after every
#     step would, until every partition and every DB slot's volume is Ready; LVM's reports after
#     each run. Once the partitions are Ready and a volume is not, a DryRun in between.
#  5. One more Apply: nothing to do.
#  6. lvchange -an of one of Prism's LVs, then Apply: the partitioner activates it again.
#  7. What the kernel and the tools say: dmsetup table, each LV's dm node, sizes, lsblk.
#  8. That LV removed, and lvcreate killed at each of its writes in turn: the next pass ends Ready.
# Everything the host test asserts on is a tool's own output, saved under $out; every
# prism-apply-plan run keeps its exit status in runs.tsv and its commands (--record) in
# <run>.calls.jsonl.
set -euo pipefail
guest_script=db-volumes.sh
# $out, step, json and the failure trap (test/guest/lib.sh).
source /prism/lib.sh
node=prism-guest

on_failure() {
  local run
  tail -30 "$out/runs.tsv" 2>/dev/null || true
  run=$(tail -1 "$out/runs.tsv" 2>/dev/null | cut -f1)
  [[ -z $run ]] || cat "$out/$run.json" "$out/$run.stderr" 2>/dev/null || true
  lsblk -o NAME,TYPE,SIZE,PARTLABEL 2>/dev/null || true
  lvs -a -o +lv_tags 2>/dev/null || true
}

# lvm_report NAME: what LVM sees now, as NAME.pvs.json, NAME.vgs.json, NAME.lvs.json.
lvm_report() {
  local r=(--reportformat json --units b --nosuffix)
  pvs "${r[@]}" -o pv_name,pv_uuid,pv_major,pv_minor,dev_size,pv_size,pe_start,vg_name,pv_tags >"$out/$1.pvs.json"
  vgs "${r[@]}" -o vg_name,vg_uuid,vg_attr,pv_count,lv_count,vg_size,vg_free,vg_extent_size,vg_extent_count,vg_free_count,vg_tags >"$out/$1.vgs.json"
  lvs "${r[@]}" -o lv_name,lv_uuid,vg_name,lv_path,lv_size,lv_attr,lv_active,lv_tags,lv_kernel_major,lv_kernel_minor,devices >"$out/$1.lvs.json"
}

# apply NAME MODE ARGS...: one prism-apply-plan run, its output in NAME.json, its commands in
# NAME.calls.jsonl, its exit status in runs.tsv; then udev settles (the time between two
# passes of the agent) and LVM's reports are saved as NAME.*.json. Returns the exit status.
apply() {
  local name=$1 mode=$2 rc=0
  shift 2
  prism-apply-plan --plan "$out/plan.json" --inventory "$out/inventory.json" --node "$node" --mode "$mode" \
    --db-volumes --state-dir /var/lib/prism --record "$out/$name.calls.jsonl" "$@" >"$out/$name.json" 2>"$out/$name.stderr" || rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$mode $*" >>"$out/runs.tsv"
  touch "$out/$name.calls.jsonl"
  udevadm settle --timeout=60
  lvm_report "$name"
  return "$rc"
}

# device_state NAME: what is on the fast drive: lsblk, blkid's probe of the whole drive (exit
# status 2: nothing found) and whether its first and last MiB are zeros.
device_state() {
  local size mib rc=0
  lsblk --json -b -o NAME,KNAME,MAJ:MIN,TYPE,SIZE,PTTYPE,FSTYPE,PARTUUID "$fast" >"$out/$1.lsblk.json"
  blkid -p -o export "$fast" >"$out/$1.blkid.txt" || rc=$?
  size=$(blockdev --getsize64 "$fast")
  mib=$((size / 1048576))
  {
    echo "blkid-exit $rc"
    if cmp -s -n 1048576 "$fast" /dev/zero; then echo "first-mib zero"; else echo "first-mib nonzero"; fi
    if dd if="$fast" bs=1M skip=$((mib - 1)) count=1 status=none | cmp -s -n 1048576 - /dev/zero; then
      echo "last-mib zero"
    else
      echo "last-mib nonzero"
    fi
  } >"$out/$1.device.txt"
}

modprobe dm_mod
{
  uname -r
  lvm version
  dmsetup version
  nsenter --version
  echo "pid1 $(tr '\0' ' ' </proc/1/cmdline)"
  echo "mnt self $(readlink /proc/self/ns/mnt) pid1 $(readlink /proc/1/ns/mnt)"
  echo "ipc self $(readlink /proc/self/ns/ipc) pid1 $(readlink /proc/1/ns/ipc)"
} >"$out/versions.txt"

# 1. Real models (and LVM filtered to the NVMe-oF drives: each backing disk is the same data).
prism-nvmet-loop --lvm-filter /prism/targets | tee "$out/nvmet.txt"
step nvmet

# 2. Inventory and plan.
prism-agent inventory -o json --node-name "$node" >"$out/inventory.json"
prism-agent inventory -o table
kubectl-prism plan --inventory "$out/inventory.json" --policy /prism/policy.yaml -o json >"$out/plan.json"
fast=$(readlink -f "$(json "$out/plan.json" 'd["nodes"][0]["plan"]["fastDevices"][0]["stablePath"]')")
echo "$fast" >"$out/fast.txt"
lvm_report initial
step inventory-plan

# 3. DryRun: every partition Pending (exit status 1), nothing on the drive.
apply dryrun DryRun || true
device_state dryrun
step dryrun

# 4. Step by step: each run makes at most one change, as an agent killed after each would.
k=0
dry_between=""
while :; do
  k=$((k + 1))
  rc=0
  apply "step-$k" Apply --step-limit 1 || rc=$?
  ((rc != 0)) || break
  # Nothing Pending left and still not done: a partition or volume Failed or Refused.
  pending=$(json "$out/step-$k.json" 'any(p["state"] == "Pending" or (p.get("volume") or {}).get("state") == "Pending" for p in d["partitions"])')
  [[ $pending == True ]] || { cat "$out/step-$k.json" "$out/step-$k.stderr"; echo "step-$k: not done and nothing pending"; false; }
  ((k < 30)) || { echo "not done after $k step-limited runs"; false; }
  # Once the partitions are Ready and a volume is not: DryRun must report it Pending, change nothing.
  if [[ -z $dry_between && $(json "$out/step-$k.json" 'all(p["state"] == "Ready" for p in d["partitions"])') == True ]]; then
    dry_between=$k
    apply "dryrun-after-step-$k" DryRun || true
  fi
done
echo "$k" >"$out/step-runs.txt"
sfdisk --json "$fast" >"$out/sfdisk-fast.json"
step step-limited

# 5. Once more: nothing to do.
apply again Apply
step again

# 6. Deactivate one of Prism's LVs as a host that does not autoactivate would leave it; the next
# pass activates it (ActivateLV, lvchange --activate y).
json "$out/again.lvs.json" '[l["vg_name"] + "/" + l["lv_name"] for l in d["report"][0]["lv"] if "prism.storage.io/db-slot" in l["lv_tags"].split(",")][:1]' >"$out/deactivated.txt"
lv=$(cat "$out/deactivated.txt")
[[ -n $lv ]] || { echo "no LV with Prism's tag"; false; }
lvchange -an "$lv"
udevadm settle --timeout=60
lvm_report deactivated
apply reactivate Apply
step reactivate

# 7. What device-mapper and the block layer say.
dmsetup table >"$out/dmsetup-table.txt"
dmsetup info -c --noheadings --separator ' ' -o name,major,minor,open >"$out/dmsetup-info.txt"
json "$out/reactivate.lvs.json" '[l["lv_path"] for l in d["report"][0]["lv"] if "prism.storage.io/db-slot" in l["lv_tags"].split(",")]' >/tmp/lv-paths
# One line per LV: path, node, dm name and device number (sysfs), size, the devices under it.
while read -r p <&3; do
  dm=$(readlink -f "$p")
  b=/sys/block/$(basename "$dm")
  echo "$p $dm $(cat "$b/dm/name") $(cat "$b/dev") $(blockdev --getsize64 "$dm") $(ls "$b/slaves" | tr '\n' ',' | sed 's/,$//')"
done 3</tmp/lv-paths >"$out/lv-nodes.txt"
# One line per partition: name, number, device number, size (blockdev), holders.
for p in /sys/block/"${fast#/dev/}"/"${fast#/dev/}"p*; do
  n=$(basename "$p")
  echo "$n $(cat "$p/partition") $(cat "$p/dev") $(blockdev --getsize64 "/dev/$n") $(ls "$p/holders" | tr '\n' ',' | sed 's/,$//')"
done >"$out/partition-nodes.txt"
lsblk --json -b -o NAME,KNAME,MAJ:MIN,TYPE,SIZE,PARTUUID,PARTLABEL,PARTTYPE "$fast" >"$out/lsblk-fast.json"
lsblk -o NAME,TYPE,SIZE,PARTLABEL "$fast"
cat "$out/lv-nodes.txt"
step collect

# 8. lvcreate killed at every write (decision 0039). The LV deactivated in step 6 is removed (it
# holds nothing), which leaves its slot as a crash after vgcreate would; a pass with lvcreate
# traced (a wrapper first on PATH, which nsenter keeps) finds which of its io_submit calls write.
# Then, for each: the LV removed again, a pass whose lvcreate is killed on entry to that call,
# and a pass that must end with every volume Ready. Each kill's index is in lvcreate-kills.txt.
wrap=/tmp/prism-lvcreate-wrap
mkdir -p "$wrap"
lvcreate_real=$(command -v lvcreate)
wrap_lvcreate() { # wrap_lvcreate STRACE-ARGS...: lvcreate under strace
  printf '#!/bin/sh\nexec strace -qq %s -e trace=io_submit %s "$@"\n' "$*" "$lvcreate_real" >"$wrap/lvcreate"
  chmod +x "$wrap/lvcreate"
}
lvremove -y "$lv"
udevadm settle --timeout=60
wrap_lvcreate -o "$out/lvcreate.trace"
PATH=$wrap:$PATH apply lvcreate-traced Apply
grep '^io_submit(' "$out/lvcreate.trace" | grep -n IOCB_CMD_PWRITE | cut -d: -f1 >"$out/lvcreate-writes.txt"
[[ -s $out/lvcreate-writes.txt ]] || { echo "lvcreate wrote nothing in the trace"; false; }
: >"$out/lvcreate-kills.txt"
while read -r w <&3; do
  lvremove -y "$lv"
  udevadm settle --timeout=60
  wrap_lvcreate -o /dev/null -e "inject=io_submit:signal=KILL:when=$w"
  PATH=$wrap:$PATH apply "lvcreate-kill-$w" Apply || true
  apply "lvcreate-resume-$w" Apply || true
  echo "$w" >>"$out/lvcreate-kills.txt"
done 3<"$out/lvcreate-writes.txt"
rm -rf "$wrap"
step lvcreate-kills
