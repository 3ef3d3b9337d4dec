#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# vhca's KUnit suites (drivers/vhca/*_test.c) are linked into vhca.ko on
# the debug kernel (CONFIG_VHCA_KUNIT_TEST) and run when it loads. "make
# kunit" (scripts/kunit.sh) runs this script alone on that kernel
# ("run.sh only:vhca_kunit.sh"); it is not one of the Makefile's
# TEST_PROGS, so the VM tier does not run it again. Load vhca, then turn
# each case's result in /sys/kernel/debug/kunit/<suite>/results into one
# of our lines:
#
#   ok N case            ->  ok - kunit: SUITE: case
#   not ok N case        ->  not ok - kunit: SUITE: case
#
# Parameterised cases count once, with their parameters' failures logged.
# Then each suite's cases are counted against its plan (the "1..N" line
# KUnit prints from the suite's case table): a suite that stopped midway,
# or whose init failed, reports fewer, and that is a "not ok" line with
# both counts. (A case's log holds 512 bytes in 6.1, its last parameter's
# run and its own result line; a failure too long for that loses the
# result line, and so fails the count too.)
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
	# Case lines and the plan are indented once (4 spaces); parameters
	# twice; the suite result is the last line, not indented.
	/^    1\.\.[0-9]+$/ { plan = substr($1, 4) + 0; next }
	/^        not ok [0-9]+ / { sub(/^ +/, ""); print "#   " suite ": " $0; next }
	/^    ok [0-9]+ / {
		name = $0; sub(/^    ok [0-9]+ (- )?/, "", name)
		sub(/ # SKIP.*/, " # SKIP", name)
		print "ok - kunit: " suite ": " name; seen++; next
	}
	/^    not ok [0-9]+ / {
		name = $0; sub(/^    not ok [0-9]+ (- )?/, "", name)
		print "not ok - kunit: " suite ": " name; seen++; failed++; next
	}
	/^(not )?ok 1 / { verdict = $1 }
	END {
		t = "kunit: " suite ": every planned case reported"
		if (plan == "")
			print "not ok - " t " # no plan line (1..N) in its results"
		else if (seen != plan)
			print "not ok - " t " # " seen + 0 " of " plan " cases reported (plan 1.." plan "): the suite stopped midway"
		else if (verdict != "ok" && !failed)
			print "not ok - " t " # all " plan " cases ok, but the suite reports " (verdict == "" ? "no result" : "not ok")
		else
			print "ok - " t " (" plan " of " plan ")"
	}' "$s/results"
done
[ "$found" = 1 ] || t_fail "$T: vhca suites present" "no /sys/kernel/debug/kunit/vhca_* (CONFIG_VHCA_KUNIT_TEST off?)"
unload_mrcore
