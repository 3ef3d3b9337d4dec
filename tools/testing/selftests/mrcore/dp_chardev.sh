#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The data path against memory regions (ANCHORS.md items 11-16): load
# mrcore, vhca and mrcore_test, create vhca0 on a dummy netdev, run
# ./dp_tests (kselftest harness, TAP; loopback RC pairs of /dev/mrcore_test)
# and turn each result into one of our lines:
#
#   ok N dp.NAME               ->  ok - dp: NAME
#   ok N # SKIP WHY            ->  ok - dp: NAME # SKIP WHY
#   not ok N dp.NAME           ->  not ok - dp: NAME # <first failed assertion>
#
# Then, when rdma_rxe loads, the same cases run on rxe0 for comparison:
# those results are printed as comments ("# dp-rxe: ..."), not counted,
# unless DP_RXE_STRICT=1. Exits 4, after a "not ok" line, when a
# prerequisite of the vhca run is missing; 1 when a vhca case failed.
. ./lib.sh

DEV=vhca0
NETDEV=dpd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:5c01	# ::ffff:192.168.92.1
RXE=rxe0
RXE_NETDEV=dpr0
RXE_GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:5d01	# ::ffff:192.168.93.1

missing() {
	t_fail "dp: prerequisite: $1" "$2"
	rdma link del $DEV 2>/dev/null
	ip link del $NETDEV 2>/dev/null
	rmmod mrcore_test 2>/dev/null
	unload_mrcore 2>/dev/null
	exit 4
}

# tap_to_lines PREFIX SOFT: kselftest TAP on stdin, our lines on stdout.
# SOFT=1 prints every line as a comment and always succeeds; otherwise
# the exit status is 1 when a case failed or results are missing.
tap_to_lines() {
	awk -v pfx="$1" -v soft="$2" '
	function out(s) { print (soft ? "# " : "") s }
	function flush_msgs(   i) {
		for (i = 1; i <= nlog; i++)
			print "#   " msgs[i]
	}
	# The first assertion that failed, else the last log line.
	function reason(   i) {
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ /dp_tests\.c:[0-9]+:/ && msgs[i] ~ /Expected/)
				return msgs[i]
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ /dp_tests\.c:[0-9]+:/)
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
		out("ok - " pfx ": " name " # SKIP " why); seen++; next
	}
	/^ok [0-9]+ / { out("ok - " pfx ": " name); seen++; next }
	/^not ok [0-9]+ / {
		flush_msgs()
		out("not ok - " pfx ": " name " # " reason()); seen++; failed++
		next
	}
	END {
		if (seen != plan || !plan) {
			out("not ok - " pfx ": dp_tests reported " seen " of " plan " results")
			failed++
		}
		exit (failed && !soft) ? 1 : 0
	}'
}

modprobe ib_core || missing "ib_core" "modprobe ib_core failed"
load_mrcore || missing "mrcore and vhca" "they do not load"
load_mrcore_test || missing "mrcore_test" "neither $MRC_KO/mrcore_test.ko nor modprobe"
[ -c /dev/mrcore_test ] || missing "mrcore_test" "no /dev/mrcore_test"
[ -x ./dp_tests ] || missing "dp_tests" "no ./dp_tests binary in $(pwd)"
dummy_up $NETDEV 192.168.92.1/24 || missing "netdev" "cannot create dummy $NETDEV"
rdma link add $DEV type vhca netdev $NETDEV ||
	missing "$DEV" "rdma link add $DEV type vhca netdev $NETDEV failed"
wait_for 10 sh -c "grep -q $GID_V4 /sys/class/infiniband/$DEV/ports/1/gids/*" ||
	missing "$DEV GID" "no IPv4 GID of $NETDEV on $DEV"

rc=0
# ib_core's MAD layer holds a PD (and QP1) of its own on the device.
mkeys0=$(mrc_stat $DEV mkeys)
pds0=$(mrc_stat $DEV pds)
MRCT_DEVICE=$DEV ./dp_tests 2>&1 | tap_to_lines dp 0 || rc=1

# Every context is closed: the keys and PDs are back to what they were.
t_eval "dp: no MR or PD left on $DEV after the tests ($mkeys0 keys, $pds0 PDs before)" \
	'[ "$(mrc_stat $DEV mkeys)" = "$mkeys0" ] && [ "$(mrc_stat $DEV pds)" = "$pds0" ]'

# The comparison run on rxe, when the kernel has it.
if modprobe rdma_rxe 2>/dev/null && dummy_up $RXE_NETDEV 192.168.93.1/24 &&
   rdma link add $RXE type rxe netdev $RXE_NETDEV 2>/dev/null &&
   wait_for 10 sh -c "grep -q $RXE_GID_V4 /sys/class/infiniband/$RXE/ports/1/gids/*"; then
	strict=0
	[ "${DP_RXE_STRICT:-0}" = 1 ] && strict=1
	MRCT_DEVICE=$RXE ./dp_tests 2>&1 |
		tap_to_lines dp-rxe $((1 - strict)) || rc=1
	rdma link del $RXE
else
	echo "# dp-rxe: comparison run skipped: no rdma_rxe or no $RXE on $RXE_NETDEV"
	rdma link del $RXE 2>/dev/null
fi
ip link del $RXE_NETDEV 2>/dev/null

t_check "dp: rdma link del $DEV" rdma link del $DEV
ip link del $NETDEV
t_check "dp: rmmod mrcore_test" rmmod mrcore_test
t_check "dp: unload mrcore and vhca" unload_mrcore
exit $rc
