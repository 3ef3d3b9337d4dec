#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Counters of remote writes into MRs (issue 5 item 5, the fi_mr_bind()
# model): load mrcore, vhca and mrcore_test, create vhca0 on a dummy
# netdev, run ./counter_tests (kselftest harness, TAP; counters of
# /dev/mrcore_test bound to MRs written over its loopback RC pairs) and
# turn each result into one of our lines:
#
#   ok N cnt.NAME              ->  ok - counter: NAME
#   ok N # SKIP WHY            ->  ok - counter: NAME # SKIP WHY
#   not ok N cnt.NAME          ->  not ok - counter: NAME # <first failed assertion>
#
# vhca only: the counters live in vhca's device memory. Then the keys,
# PDs and windows of the device must be back to what they were. Exits 4,
# after a "not ok" line, when a prerequisite is missing; 1 when a test
# failed.
. ./lib.sh

DEV=vhca0
NETDEV=cntd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6201	# ::ffff:192.168.98.1

missing() {
	t_fail "counter: prerequisite: $1" "$2"
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
			if (msgs[i] ~ /counter_tests\.c:[0-9]+:/ && msgs[i] ~ /Expected/)
				return msgs[i]
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ /counter_tests\.c:[0-9]+:/)
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
		print "ok - counter: " name " # SKIP " why; seen++; next
	}
	/^ok [0-9]+ / { print "ok - counter: " name; seen++; next }
	/^not ok [0-9]+ / {
		flush_msgs()
		print "not ok - counter: " name " # " reason(); seen++; failed++; next
	}
	END {
		if (seen != plan || !plan) {
			print "not ok - counter: counter_tests reported " seen " of " plan " results"
			failed++
		}
		exit failed ? 1 : 0
	}'
}

modprobe ib_core || missing "ib_core" "modprobe ib_core failed"
load_mrcore || missing "mrcore and vhca" "they do not load"
load_mrcore_test || missing "mrcore_test" "neither $MRC_KO/mrcore_test.ko nor modprobe"
[ -c /dev/mrcore_test ] || missing "mrcore_test" "no /dev/mrcore_test"
[ -x ./counter_tests ] || missing "counter_tests" "no ./counter_tests binary in $(pwd)"
dummy_up $NETDEV 192.168.98.1/24 || missing "netdev" "cannot create dummy $NETDEV"
rdma link add $DEV type vhca netdev $NETDEV ||
	missing "$DEV" "rdma link add $DEV type vhca netdev $NETDEV failed"
wait_for 10 sh -c "grep -q $GID_V4 /sys/class/infiniband/$DEV/ports/1/gids/*" ||
	missing "$DEV GID" "no IPv4 GID of $NETDEV on $DEV"

rc=0
# ib_core's MAD layer holds a PD (and QP1) of its own on the device.
mkeys0=$(mrc_stat $DEV mkeys)
pds0=$(mrc_stat $DEV pds)
mws0=$(mrc_stat $DEV mws)
MRCT_DEVICE=$DEV ./counter_tests 2>&1 | tap_to_lines || rc=1

# Every context is closed: counters, windows, indirect keys, MRs and PDs
# are gone.
t_eval "counter: no key, window or PD left on $DEV ($mkeys0 keys, $mws0 windows, $pds0 PDs before)" \
	'[ "$(mrc_stat $DEV mkeys)" = "$mkeys0" ] && [ "$(mrc_stat $DEV mws)" = "$mws0" ] &&
	 [ "$(mrc_stat $DEV pds)" = "$pds0" ]'

t_check "counter: rdma link del $DEV" rdma link del $DEV
ip link del $NETDEV
t_check "counter: rmmod mrcore_test" rmmod mrcore_test
t_check "counter: unload mrcore and vhca" unload_mrcore
exit $rc
