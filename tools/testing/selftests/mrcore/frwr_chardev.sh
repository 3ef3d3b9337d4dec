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
. ./chardev_lib.sh

DEV=vhca0
NETDEV=frd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:5e01	# ::ffff:192.168.94.1
RXE=rxe0
RXE_NETDEV=frr0
RXE_GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:5f01	# ::ffff:192.168.95.1

chardev_setup frwr frwr_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.94.1/24 $GID_V4

rc=0
chardev_baseline $DEV mkeys pds
MRCT_DEVICE=$DEV ./frwr_tests 2>&1 | tap_to_lines frwr frwr_tests || rc=1

# Every context is closed: the keys and PDs are back to what they were.
t_eval "frwr: no MR or PD left on $DEV after the tests ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

# The comparison run on rxe, when the kernel has it. A comparison: 1,000
# cycles of item 27 say as much about rxe.
chardev_compare $RXE $RXE_NETDEV 192.168.95.1/24 $RXE_GID_V4 "${FRWR_RXE_STRICT:-0}" \
	env FRWR_CYCLES="${FRWR_RXE_CYCLES:-1000}" ./frwr_tests || rc=1

chardev_teardown $DEV $NETDEV
exit $rc
