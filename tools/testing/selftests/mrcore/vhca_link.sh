#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# vhca device lifetime: load, rdma link add/show/del, GIDs from the netdev,
# bad input, netdev removal, rmmod with devices present, unload.
. ./lib.sh

GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:4d01	# ::ffff:192.168.77.1

t_check "vhca: modules load" load_mrcore
dummy_up vd0 192.168.77.1/24
dummy_up vd1 192.168.78.1/24

t_check "vhca: rdma link add vhca0 netdev vd0" \
	rdma link add vhca0 type vhca netdev vd0
t_eval "vhca: rdma dev show lists vhca0" 'rdma dev show | grep -q "vhca0:"'
t_eval "vhca: rdma link show: vhca0/1 on vd0, ACTIVE" \
	'rdma link show vhca0/1 | grep "netdev vd0" | grep -q "state ACTIVE"'
t_check "vhca: IPv4 GID of vd0 in the GID table" \
	wait_for $PROGRESS_TMO sh -c "grep -q $GID_V4 /sys/class/infiniband/vhca0/ports/1/gids/*"
t_eval "vhca: RoCE v2 GID type present" \
	'grep -q "RoCE v2" /sys/class/infiniband/vhca0/ports/1/gid_attrs/types/*'
t_eval "vhca: node type and port link layer" \
	'grep -q "CA" /sys/class/infiniband/vhca0/node_type &&
	 grep -q Ethernet /sys/class/infiniband/vhca0/ports/1/link_layer'
# ib_mad opens the port with a PD, a CQ and QP1 of its own.
t_eval "vhca: local DMA key live, one PD (ib_mad's QP1)" \
	'[ "$(mrc_stat vhca0 mkeys)" = 1 ] && [ "$(mrc_stat vhca0 pds)" = 1 ]'
t_eval "vhca: ib_mad's GSI QP1 exists" \
	'rdma res show qp link vhca0/1 | grep -q "lqpn 1 .*type GSI"'
# Exactly one live context: the local DMA key, PA mode, any PD, all memory.
t_eval "vhca: device memory holds exactly the local DMA key context" \
	'awk "NR > 1" /sys/kernel/debug/vhca/vhca0/mkeys > /tmp/mkeys &&
	 [ "$(wc -l < /tmp/mkeys)" = 1 ] &&
	 awk "\$3 == \"VALID\" && \$4 == \"PA\" && \$5 == 0 &&
	      \$8 == \"0xffffffffffffffff\" {ok = 1} END {exit !ok}" /tmp/mkeys'

# Bad input: each is refused with an errno and leaves no device behind.
t_refuse "vhca: duplicate device name refused" "File exists" \
	rdma link add vhca0 type vhca netdev vd1
t_refuse "vhca: second link on the same netdev refused" "File exists" \
	rdma link add vhca9 type vhca netdev vd0
t_refuse "vhca: nonexistent netdev refused" "No such device" \
	rdma link add vhca9 type vhca netdev nosuchdev
t_eval "vhca: nothing left behind by refused adds" \
	'no_rdma_dev vhca9 && [ "$(rdma dev show | grep -c vhca)" = 1 ]'

t_check "vhca: rdma link del vhca0" rdma link del vhca0
t_eval "vhca: vhca0 gone from rdma dev and debugfs" \
	'no_rdma_dev vhca0 && [ ! -e /sys/kernel/debug/mrcore/vhca0 ] &&
	 [ ! -e /sys/kernel/debug/vhca/vhca0 ]'

t_eval "vhca: netdev removal removes its device" \
	'rdma link add vhca2 type vhca netdev vd1 && ip link del vd1 &&
	 wait_for $PROGRESS_TMO no_rdma_dev vhca2'

t_check "vhca: re-add after del" rdma link add vhca0 type vhca netdev vd0
dummy_up vd2 192.168.79.1/24
t_check "vhca: second device on another netdev" \
	rdma link add vhca1 type vhca netdev vd2
t_check "vhca: rmmod vhca with two devices present" unload_mrcore
t_eval "vhca: no vhca device or module after unload" \
	'no_rdma_dev vhca && [ ! -e /sys/module/vhca ]'
ip link del vd0
ip link del vd2
