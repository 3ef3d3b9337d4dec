#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# FMRs and FMR pools end to end (issue 5): load mrcore, vhca and
# mrcore_test, create vhca0 on a dummy netdev, run ./fmr_tests (kselftest
# harness, TAP; pools of /dev/mrcore_test whose keys the device reads and
# writes through) and turn each result into one of our lines:
#
#   ok N fmr.NAME              ->  ok - fmr: NAME
#   ok N # SKIP WHY            ->  ok - fmr: NAME # SKIP WHY
#   not ok N fmr.NAME          ->  not ok - fmr: NAME # <first failed assertion>
#
# With --bench, the same set-up runs "./fmr_tests --bench" instead: pool
# map + unmap cycles with cache hits and with misses, their rates and the
# miss/hit cost ratio (FMR_BENCH_ARGS, e.g. "-t 1", are passed on); its
# last line is "ok"/"not ok".
#
# Exits 4, after a "not ok" line, when a prerequisite is missing, so a
# missing piece is never silently green; 1 when a test failed.
. ./lib.sh
. ./chardev_lib.sh

DEV=vhca0
NETDEV=fmd0
FMR_BENCH_ARGS=${FMR_BENCH_ARGS:-}

bench=0
[ "${1:-}" = --bench ] && bench=1

chardev_setup fmr fmr_tests $DEV $NETDEV
chardev_vhca $DEV $NETDEV 192.168.97.1/24

rc=0
chardev_baseline $DEV mkeys pds
if [ $bench = 1 ]; then
	# shellcheck disable=SC2086
	./fmr_tests --bench $FMR_BENCH_ARGS $DEV || rc=1
else
	MRCT_DEVICE=$DEV ./fmr_tests 2>&1 | tap_to_lines fmr fmr_tests || rc=1
fi

# Every context is closed: its pools destroyed, their keys freed.
t_eval "fmr: no FMR key or PD left on $DEV ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

chardev_teardown $DEV $NETDEV
exit $rc
