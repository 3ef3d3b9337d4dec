#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# User MRs end to end through /dev/mrcore_test: load mrcore, vhca and
# mrcore_test, create vhca0 on a dummy netdev, run ./mr_tests (kselftest
# harness, TAP) and turn each of its results into one of our lines:
#
#   ok N mr.NAME               ->  ok - mr: NAME
#   ok N # SKIP WHY            ->  ok - mr: NAME # SKIP WHY
#   not ok N mr.NAME           ->  not ok - mr: NAME # <first failed assertion>
#
# (6.1's harness leaves the name out of a SKIP line, so names come from
# its "RUN" lines.) The log lines of a failed test are printed above it.
# Exits 4, after a "not ok" line, when a prerequisite is missing, so a
# missing piece is never silently green; 1 when a test failed.
. ./lib.sh

DEV=vhca0
NETDEV=mrd0
# Removed by the device removal test while it holds MRs.
SPARE=vhca1
SPARE_NETDEV=mrd1

# missing WHAT WHY: report a missing prerequisite, undo what was set up
# (best effort, so the next script starts clean) and stop.
missing() {
	t_fail "mr: prerequisite: $1" "$2"
	rdma link del $DEV 2>/dev/null
	rdma link del $SPARE 2>/dev/null
	ip link del $NETDEV 2>/dev/null
	ip link del $SPARE_NETDEV 2>/dev/null
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
			if (msgs[i] ~ /^mr_tests\.c:[0-9]+:/)
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
		print "ok - mr: " name " # SKIP " why; seen++; next
	}
	/^ok [0-9]+ / { print "ok - mr: " name; seen++; next }
	/^not ok [0-9]+ / {
		flush_msgs()
		print "not ok - mr: " name " # " reason(); seen++; failed++; next
	}
	END {
		if (seen != plan || !plan) {
			print "not ok - mr: mr_tests reported " seen " of " plan " results"
			failed++
		}
		exit failed ? 1 : 0
	}'
}

modprobe ib_core || missing "ib_core" "modprobe ib_core failed"
load_mrcore || missing "mrcore and vhca" "they do not load"
load_mrcore_test || missing "mrcore_test" "neither $MRC_KO/mrcore_test.ko nor modprobe"
[ -c /dev/mrcore_test ] || missing "mrcore_test" "no /dev/mrcore_test"
[ -x ./mr_tests ] || missing "mr_tests" "no ./mr_tests binary in $(pwd)"
dummy_up $NETDEV 192.168.88.1/24 || missing "netdev" "cannot create dummy $NETDEV"
rdma link add $DEV type vhca netdev $NETDEV ||
	missing "$DEV" "rdma link add $DEV type vhca netdev $NETDEV failed"
dummy_up $SPARE_NETDEV 192.168.89.1/24 ||
	missing "netdev" "cannot create dummy $SPARE_NETDEV"
rdma link add $SPARE type vhca netdev $SPARE_NETDEV ||
	missing "$SPARE" "rdma link add $SPARE type vhca netdev $SPARE_NETDEV failed"

rc=0
MRCT_DEVICE=$DEV MRCT_SPARE_DEVICE=$SPARE ./mr_tests 2>&1 | tap_to_lines || rc=1
t_eval "mr: $SPARE gone after its removal with MRs live" "no_rdma_dev $SPARE"
rdma link del $SPARE 2>/dev/null
ip link del $SPARE_NETDEV

# Every context is closed: only the local DMA key is left, and no PD but
# ib_mad's.
t_eval "mr: no MR or PD left on $DEV after the tests" \
	'[ "$(mrc_stat $DEV mkeys)" = 1 ] && [ "$(mrc_stat $DEV pds)" = 1 ]'

t_check "mr: rdma link del $DEV" rdma link del $DEV
ip link del $NETDEV
t_check "mr: rmmod mrcore_test" rmmod mrcore_test
t_check "mr: unload mrcore and vhca" unload_mrcore
exit $rc
