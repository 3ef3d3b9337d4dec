#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmemleak after the suites (debug kernel; the last script of the tier):
# with vhca and mrcore_test unloaded, a scan must find no unreferenced
# object that mrcore, vhca or mrcore_test allocated (kmemleak_ours in
# lib.sh: a frame of ours in the object's backtrace, by symbol, or by
# address inside a range where vhca or mrcore_test was once loaded).
# The kernel's other reports are printed as comments, not counted.
#
# The check is first shown able to fail: kmemleak-test
# (CONFIG_DEBUG_KMEMLEAK_TEST) leaks on purpose when loaded, and the scan
# must report objects whose backtrace names it. Kernels without kmemleak
# (the stock one) skip, decided before anything is checked.
. ./lib.sh

T=leaks
if [ ! -w /sys/kernel/debug/kmemleak ]; then
	echo "ok - $T: kmemleak # SKIP no /sys/kernel/debug/kmemleak (CONFIG_DEBUG_KMEMLEAK)"
	exit 0
fi
out=/tmp/kmemleak
rm -f $out.seen $out.mine

# kmemleak_scan_into: one scan; ours appended to $out.mine, the rest to
# $out.seen ("clear" after each scan: a report is seen once).
kmemleak_scan_into() {
	local t0=$(date +%s)
	kmemleak_ours $out
	echo "# $T: scan in $(($(date +%s) - t0)) s:" \
		"$(grep -c '^unreferenced object' $out.all) unreferenced objects reported"
	cat $out >> $out.mine
	cat $out.other >> $out.seen
}

# kmemleak reports only objects older than 5 s: scan until kmemleak-test's
# leaks appear, for at most PROGRESS_TMO seconds (each scan takes its time
# on a debug kernel, so the deadline is the clock's, not a count).
kml_test_seen() {
	local end=$(($(date +%s) + PROGRESS_TMO))
	while [ "$(date +%s)" -lt $end ]; do
		kmemleak_scan_into
		grep -q 'kmemleak_test' $out.seen && return 0
		sleep 1
	done
	echo "no report naming kmemleak_test in $PROGRESS_TMO s"
	return 1
}
t_check "$T: kmemleak-test loads" modprobe kmemleak-test
t_check "$T: the scan reports kmemleak-test's leaks" kml_test_seen
rmmod kmemleak-test 2>/dev/null

rmmod mrcore_test 2>/dev/null
rmmod vhca 2>/dev/null
kmemleak_scan_into
if [ -s $out.mine ]; then
	echo "# $T: unreferenced objects of ours:"
	sed "s/^/# /" $out.mine | head -80
fi
t_eval "$T: no object of mrcore, vhca or mrcore_test unreferenced" \
	'[ ! -s $out.mine ] || { grep -c "^unreferenced" $out.mine; false; }'
# The kernel's own, for the record.
echo "# $T: other unreferenced objects (not ours):" \
	"$(grep -c '^unreferenced object' $out.seen)"
