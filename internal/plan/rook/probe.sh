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

# answer runs one ceph command: its output is the answer whatever the exit status (safe-to-destroy
# may print its JSON and refuse); a failure with nothing but blank lines on stdout (a refused
# mgr command prints a newline) leaves stderr, which says why.
answer() {
	err=$(cephq "$@" --format json 2>&1 >"$out")
	rc=$?
	if [ "$rc" -ne 0 ] && [ -z "$(tr -d '[:space:]' <"$out")" ]; then
		fail "ceph $*: exit $rc: $err"
	fi
	exit "$rc"
}

case $1 in
health) answer health ;;
pg-stat) answer pg stat ;;
devices) answer device ls-by-host "$PRISM_NODE" ;;
safe-to-destroy)
	ids=$(cephq osd ls-tree "$PRISM_CRUSH_HOST" 2>&1) || fail "ceph osd ls-tree $PRISM_CRUSH_HOST: $ids"
	for id in $ids; do
		case $id in
		*[!0-9]*) fail "ceph osd ls-tree $PRISM_CRUSH_HOST: not an OSD id: $id" ;;
		esac
	done
	[ -n "$ids" ] || fail "no OSD under CRUSH host $PRISM_CRUSH_HOST"
	# $ids unquoted: one argument per OSD id, each checked above to be digits only.
	answer osd safe-to-destroy $ids
	;;
*) fail "unknown question $1" ;;
esac
