#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench: NVMe-oF over rxe, the reference every later vhca figure is
# compared with. fio 4 KiB random read (QD 32) and 128 KiB sequential read,
# 1 job, 10 s each, on a RAM-disk namespace. Prints a table.
. ./lib.sh
. ./nvmeof.sh

ADDR=10.77.0.1
RUNTIME=${BENCH_RUNTIME:-10}

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
