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
. ./chardev_lib.sh

DEV=vhca0
NETDEV=cntd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6201	# ::ffff:192.168.98.1

chardev_setup counter counter_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.98.1/24 $GID_V4

rc=0
chardev_baseline $DEV mkeys pds mws
MRCT_DEVICE=$DEV ./counter_tests 2>&1 | tap_to_lines counter counter_tests || rc=1

# Every context is closed: counters, windows, indirect keys, MRs and PDs
# are gone.
t_eval "counter: no key, window or PD left on $DEV ($base_mkeys keys, $base_mws windows, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys mws pds'

chardev_teardown $DEV $NETDEV
exit $rc
