#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# vhca's KUnit suites (drivers/vhca/qp_test.c) are linked into vhca.ko on
# the debug kernel (CONFIG_VHCA_KUNIT_TEST) and run when it loads. Load
# it, then turn each case's result in /sys/kernel/debug/kunit/<suite>/
# results into one of our lines:
#
#   ok N case            ->  ok - kunit: SUITE: case
#   not ok N case        ->  not ok - kunit: SUITE: case
#
# Parameterised cases count once, with their parameters' failures logged.
# A kernel without KUnit (the stock one) has no suites to run and says so
# in a comment line; a KUnit kernel without vhca's suites fails.
. ./lib.sh

T=kunit

load_mrcore || { t_fail "$T: load mrcore and vhca"; exit 1; }
if [ ! -d /sys/kernel/debug/kunit ]; then
	echo "# $T: this kernel has no KUnit; vhca's suites run on the debug kernel"
	unload_mrcore
	exit 0
fi

found=0
for s in /sys/kernel/debug/kunit/vhca_*; do
	[ -f "$s/results" ] || continue
	found=1
	suite=${s##*/}
	awk -v suite="$suite" '
	# Case lines are indented once (4 spaces); parameters twice.
	/^        not ok [0-9]+ / { sub(/^ +/, ""); print "#   " suite ": " $0; next }
	/^    ok [0-9]+ / {
		name = $0; sub(/^    ok [0-9]+ (- )?/, "", name)
		sub(/ # SKIP.*/, " # SKIP", name)
		print "ok - kunit: " suite ": " name; next
	}
	/^    not ok [0-9]+ / {
		name = $0; sub(/^    not ok [0-9]+ (- )?/, "", name)
		print "not ok - kunit: " suite ": " name; next
	}' "$s/results"
done
[ "$found" = 1 ] || t_fail "$T: vhca suites present" "no /sys/kernel/debug/kunit/vhca_* (CONFIG_VHCA_KUNIT_TEST off?)"
unload_mrcore
