#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run the VM-tier scripts for a mode: test (the suites), ulp (the storage
# ULPs over vhca only, for the swiotlb=force run), bench, demo,
# only:<script> (one script, for debugging).
cd "$(dirname "$0")"

# DMA-API debug prints one error per boot by default; let each script
# show its first, so an error of ours cannot hide behind an earlier one.
dma_debug_rearm() {
	[ -w /sys/kernel/debug/dma-api/num_errors ] &&
		echo 1 > /sys/kernel/debug/dma-api/num_errors
	return 0
}

case "$1" in
test)	# The rxe baselines run before the vhca storage scripts, so that a
	# wedged vhca data path cannot take them down with it.
	for t in vhca_kunit.sh vhca_link.sh mr_chardev.sh pin_chardev.sh \
		 nvmeof_rxe.sh iser_rxe.sh \
		 nvmeof_vhca.sh iser_vhca.sh nvmeof_frwr_vhca.sh \
		 nvmeof_exhaust_vhca.sh dp_chardev.sh rereg_chardev.sh \
		 frwr_chardev.sh \
		 fmr_chardev.sh mw_chardev.sh counter_chardev.sh keys_chardev.sh \
		 odp_chardev.sh dmabuf_chardev.sh \
		 removal_vhca.sh; do
		echo "# --- $t"
		dma_debug_rearm
		sh "./$t"
	done ;;
ulp)	for t in nvmeof_vhca.sh iser_vhca.sh; do
		echo "# --- $t"
		dma_debug_rearm
		sh "./$t"
	done ;;
only:*)	sh "./${1#only:}" ;;
bench)	sh ./bench.sh ;;
demo)	sh ./demo.sh ;;
*)	echo "run.sh: unknown mode $1"; exit 2 ;;
esac
