#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Reference baseline: NVMe-oF over rxe on a dummy netdev, target and host
# in this VM; a pattern written, read back and compared, then fio verify.
. ./lib.sh
. ./nvmeof.sh

ADDR=10.77.0.1

t_eval "rxe: NVMe-oF and rxe modules load" \
	'nvmeof_modules && modprobe rdma_rxe'
# The connect resolves $ADDR through rxe0's GID table, which ib_core fills
# from a work item: wait for the GID rather than race it.
t_check "rxe: rdma link add rxe0 netdev rxed0, GID of $ADDR" \
	rdma_link_up rxe rxe0 rxed0 $ADDR
t_check "rxe: nvmet-rdma port on $ADDR" nvmet_up $ADDR
if dev=$(nvme_host_up $ADDR 2); then
	t_ok "rxe: nvme-rdma host connects ($dev)"
	t_check "rxe: 16 MiB pattern written, read back, identical" \
		pattern_rw "$dev" 16
	t_check "rxe: fio randwrite 4k with crc32c verify" \
		fio --thread --name=verify --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k --iodepth=16 --size=8M \
		--verify=crc32c --do_verify=1 --output=/dev/null
else
	t_fail "rxe: nvme-rdma host connects" "no namespace appeared"
fi
t_check "rxe: host disconnects" nvme_host_down
nvmet_down
t_check "rxe: rdma link del rxe0" rdma_link_down rxe0 rxed0
