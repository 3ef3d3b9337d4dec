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
. ./chardev_lib.sh

DEV=vhca0
NETDEV=dpd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:5c01	# ::ffff:192.168.92.1
RXE=rxe0
RXE_NETDEV=dpr0
RXE_GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:5d01	# ::ffff:192.168.93.1

chardev_setup dp dp_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.92.1/24 $GID_V4

rc=0
chardev_baseline $DEV mkeys pds
MRCT_DEVICE=$DEV ./dp_tests 2>&1 | tap_to_lines dp dp_tests || rc=1

# Every context is closed: the keys and PDs are back to what they were.
t_eval "dp: no MR or PD left on $DEV after the tests ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

# The comparison run on rxe, when the kernel has it.
chardev_compare $RXE $RXE_NETDEV 192.168.93.1/24 $RXE_GID_V4 "${DP_RXE_STRICT:-0}" \
	./dp_tests || rc=1

chardev_teardown $DEV $NETDEV
exit $rc
