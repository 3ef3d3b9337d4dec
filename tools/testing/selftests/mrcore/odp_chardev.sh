#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# On-demand paging (issue 6), modelled on the kernel's hmm-tests: load
# mrcore, vhca and mrcore_test, bring up vhca0 over a dummy netdev, run
# ./odp_tests (kselftest harness, TAP) and report each of its results as
# one line of ours:
#
#   ok N odp.NAME              ->  ok - odp: NAME
#   ok N # SKIP WHY            ->  ok - odp: NAME # SKIP WHY
#   not ok N odp.NAME          ->  not ok - odp: NAME # <first failed assertion>
#
# The tests register ODP MRs over this process's memory through
# /dev/mrcore_test and move bytes through them over a loopback RC pair
# while the CPU side changes under the device (munmap, mprotect,
# MADV_DONTNEED, fork, THP split, hugetlb, process exit), and prefetch
# them; each checks the bytes and the MR's and the device's ODP counters.
# Afterwards the device's keys and PDs must be what they were (children
# that exited or were killed with ODP MRs live included), and the
# device-wide ODP counters of mrcore and of vhca's fault queue are
# printed as comments. vhca only. Exits 4, after a "not ok" line, when a
# prerequisite is missing; 1 when a test failed.
. ./lib.sh
. ./chardev_lib.sh

DEV=vhca0
NETDEV=odpd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6501	# ::ffff:192.168.101.1

chardev_setup odp odp_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.101.1/24 $GID_V4

rc=0
# ib_core's MAD layer holds keys and a PD of its own on the device.
chardev_baseline $DEV mkeys pds
MRCT_DEVICE=$DEV ./odp_tests 2>&1 | tap_to_lines odp odp_tests || rc=1

t_eval "odp: no key or PD left on $DEV ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

# The counters the cases moved, non-zero ones only, for the log.
for f in /sys/kernel/debug/mrcore/$DEV/odp /sys/kernel/debug/vhca/$DEV/odp; do
	[ -r "$f" ] &&
		echo "# odp: $f: $(awk '$2 != 0 {printf "%s %s ", $1, $2}' "$f")"
done

chardev_teardown $DEV $NETDEV
exit $rc
