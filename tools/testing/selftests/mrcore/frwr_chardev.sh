#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fast registration (ANCHORS.md items 23, 27 and the FRWR part of 24):
# load mrcore, vhca and mrcore_test, create vhca0 on a dummy netdev, run
# ./frwr_tests (kselftest harness, TAP; FRWR MRs of /dev/mrcore_test
# driven over its loopback RC pairs) and turn each result into one of our
# lines:
#
#   ok N frwr.NAME             ->  ok - frwr: NAME
#   ok N # SKIP WHY            ->  ok - frwr: NAME # SKIP WHY
#   not ok N frwr.NAME         ->  not ok - frwr: NAME # <first failed assertion>
#
# A case that passed on a device other than vhca but saw a different error
# status or QP state than IBTA and vhca ("differs:" in its log) prints that
# as a comment under its line. Then, when rdma_rxe loads, the same cases
# run on rxe0 for comparison: those results are comments ("# frwr-rxe:
# ..."), not counted, unless FRWR_RXE_STRICT=1. FRWR_CYCLES sets the item
# 27 cycle count of both runs (default 10000). Exits 4, after a "not ok"
# line, when a prerequisite of the vhca run is missing; 1 when a vhca case
# failed.
. ./lib.sh

DEV=vhca0
NETDEV=frd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:5e01	# ::ffff:192.168.94.1
RXE=rxe0
RXE_NETDEV=frr0
RXE_GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:5f01	# ::ffff:192.168.95.1

missing() {
	t_fail "frwr: prerequisite: $1" "$2"
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
	function flush_differs(   i, s) {
		for (i = 1; i <= nlog; i++) {
			if (msgs[i] !~ /differs: /)
				continue
			s = msgs[i]; sub(/^.*differs: /, "", s)
			print "#   " pfx " differs: " s
		}
	}
	# The first assertion that failed, else the last log line.
	function reason(   i) {
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ /frwr_tests\.c:[0-9]+:/ && msgs[i] ~ /Expected/)
				return msgs[i]
		for (i = 1; i <= nlog; i++)
			if (msgs[i] ~ /frwr_tests\.c:[0-9]+:/)
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
	/^ok [0-9]+ / {
		out("ok - " pfx ": " name); flush_differs(); seen++; next
	}
	/^not ok [0-9]+ / {
		flush_msgs()
		out("not ok - " pfx ": " name " # " reason()); seen++; failed++
		next
	}
	END {
		if (seen != plan || !plan) {
			out("not ok - " pfx ": frwr_tests reported " seen " of " plan " results")
			failed++
		}
		exit (failed && !soft) ? 1 : 0
	}'
}

modprobe ib_core || missing "ib_core" "modprobe ib_core failed"
load_mrcore || missing "mrcore and vhca" "they do not load"
load_mrcore_test || missing "mrcore_test" "neither $MRC_KO/mrcore_test.ko nor modprobe"
[ -c /dev/mrcore_test ] || missing "mrcore_test" "no /dev/mrcore_test"
[ -x ./frwr_tests ] || missing "frwr_tests" "no ./frwr_tests binary in $(pwd)"
dummy_up $NETDEV 192.168.94.1/24 || missing "netdev" "cannot create dummy $NETDEV"
rdma link add $DEV type vhca netdev $NETDEV ||
	missing "$DEV" "rdma link add $DEV type vhca netdev $NETDEV failed"
wait_for 10 sh -c "grep -q $GID_V4 /sys/class/infiniband/$DEV/ports/1/gids/*" ||
	missing "$DEV GID" "no IPv4 GID of $NETDEV on $DEV"

rc=0
# ib_core's MAD layer holds a PD (and QP1) of its own on the device.
mkeys0=$(mrc_stat $DEV mkeys)
pds0=$(mrc_stat $DEV pds)
MRCT_DEVICE=$DEV ./frwr_tests 2>&1 | tap_to_lines frwr 0 || rc=1

# Every context is closed: the keys and PDs are back to what they were.
t_eval "frwr: no MR or PD left on $DEV after the tests ($mkeys0 keys, $pds0 PDs before)" \
	'[ "$(mrc_stat $DEV mkeys)" = "$mkeys0" ] && [ "$(mrc_stat $DEV pds)" = "$pds0" ]'

# The comparison run on rxe, when the kernel has it.
if modprobe rdma_rxe 2>/dev/null && dummy_up $RXE_NETDEV 192.168.95.1/24 &&
   rdma link add $RXE type rxe netdev $RXE_NETDEV 2>/dev/null &&
   wait_for 10 sh -c "grep -q $RXE_GID_V4 /sys/class/infiniband/$RXE/ports/1/gids/*"; then
	strict=0
	[ "${FRWR_RXE_STRICT:-0}" = 1 ] && strict=1
	# A comparison: 1,000 cycles of item 27 say as much about rxe.
	FRWR_CYCLES=${FRWR_RXE_CYCLES:-1000} MRCT_DEVICE=$RXE ./frwr_tests 2>&1 |
		tap_to_lines frwr-rxe $((1 - strict)) || rc=1
	rdma link del $RXE
else
	echo "# frwr-rxe: comparison run skipped: no rdma_rxe or no $RXE on $RXE_NETDEV"
	rdma link del $RXE 2>/dev/null
fi
ip link del $RXE_NETDEV 2>/dev/null

t_check "frwr: rdma link del $DEV" rdma link del $DEV
ip link del $NETDEV
t_check "frwr: rmmod mrcore_test" rmmod mrcore_test
t_check "frwr: unload mrcore and vhca" unload_mrcore
exit $rc
