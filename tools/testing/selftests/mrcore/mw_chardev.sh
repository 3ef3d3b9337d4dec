#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Memory windows, indirect keys and SG_GAPS fast registration (ANCHORS.md
# items 24, 25, 26; issue 5): load mrcore, vhca and mrcore_test, create
# vhca0 on a dummy netdev, run ./mw_tests (kselftest harness, TAP; windows
# and indirect keys of /dev/mrcore_test used over its loopback RC pairs)
# and turn each result into one of our lines:
#
#   ok N mw.NAME               ->  ok - mw: NAME
#   ok N # SKIP WHY            ->  ok - mw: NAME # SKIP WHY
#   not ok N mw.NAME           ->  not ok - mw: NAME # <first failed assertion>
#
# vhca only: rxe in 6.1 has no kernel memory-window path. Then the keys,
# PDs and windows of the device must be back to what they were. Exits 4,
# after a "not ok" line, when a prerequisite is missing; 1 when a test
# failed.
. ./lib.sh
. ./chardev_lib.sh

DEV=vhca0
NETDEV=mwd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6001	# ::ffff:192.168.96.1

chardev_setup mw mw_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.96.1/24 $GID_V4

rc=0
chardev_baseline $DEV mkeys pds mws
MRCT_DEVICE=$DEV ./mw_tests 2>&1 | tap_to_lines mw mw_tests || rc=1

# Every context is closed: windows, indirect keys, MRs and PDs are gone.
t_eval "mw: no key, window or PD left on $DEV ($base_mkeys keys, $base_mws windows, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys mws pds'

chardev_teardown $DEV $NETDEV
exit $rc
