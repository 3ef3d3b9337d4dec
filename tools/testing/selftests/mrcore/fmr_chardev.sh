#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# FMRs and FMR pools end to end (issue 5): load mrcore, vhca and
# mrcore_test, create vhca0 on a dummy netdev, run ./fmr_tests (kselftest
# harness, TAP; pools of /dev/mrcore_test whose keys the device reads and
# writes through) and turn each result into one of our lines:
#
#   ok N fmr.NAME              ->  ok - fmr: NAME
#   ok N # SKIP WHY            ->  ok - fmr: NAME # SKIP WHY
#   not ok N fmr.NAME          ->  not ok - fmr: NAME # <first failed assertion>
#
# With --bench, the same set-up runs "./fmr_tests --bench" instead: pool
# map + unmap cycles with cache hits and with misses, their rates and the
# miss/hit cost ratio (FMR_BENCH_ARGS, e.g. "-t 1", are passed on); its
# last line is "ok"/"not ok".
#
# Exits 4, after a "not ok" line, when a prerequisite is missing, so a
# missing piece is never silently green; 1 when a test failed.
. ./lib.sh

DEV=vhca0
NETDEV=fmd0
FMR_BENCH_ARGS=${FMR_BENCH_ARGS:-}

missing() {
	t_fail "fmr: prerequisite: $1" "$2"
	rdma link del $DEV 2>/dev/null
	ip link del $NETDEV 2>/dev/null
	rmmod mrcore_test 2>/dev/null
	unload_mrcore 2>/dev/null
	exit 4
}

# tap_to_lines: kselftest TAP on stdin, our lines on stdout; exit status 1
# when a test failed or results are missing.
tap_to_lines() {
	awk '
	function flush_msgs(   i) {
		for (i = 1; i <= nlog; i++)
			print "#   " msgs[i]
	}
	# The first assertion that failed, else the last log line.
	function reason(   i) {
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ /fmr_tests\.c:[0-9]+:/ && msgs[i] ~ /Expected/)
				return msgs[i]
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ /fmr_tests\.c:[0-9]+:/)
				return msgs[i]
		return nlog ? msgs[nlog] : "failed"
	}
	/^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0; next }
	/^# +RUN +/ {
		name = $3; sub(/^[^.]*\./, "", name); nlog = 0; next
	}
	/^# +(OK|FAIL) +/ { next }
	/^# / { msgs[++nlog] = substr($0, 3); next }
	/^ok [0-9]+ # SKIP/ {
		why = $0; sub(/^ok [0-9]+ # SKIP */, "", why)
		print "ok - fmr: " name " # SKIP " why; seen++; next
	}
	/^ok [0-9]+ / { print "ok - fmr: " name; seen++; next }
	/^not ok [0-9]+ / {
		flush_msgs()
		print "not ok - fmr: " name " # " reason(); seen++; failed++; next
	}
	END {
		if (seen != plan || !plan) {
			print "not ok - fmr: fmr_tests reported " seen " of " plan " results"
			failed++
		}
		exit failed ? 1 : 0
	}'
}

bench=0
[ "${1:-}" = --bench ] && bench=1

modprobe ib_core || missing "ib_core" "modprobe ib_core failed"
load_mrcore || missing "mrcore and vhca" "they do not load"
load_mrcore_test || missing "mrcore_test" "neither $MRC_KO/mrcore_test.ko nor modprobe"
[ -c /dev/mrcore_test ] || missing "mrcore_test" "no /dev/mrcore_test"
[ -x ./fmr_tests ] || missing "fmr_tests" "no ./fmr_tests binary in $(pwd)"
dummy_up $NETDEV 192.168.97.1/24 || missing "netdev" "cannot create dummy $NETDEV"
rdma link add $DEV type vhca netdev $NETDEV ||
	missing "$DEV" "rdma link add $DEV type vhca netdev $NETDEV failed"

rc=0
# ib_core's MAD layer holds a PD (and QP1) of its own on the device.
mkeys0=$(mrc_stat $DEV mkeys)
pds0=$(mrc_stat $DEV pds)
if [ $bench = 1 ]; then
	# shellcheck disable=SC2086
	./fmr_tests --bench $FMR_BENCH_ARGS $DEV || rc=1
else
	MRCT_DEVICE=$DEV ./fmr_tests 2>&1 | tap_to_lines || rc=1
fi

# Every context is closed: its pools destroyed, their keys freed.
t_eval "fmr: no FMR key or PD left on $DEV ($mkeys0 keys, $pds0 PDs before)" \
	'[ "$(mrc_stat $DEV mkeys)" = "$mkeys0" ] && [ "$(mrc_stat $DEV pds)" = "$pds0" ]'

t_check "fmr: rdma link del $DEV" rdma link del $DEV
ip link del $NETDEV
t_check "fmr: rmmod mrcore_test" rmmod mrcore_test
t_check "fmr: unload mrcore and vhca" unload_mrcore
exit $rc
