#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench, in one VM boot:
#
# 1. User MR registration: ./mr_bench times REG+DEREG rounds of 4 KiB to
#    1 GiB buffers (4 KiB pages and THP) through /dev/mrcore_test, that is
#    ib_reg_user_mr() and ib_dereg_mr(), on vhca0 and on rxe0 side by side;
#    tables with the ratio and vhca's translation entries. The format is in
#    Documentation/mrcore/registration.rst, "Benchmark".
# 2. NVMe-oF over rxe, the reference every later vhca figure is compared
#    with. fio 4 KiB random read (QD 32) and 128 KiB sequential read, 1 job,
#    10 s each, on a RAM-disk namespace. Prints a table.
#
# A part that cannot be set up prints a "not ok" line; the other still runs.
. ./lib.sh
. ./nvmeof.sh

ADDR=10.77.0.1
RUNTIME=${BENCH_RUNTIME:-10}

MR_VHCA=vhca0
MR_VHCA_NETDEV=mbd0
MR_RXE=rxe0
MR_RXE_NETDEV=mbd1
# Options of mr_bench, e.g. "-s 0.1" for a tenth of the rounds.
MR_BENCH_ARGS=${MR_BENCH_ARGS:-}

# mr_down: undo what mr_bench_part set up, best effort.
mr_down() {
	rdma link del $MR_VHCA 2>/dev/null
	rdma link del $MR_RXE 2>/dev/null
	ip link del $MR_VHCA_NETDEV 2>/dev/null
	ip link del $MR_RXE_NETDEV 2>/dev/null
	rmmod mrcore_test 2>/dev/null
	unload_mrcore 2>/dev/null
}

# mr_missing WHY: the registration figures cannot be measured.
mr_missing() {
	t_fail "bench: reg/dereg figures measured" "$1"
	mr_down
	return 1
}

# mr_bench_part: vhca0 and rxe0 on dummy netdevs of their own, mr_bench on
# both, then everything removed again so the NVMe-oF part starts clean.
mr_bench_part() {
	local rc

	# rxe's ICRC needs a crc32 implementation; the generic one always works.
	modprobe crc32_generic 2>/dev/null
	modprobe rdma_rxe || mr_missing "modprobe rdma_rxe failed" || return 1
	load_mrcore || mr_missing "mrcore and vhca do not load" || return 1
	load_mrcore_test || mr_missing "mrcore_test does not load" || return 1
	[ -c /dev/mrcore_test ] || mr_missing "no /dev/mrcore_test" || return 1
	[ -x ./mr_bench ] || mr_missing "no ./mr_bench in $(pwd)" || return 1
	dummy_up $MR_VHCA_NETDEV 10.78.0.1/24 ||
		mr_missing "cannot create dummy $MR_VHCA_NETDEV" || return 1
	rdma link add $MR_VHCA type vhca netdev $MR_VHCA_NETDEV ||
		mr_missing "rdma link add $MR_VHCA failed" || return 1
	dummy_up $MR_RXE_NETDEV 10.79.0.1/24 ||
		mr_missing "cannot create dummy $MR_RXE_NETDEV" || return 1
	rdma link add $MR_RXE type rxe netdev $MR_RXE_NETDEV ||
		mr_missing "rdma link add $MR_RXE failed" || return 1

	# Its own "ok"/"not ok" line says whether every cell was measured.
	# shellcheck disable=SC2086
	./mr_bench $MR_BENCH_ARGS $MR_VHCA $MR_RXE 2>&1
	rc=$?
	[ $rc -le 1 ] || t_fail "bench: mr_bench ran to its end" "exit status $rc"

	t_eval "bench: $MR_VHCA and $MR_RXE removed, modules unloaded" \
		"rdma link del $MR_VHCA && rdma link del $MR_RXE &&
		 rmmod mrcore_test && unload_mrcore"
	ip link del $MR_VHCA_NETDEV
	ip link del $MR_RXE_NETDEV
}

mr_bench_part

# fio_figure DEV RW BS QD FIELD: one number from fio's terse output
# (field 8 = read IOPS, field 7 = read KiB/s).
fio_figure() {
	fio --thread --name=b --filename="$1" --direct=1 --ioengine=libaio --rw="$2" \
	    --bs="$3" --iodepth="$4" --numjobs=1 --time_based \
	    --runtime="$RUNTIME" --size=100M --group_reporting \
	    --output-format=terse --terse-version=3 2>/dev/null |
	    awk -F';' -v f="$5" '{print $f}'
}

nvmeof_modules && modprobe rdma_rxe || { t_fail "bench: modules" "load"; exit 1; }
dummy_up rxed0 $ADDR/24
rdma link add rxe0 type rxe netdev rxed0
nvmet_up $ADDR
if ! dev=$(nvme_host_up $ADDR 1); then
	t_fail "bench: rxe NVMe-oF connect" "no namespace"
	exit 1
fi
iops=$(fio_figure "$dev" randread 4k 32 8)
kibs=$(fio_figure "$dev" read 128k 32 7)
nvme_host_down
nvmet_down
rdma link del rxe0

echo "bench: NVMe-oF over RDMA, RAM-disk namespace, 1 job, ${RUNTIME} s each"
echo "| workload                    | rxe          | vhca |"
echo "|-----------------------------|--------------|------|"
printf '| 4 KiB randread QD32 (IOPS)  | %12s | n/a (data path not yet) |\n' "$iops"
printf '| 128 KiB seq read QD32 (MB/s)| %12s | n/a (data path not yet) |\n' \
	"$(awk -v k="$kibs" 'BEGIN {printf "%.1f", k * 1024 / 1e6}')"
[ -n "$iops" ] && [ "$iops" != 0 ] && t_ok "bench: rxe figures measured"
