# Prism's Ceph probe (probe_pod.go): asks Ceph one question as client.prism-probe and leaves
# Ceph's JSON in $PRISM_TERMINATION_LOG, or why it could not. $1 names the question.
set -fu
out=$PRISM_TERMINATION_LOG
fail() {
	printf '%s' "$*" >"$out"
	exit 1
}

# Rook's "a=10.0.0.1:6789,b=..." as mon_host, the way Rook's own config does it: port 3300 is
# msgr2 only, any other port is the msgr1 port beside msgr2 on 3300.
mon_host=
IFS=,
for ep in $PRISM_MON_ENDPOINTS; do
	addr=${ep#*=}
	ip=${addr%:*}
	port=${addr##*:}
	case $port in
	3300) mon_host="$mon_host${mon_host:+,}[v2:$ip:3300]" ;;
	*) mon_host="$mon_host${mon_host:+,}[v2:$ip:3300,v1:$ip:$port]" ;;
	esac
done
unset IFS
[ -n "$mon_host" ] || fail "no mon endpoints in ConfigMap rook-ceph-mon-endpoints"

cephq() {
	ceph --conf /dev/null --mon-host "$mon_host" --id prism-probe --keyfile "$PRISM_KEYFILE" --connect-timeout 20 "$@"
}

# ask runs one ceph command: its output is the answer whatever the exit status (safe-to-destroy
# may print its JSON and refuse); a failure with nothing but blank lines on stdout (a refused
# mgr command prints a newline) leaves stderr, which says why. answer asks and ends.
ask() {
	err=$(cephq "$@" --format json 2>&1 >"$out")
	rc=$?
	if [ "$rc" -ne 0 ] && [ -z "$(tr -d '[:space:]' <"$out")" ]; then
		fail "ceph $*: exit $rc: $err"
	fi
	return "$rc"
}
answer() {
	ask "$@"
	exit "$?"
}

# The answer filters: each is a Python function keep(doc) from Ceph's parsed JSON to the text
# the answer keeps; keep_driver reads file $1, and writes it only when keep returned. Anything
# unexpected fails with Python's error, never a partial answer.
keep_driver='
try:
    with open(sys.argv[1]) as f:
        text = keep(json.load(f))
    with open(sys.argv[1], "w") as f:
        f.write(text)
except Exception as e:
    sys.exit("%s: %s" % (type(e).__name__, e))
'

# keep_asked keeps the elements of `ceph device ls-by-host` that Ceph locates (a location's
# dev or path) at one of the names in $PRISM_DEVICES, each element as Ceph printed it: a dense
# node's whole list is longer than the kubelet keeps (decision 0057).
keep_asked='
def keep(devices):
    names = json.loads(os.environ["PRISM_DEVICES"])
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ValueError("PRISM_DEVICES is not a list of device names")
    if not isinstance(devices, list):
        raise ValueError("not a list")
    kept = [d for d in devices if any(l.get("dev") in names or l.get("path") in names for l in d["location"])]
    return json.dumps(kept, separators=(",", ":"))
'

# keep_checks keeps of `ceph health` what the gate reads: the status and, for each check, its
# severity, whether it is muted and its summary's message; `mutes`, counts and details go
# (decision 0058). About 18 checks in Ceph's own shape filled the kubelet's share; if the
# summaries alone make the answer longer than 2048 bytes they go too, so that about 39 checks
# (62 bytes each) still fit the 2457 bytes kept of each of the five answers.
keep_checks='
def keep(health):
    def reduced(summaries):
        checks = {}
        for code, c in health["checks"].items():
            kept = {"severity": c["severity"], "muted": c.get("muted") is True}
            message = (c.get("summary") or {}).get("message")
            if summaries and isinstance(message, str):
                kept["summary"] = {"message": message}
            checks[code] = kept
        return json.dumps({"status": health["status"], "checks": checks}, separators=(",", ":"))
    text = reduced(True)
    return text if len(text) <= 2048 else reduced(False)
'

# keep_destroyed keeps of `ceph osd tree-from <host> destroyed` its OSDs (CRUSH ids from 0;
# buckets are negative), each with its id and status: the host bucket and each OSD's weights,
# class and name go, so that 60 destroyed OSDs fit (decision 0058).
keep_destroyed='
def keep(tree):
    kept = [{"id": n["id"], "status": n["status"]} for n in tree["nodes"] if n["id"] >= 0]
    return json.dumps({"nodes": kept}, separators=(",", ":"))
'

# keep_none_destroyed answers, for a CRUSH host Ceph does not have, from `ceph osd tree
# destroyed` (the whole cluster): no OSD of the host can be destroyed when no OSD of the cluster
# is, in its CRUSH tree or stray; otherwise it fails, naming them (decision 0061).
keep_none_destroyed='
def keep(tree):
    ids = [n["id"] for n in tree["nodes"] + tree.get("stray", []) if n["id"] >= 0]
    if ids:
        raise ValueError("the cluster has OSDs destroyed: %s" % ids)
    return json.dumps({"nodes": []}, separators=(",", ":"))
'

# keep runs filter $1 on the answer in $out; on failure the answer is $2's reason.
keep() {
	err=$(python3 -c "import json, os, sys
$1
$keep_driver" "$out" 2>&1) || fail "$2: $err"
}

case $1 in
health)
	ask health
	rc=$?
	keep "$keep_checks" "ceph health: keeping the status and checks"
	exit "$rc"
	;;
pg-stat) answer pg stat ;;
devices)
	ask device ls-by-host "$PRISM_NODE"
	rc=$?
	keep "$keep_asked" "ceph device ls-by-host $PRISM_NODE: keeping the drives asked about"
	exit "$rc"
	;;
destroyed)
	err=$(cephq osd tree-from "$PRISM_CRUSH_HOST" destroyed --format json 2>&1 >"$out")
	rc=$?
	if [ "$rc" -ne 0 ] && [ -z "$(tr -d '[:space:]' <"$out")" ]; then
		# No such bucket (Ceph 16: "Error ENOENT: bucket '<host>' does not exist", exit 2): a
		# node none of whose OSDs has started yet. None is destroyed under it if none is in the
		# cluster; else, or if that cannot be asked, tree-from's failure stands (decision 0061).
		why="ceph osd tree-from $PRISM_CRUSH_HOST destroyed: exit $rc: $err"
		cephq osd tree destroyed --format json >"$out" 2>/dev/null || fail "$why"
		keep "$keep_none_destroyed" "$why; ceph osd tree destroyed"
		exit 0
	fi
	keep "$keep_destroyed" "ceph osd tree-from $PRISM_CRUSH_HOST destroyed: keeping the OSDs"
	exit "$rc"
	;;
safe-to-destroy)
	# A missing bucket fails here (Ceph 20.2.4: "Error ENOENT: ... does not exist", exit 2).
	ids=$(cephq osd ls-tree "$PRISM_CRUSH_HOST" 2>&1) || fail "ceph osd ls-tree $PRISM_CRUSH_HOST: $ids"
	for id in $ids; do
		case $id in
		*[!0-9]*) fail "ceph osd ls-tree $PRISM_CRUSH_HOST: not an OSD id: $id" ;;
		esac
	done
	# The bucket exists and holds no OSD (every one purged): nothing to ask safe-to-destroy
	# about; the answer is the empty list of the host's OSD ids (decision 0058).
	if [ -z "$ids" ]; then
		printf '[]' >"$out"
		exit 0
	fi
	# $ids unquoted: one argument per OSD id, each checked above to be digits only.
	answer osd safe-to-destroy $ids
	;;
*) fail "unknown question $1" ;;
esac
