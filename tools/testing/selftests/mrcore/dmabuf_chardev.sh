#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dma-buf MRs: load mrcore, vhca and mrcore_test, bring up vhca0 over a
# dummy netdev, run ./dmabuf_tests (kselftest harness, TAP) and report
# each of its results as one line of ours:
#
#   ok N dmabuf.NAME           ->  ok - dmabuf: NAME
#   ok N # SKIP WHY            ->  ok - dmabuf: NAME # SKIP WHY
#   not ok N dmabuf.NAME       ->  not ok - dmabuf: NAME # <first failed assertion>
#
# The tests register ranges of dma-bufs (mrcore_test's own exporter, and
# a udmabuf where the kernel has /dev/udmabuf) through vhca's
# reg_user_mr_dmabuf and move bytes through them over a loopback RC pair,
# while the exporter moves the buffer; each checks the bytes, the MR's
# and the device's dma-buf counters and the exporter's. Whether an MR
# follows moves or pins its buffer depends on the kernel
# (CONFIG_DMABUF_MOVE_NOTIFY); the cases assert whichever mode mrcore
# reports. Afterwards the device's keys and PDs must be what they were,
# and the device's dma-buf counters are printed as a comment. vhca only.
# Exits 4, after a "not ok" line, when a prerequisite is missing; 1 when
# a test failed.
. ./lib.sh
. ./chardev_lib.sh

DEV=vhca0
NETDEV=dbufd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6601	# ::ffff:192.168.102.1

chardev_setup dmabuf dmabuf_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.102.1/24 $GID_V4

rc=0
# ib_core's MAD layer holds keys and a PD of its own on the device.
chardev_baseline $DEV mkeys pds
MRCT_DEVICE=$DEV ./dmabuf_tests 2>&1 | tap_to_lines dmabuf dmabuf_tests || rc=1

t_eval "dmabuf: no key or PD left on $DEV ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

f=/sys/kernel/debug/mrcore/$DEV/dmabuf
[ -r "$f" ] && echo "# dmabuf: $f: $(awk '$2 != 0 {printf "%s %s ", $1, $2}' "$f")"

chardev_teardown $DEV $NETDEV
exit $rc
