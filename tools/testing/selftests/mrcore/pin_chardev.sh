#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Pinned user MRs and copy-on-write (issue 16, item 4; ANCHORS checklist
# items 34 and 35): load mrcore, vhca and mrcore_test, bring up vhca0 over
# a dummy netdev, run ./pin_tests (kselftest harness, TAP) and report each
# of its results as one line of ours:
#
#   ok N ro_pin.VARIANT.NAME   ->  ok - pin: VARIANT.NAME
#   ok N # SKIP WHY            ->  ok - pin: VARIANT.NAME # SKIP WHY
#   not ok N ...               ->  not ok - pin: ... # <first failed assertion>
#
# The tests register this process's memory read-only over the zero page,
# the huge zero page, a private O_TMPFILE mapping, a shared memfd and
# private hugetlb, and writable or read-only around a fork(), then check
# that the device, reading and writing through the MR's key, and the
# CPU see the same bytes, and that the kernel's pin counters
# (nr_foll_pin_acquired/released) balance around every case. Afterwards
# the device's keys and PDs must be what they were. vhca only. Exits 4,
# after a "not ok" line, when a prerequisite is missing; 1 when a test
# failed.
. ./lib.sh
. ./chardev_lib.sh

DEV=vhca0
NETDEV=pind0

chardev_setup pin pin_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.103.1/24

rc=0
# ib_core's MAD layer holds keys and a PD of its own on the device.
chardev_baseline $DEV mkeys pds
MRCT_DEVICE=$DEV ./pin_tests 2>&1 | tap_to_lines pin pin_tests || rc=1

t_eval "pin: no key or PD left on $DEV ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

chardev_teardown $DEV $NETDEV
exit $rc
