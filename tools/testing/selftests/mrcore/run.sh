#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run the VM-tier scripts for a mode: test (the suites: TEST_PROGS of the
# Makefile, in its order, from kselftest-list.txt that
# scripts/selftests.sh wrote beside them), ulp (the storage ULPs over
# vhca only, for the swiotlb=force run), fuzz (fuzz.sh, then leaks.sh,
# for make fuzz), only:<script>[,<script>...] (those scripts, for
# debugging or for "make kunit").
cd "$(dirname "$0")"

# DMA-API debug prints one error per boot by default; let each script
# show its first, so an error of ours cannot hide behind an earlier one.
dma_debug_rearm() {
	[ -w /sys/kernel/debug/dma-api/num_errors ] &&
		echo 1 > /sys/kernel/debug/dma-api/num_errors
	return 0
}

run_each() {
	for t in "$@"; do
		case " ${MRC_EXCLUDE:-} " in
		*" $t "*) echo "# --- $t: excluded from this run (mrcore.exclude)"
			continue ;;
		esac
		echo "# --- $t"
		dma_debug_rearm
		sh "./$t"
	done
}

case "$1" in
test)	[ -s kselftest-list.txt ] ||
		{ echo "not ok - run.sh: no kselftest-list.txt in $(pwd)"; exit 1; }
	# Lines "mrcore:SCRIPT", in the Makefile's order.
	run_each $(sed -n 's/^mrcore://p' kselftest-list.txt) ;;
ulp)	run_each nvmeof_vhca.sh iser_vhca.sh ;;
# vmtest.sh --fuzz: the fuzzer, then the leak scan after it.
fuzz)	run_each fuzz.sh leaks.sh ;;
only:*)	run_each $(echo "${1#only:}" | tr , ' ') ;;
*)	echo "run.sh: unknown mode $1"; exit 2 ;;
esac
