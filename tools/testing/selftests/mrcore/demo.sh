#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo: load mrcore and vhca, create vhca0, show it, then run the
# NVMe-oF baseline over rxe, saying in plain words what happens.
. ./lib.sh
. ./nvmeof.sh

say() { echo "demo: $*"; }

say "kernel $(uname -r); loading mrcore.ko and vhca.ko"
load_mrcore || { say "could not load the modules"; exit 1; }
dummy_up demo0 192.168.90.1/24
say "creating vhca0 on netdev demo0 (192.168.90.1): rdma link add vhca0 type vhca netdev demo0"
rdma link add vhca0 type vhca netdev demo0 || exit 1
wait_for 10 sh -c 'grep -q c0a8:5a01 /sys/class/infiniband/vhca0/ports/1/gids/*'
say "rdma dev show / rdma link show:"
rdma dev show vhca0 | sed 's/^/demo:   /'
rdma link show vhca0/1 | sed 's/^/demo:   /'
say "GID table of vhca0 port 1 (from demo0's addresses):"
for g in /sys/class/infiniband/vhca0/ports/1/gids/*; do
	v=$(cat "$g" 2>/dev/null)
	[ "$v" != 0000:0000:0000:0000:0000:0000:0000:0000 ] &&
		echo "demo:   gid ${g##*/} $v ($(cat /sys/class/infiniband/vhca0/ports/1/gid_attrs/types/${g##*/} 2>/dev/null))"
done
say "mrcore's view of vhca0 (debugfs):"
sed 's/^/demo:   /' /sys/kernel/debug/mrcore/vhca0/stats
say "vhca0's device memory, mkey table as the device sees it:"
sed 's/^/demo:   /' /sys/kernel/debug/vhca/vhca0/mkeys

say "vhca has no data path yet, so NVMe-oF runs over rxe as the baseline"
nvmeof_modules && modprobe rdma_rxe
dummy_up rxed0 10.77.0.1/24
rdma link add rxe0 type rxe netdev rxed0
nvmet_up 10.77.0.1
say "nvmet-rdma target exports a 128 MiB RAM disk on 10.77.0.1:4420"
if dev=$(nvme_host_up 10.77.0.1 2); then
	say "nvme-rdma host connected: $dev ($(cat /sys/block/${dev#/dev/}/size) sectors)"
	if pattern_rw "$dev" 16; then
		say "wrote 16 MiB of random data through NVMe-oF, read it back: identical"
	else
		say "pattern read back DIFFERS"
	fi
	fio --thread --name=demo --filename="$dev" --direct=1 --ioengine=libaio \
	    --rw=randread --bs=4k --iodepth=32 --runtime=5 --time_based \
	    --output-format=terse --terse-version=3 2>/dev/null |
		awk -F';' '{printf "demo: fio 4 KiB randread QD32 for 5 s over rxe: %d IOPS\n", $8}'
	nvme_host_down
	say "host disconnected"
else
	say "the host did not connect"
fi
nvmet_down
rdma link del rxe0
rdma link del vhca0
say "removed rxe0 and vhca0; unloading"
unload_mrcore && say "done: modules unloaded cleanly"
