#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Requested keys and asynchronous registration (issue 5, item 5): load
# mrcore, vhca and mrcore_test, bring up vhca0 over a dummy netdev, run
# ./keys_tests (kselftest harness, TAP) and report each of its results as
# one line of ours:
#
#   ok N keys.NAME             ->  ok - keys: NAME
#   ok N # SKIP WHY            ->  ok - keys: NAME # SKIP WHY
#   not ok N keys.NAME         ->  not ok - keys: NAME # <first failed assertion>
#
# The tests register user memory through mrc_reg_mr() and
# mrc_reg_mr_async() with keys they choose and move data through those
# keys over a loopback RC pair. Afterwards the device's keys and PDs must
# be what they were (a request pending at close included). vhca only.
# Exits 4, after a "not ok" line, when a prerequisite is missing; 1 when
# a test failed.
. ./lib.sh

DEV=vhca0
NETDEV=keysd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6301	# ::ffff:192.168.99.1

missing() {
	t_fail "keys: prerequisite: $1" "$2"
	rdma link del $DEV 2>/dev/null
	ip link del $NETDEV 2>/dev/null
	rmmod mrcore_test 2>/dev/null
	unload_mrcore 2>/dev/null
	exit 4
}

# TAP of keys_tests on stdin, our lines on stdout; status 1 when a test
# failed or a result is missing.
tap_to_lines() {
	awk '
	function why(   i) {
		for (i = 1; i <= n; i++)
			if (log_[i] ~ /keys_tests\.c:[0-9]+:/ && log_[i] ~ /Expected/)
				return log_[i]
		for (i = 1; i <= n; i++)
			if (log_[i] ~ /keys_tests\.c:[0-9]+:/)
				return log_[i]
		return n ? log_[n] : "failed"
	}
	/^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0; next }
	/^# +RUN +/ { name = $3; sub(/^[^.]*\./, "", name); n = 0; next }
	/^# +(OK|FAIL) +/ { next }
	/^# / { log_[++n] = substr($0, 3); next }
	/^ok [0-9]+ # SKIP/ {
		s = $0; sub(/^ok [0-9]+ # SKIP */, "", s)
		print "ok - keys: " name " # SKIP " s; got++; next
	}
	/^ok [0-9]+ / { print "ok - keys: " name; got++; next }
	/^not ok [0-9]+ / {
		for (i = 1; i <= n; i++)
			print "#   " log_[i]
		print "not ok - keys: " name " # " why(); got++; bad++; next
	}
	END {
		if (!plan || got != plan) {
			print "not ok - keys: keys_tests reported " got " of " plan " results"
			bad++
		}
		exit bad ? 1 : 0
	}'
}

modprobe ib_core || missing "ib_core" "modprobe ib_core failed"
load_mrcore || missing "mrcore and vhca" "they do not load"
load_mrcore_test || missing "mrcore_test" "neither $MRC_KO/mrcore_test.ko nor modprobe"
[ -c /dev/mrcore_test ] || missing "mrcore_test" "no /dev/mrcore_test"
[ -x ./keys_tests ] || missing "keys_tests" "no ./keys_tests binary in $(pwd)"
dummy_up $NETDEV 192.168.99.1/24 || missing "netdev" "cannot create dummy $NETDEV"
rdma link add $DEV type vhca netdev $NETDEV ||
	missing "$DEV" "rdma link add $DEV type vhca netdev $NETDEV failed"
wait_for 10 sh -c "grep -q $GID_V4 /sys/class/infiniband/$DEV/ports/1/gids/*" ||
	missing "$DEV GID" "no IPv4 GID of $NETDEV on $DEV"

rc=0
# ib_core's MAD layer holds keys and a PD of its own on the device.
mkeys0=$(mrc_stat $DEV mkeys)
pds0=$(mrc_stat $DEV pds)
MRCT_DEVICE=$DEV ./keys_tests 2>&1 | tap_to_lines || rc=1

t_eval "keys: no key or PD left on $DEV ($mkeys0 keys, $pds0 PDs before)" \
	'[ "$(mrc_stat $DEV mkeys)" = "$mkeys0" ] && [ "$(mrc_stat $DEV pds)" = "$pds0" ]'

t_check "keys: rdma link del $DEV" rdma link del $DEV
ip link del $NETDEV
t_check "keys: rmmod mrcore_test" rmmod mrcore_test
t_check "keys: unload mrcore and vhca" unload_mrcore
exit $rc
