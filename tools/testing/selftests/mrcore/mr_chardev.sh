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
. ./chardev_lib.sh

DEV=vhca0
NETDEV=mrd0
# Removed by the device removal test while it holds MRs.
SPARE=vhca1
SPARE_NETDEV=mrd1

chardev_setup mr mr_tests "$DEV $SPARE" "$NETDEV $SPARE_NETDEV"
chardev_vhca $DEV $NETDEV 192.168.88.1/24
chardev_vhca $SPARE $SPARE_NETDEV 192.168.89.1/24

rc=0
MRCT_DEVICE=$DEV MRCT_SPARE_DEVICE=$SPARE ./mr_tests 2>&1 | tap_to_lines mr mr_tests || rc=1
t_eval "mr: $SPARE gone after its removal with MRs live" "no_rdma_dev $SPARE"
rdma link del $SPARE 2>/dev/null
ip link del $SPARE_NETDEV

# Every context is closed: only the local DMA key is left, and no PD but
# ib_mad's.
t_eval "mr: no MR or PD left on $DEV after the tests" \
	'[ "$(mrc_stat $DEV mkeys)" = 1 ] && [ "$(mrc_stat $DEV pds)" = 1 ]'

chardev_teardown $DEV $NETDEV
exit $rc
