#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Rereg and dereg while the device is writing (issue 16 item 4; ANCHORS.md
# item 19): load mrcore, vhca and mrcore_test, create vhca0 on a dummy
# netdev, run ./rereg_tests (kselftest harness, TAP; stamped RDMA WRITEs of
# /dev/mrcore_test kept in flight while an MR is reregistered between two
# buffers or deregistered, and a receive left at an MR's old iova) and
# turn each result into one of our lines:
#
#   ok N rereg.NAME            ->  ok - rereg: NAME
#   ok N # SKIP WHY            ->  ok - rereg: NAME # SKIP WHY
#   not ok N rereg.NAME        ->  not ok - rereg: NAME # <first failed assertion>
#
# The cases' figures (reregs made, writes a change overlapped, pairs
# used) follow as comments. vhca only: rxe in 6.1 has no rereg. Then the
# keys and PDs of the device must be back to what they were. Exits 4,
# after a "not ok" line, when a prerequisite is missing; 1 when a test
# failed.
. ./lib.sh
. ./chardev_lib.sh

DEV=vhca0
NETDEV=rrd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6901	# ::ffff:192.168.105.1
OUT=/tmp/rereg_tests.out

chardev_setup rereg rereg_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.105.1/24 $GID_V4

rc=0
chardev_baseline $DEV mkeys pds
MRCT_DEVICE=$DEV ./rereg_tests 2>&1 | tee $OUT | tap_to_lines rereg rereg_tests || rc=1
sed -n 's/^#.*figures: /# rereg: /p' $OUT
rm -f $OUT

# Every context is closed: the keys and PDs are back to what they were.
t_eval "rereg: no MR or PD left on $DEV after the tests ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

chardev_teardown $DEV $NETDEV
exit $rc
