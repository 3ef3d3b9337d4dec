#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# NVMe-oF over vhca: nvmet-rdma target and nvme-rdma host in this VM over
# one vhca device on a dummy netdev (the connection loops back through the
# vhca fabric). For 1, 2 and 4 I/O queues: connect, a pattern written, read
# back and compared (and found on the target's RAM disk), fio verify,
# disconnect. Then 20 disconnect/reconnect cycles, each checking that the
# namespace appears and that one read matches the RAM disk. Then the
# unload: disconnect, nvmet teardown, rdma link del, rmmod vhca mrcore,
# with mrcore's accounting back to idle and no leak in the kernel log.
#
# Every step that can block in the kernel runs with a deadline (run_for),
# and the host uses short nvme_core timeouts and ctrl_loss_tmo, so a broken
# data path fails a connect within about 15 s instead of hanging the VM.
# Nothing here depends on swiotlb; the same script runs with swiotlb=force.
. ./lib.sh
. ./nvmeof.sh

T=nvmeof-vhca
ADDR=10.78.0.1
DEV=vhca0
NETDEV=nvd0
NQN=nqn.2026-11.org.mrcore:vhca0
NVMET_PORT=2
# After a connection loss: one reconnect a second for 5 s, and I/O fails at
# once meanwhile rather than waiting for the controller to come back.
NVME_OPTS=ctrl_loss_tmo=5,reconnect_delay=1,fast_io_fail_tmo=0
CYCLES=20
old_tmo=

klog_mark $T
grep -q swiotlb=force /proc/cmdline && echo "# $T: swiotlb=force"

# skip_rest WHY: a prerequisite is missing: report it, undo, stop.
skip_rest() {
	t_fail "$T: prerequisite" "$1"
	nvme_host_down >/dev/null
	nvmet_down >/dev/null
	run_for 30 rdma_link_down $DEV $NETDEV >/dev/null
	run_for 30 unload_mrcore >/dev/null
	[ -n "$old_tmo" ] && nvme_timeouts $old_tmo >/dev/null
	exit 4
}

modules_up() { nvmeof_modules && load_mrcore; }
t_gate "$T: NVMe-oF, mrcore and vhca modules load" modules_up || skip_rest "modules"
t_gate "$T: rdma link add $DEV netdev $NETDEV, GID of $ADDR" \
	rdma_link_up vhca $DEV $NETDEV $ADDR || skip_rest "$DEV"
vhca_baseline $DEV
# Admin commands (the fabrics connect among them) 5 s, I/O 10 s.
old_tmo=$(nvme_timeouts 5 10)
t_gate "$T: nvmet-rdma port on $ADDR" nvmet_up $ADDR || skip_rest "nvmet port"

ncpu=$(grep -c ^processor /proc/cpuinfo)
for q in 1 2 4; do
	if ! out=$(nvme_host_up $ADDR $q); then
		t_fail "$T: connect, nr_io_queues=$q" "$(echo "$out" | tail -1)"
		continue
	fi
	dev=$out
	t_ok "$T: connect, nr_io_queues=$q ($dev)"
	# nvme-rdma caps the queues at the online CPUs and the device's
	# completion vectors.
	want=$q
	[ $want -gt $ncpu ] && want=$ncpu
	n=$(nvme_queues)
	echo "# $T: nr_io_queues=$q: ${n:-no} I/O queues"
	t_eval "$T: nr_io_queues=$q: 1..$want I/O queues" \
		'[ "${n:-0}" -ge 1 ] && [ "$n" -le $want ]'
	t_check "$T: nr_io_queues=$q: 16 MiB pattern written, read back, identical" \
		run_for 60 pattern_rw "$dev" 16
	t_check "$T: nr_io_queues=$q: the pattern is on the target's RAM disk" \
		run_for 30 sh -c "dd if=$NVMET_DEV of=/tmp/tgt bs=1M count=16 iflag=direct 2>/dev/null &&
				  cmp /tmp/pat /tmp/tgt"
	t_check "$T: nr_io_queues=$q: fio randwrite 4k with crc32c verify" \
		run_for 120 fio_verify "$dev" 8M
	t_check "$T: nr_io_queues=$q: disconnect" nvme_host_down
done

# reconnect_once I: connect, find the namespace, compare 1 MiB at I MiB
# with the RAM disk, disconnect. Prints why it failed.
reconnect_once() {
	local dev
	dev=$(nvme_host_up $ADDR 2) || { echo "connect: $dev"; return 1; }
	run_for 30 same_range "$dev" "$NVMET_DEV" 1 "$1" >/dev/null ||
		{ echo "read at ${1} MiB differs from the RAM disk"; nvme_host_down; return 1; }
	nvme_host_down > /dev/null || { echo "disconnect"; return 1; }
}

i=1
why=
while [ $i -le $CYCLES ]; do
	why=$(reconnect_once $i) || break
	i=$((i + 1))
done
if [ $i -gt $CYCLES ]; then
	t_ok "$T: $CYCLES disconnect/reconnect cycles, one read compared each"
else
	t_fail "$T: $CYCLES disconnect/reconnect cycles, one read compared each" \
		"cycle $i: $(echo "$why" | tail -1)"
fi

# The unload.
t_check "$T: no controller left" nvme_host_down
t_check "$T: $DEV idle: no MR, PD, key or translation left behind" \
	vhca_idle $DEV
nvmet_down
t_check "$T: rdma link del $DEV" run_for 30 rdma_link_down $DEV $NETDEV
nvme_timeouts $old_tmo > /dev/null
t_check "$T: rmmod vhca mrcore" run_for 30 unload_mrcore
t_check "$T: no leak or warning in the kernel log" klog_clean $T
