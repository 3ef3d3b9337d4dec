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
. ./chardev_lib.sh

DEV=vhca0
NETDEV=keysd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6301	# ::ffff:192.168.99.1

chardev_setup keys keys_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.99.1/24 $GID_V4

rc=0
# ib_core's MAD layer holds keys and a PD of its own on the device.
chardev_baseline $DEV mkeys pds
MRCT_DEVICE=$DEV ./keys_tests 2>&1 | tap_to_lines keys keys_tests || rc=1

t_eval "keys: no key or PD left on $DEV ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

chardev_teardown $DEV $NETDEV
exit $rc
