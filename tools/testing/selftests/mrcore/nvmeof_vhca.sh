#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# NVMe-oF over vhca: nvmet-rdma target and nvme-rdma host in this VM over
# one vhca device on a dummy netdev (the connection loops back through the
# vhca fabric). For 1, 2 and 4 I/O queues: connect, a pattern written, read
# back and compared (and found on the target's RAM disk), fio verify,
# disconnect. Then 20 disconnect/reconnect cycles, each checking that the
# namespace appears and that one read matches the RAM disk. Then the
# target with shared receive queues (nvmet-rdma use_srq=1), and the host
# on a second device, vhca1, talking to the target on vhca0. Then the
# unload: disconnect, nvmet teardown, rdma link del, rmmod vhca mrcore,
# with mrcore's accounting back to idle and no leak in the kernel log.
#
# Every step that can block in the kernel runs with a deadline (run_for),
# and the host uses short nvme_core timeouts and ctrl_loss_tmo, so a broken
# data path fails a connect (5 s an admin command) instead of hanging the
# VM. The deadlines bound failures only: none is below a minute.
# Nothing here depends on swiotlb; the same script runs with swiotlb=force.
. ./lib.sh
. ./nvmeof.sh

T=nvmeof-vhca
ADDR=10.78.0.1
DEV=vhca0
NETDEV=nvd0
NQN=nqn.2026-11.org.mrcore:vhca0
NVMET_PORT=2
# The two-device case: the host's side on a second device and subnet.
ADDR1=10.79.0.1
DEV1=vhca1
NETDEV1=nvd1
DDEBUG=/sys/kernel/debug/dynamic_debug/control
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
	run_for 60 rdma_link_down $DEV $NETDEV >/dev/null
	run_for 60 unload_mrcore >/dev/null
	[ -n "$old_tmo" ] && nvme_timeouts $old_tmo >/dev/null
	exit 4
}

# vhca's post_bytes at 4096 (off by default): nvme-rdma's and
# nvmet-rdma's posts run what they may in their post_send.
modules_up() { nvmeof_modules && load_mrcore post_bytes=4096; }
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
		run_for 60 sh -c "dd if=$NVMET_DEV of=/tmp/tgt bs=1M count=16 iflag=direct 2>/dev/null &&
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
	run_for 60 same_range "$dev" "$NVMET_DEV" 1 "$1" >/dev/null ||
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

t_check "$T: no controller left" nvme_host_down

# case_srq: nvmet-rdma reloaded with use_srq=1, so that the target's
# queues receive through shared receive queues on $DEV (one per completion
# vector); connect, a pattern compared, disconnect, use_srq=0 restored and
# the port back. "rdma res show srq" lists each SRQ with the QPs attached
# to it (lqpn): that is how the SRQ's use is verified.
case_srq() {
	local t="$T: srq" dev srqs
	if [ -e /proc/lockdep ]; then
		# nvmet_down leaves the port, and so nvmet-rdma, in place there.
		t_ok "$t: nvmet-rdma with use_srq=1 # SKIP lockdep kernel: the nvmet port stays"
		return
	fi
	nvmet_down
	t_gate "$t: nvmet-rdma reloaded with use_srq=1" \
		nvmet_rdma_reload use_srq=1 || return
	t_eval "$t: use_srq reads Y" \
		'[ "$(cat /sys/module/nvmet_rdma/parameters/use_srq)" = Y ]'
	if t_gate "$t: nvmet-rdma port on $ADDR" nvmet_up $ADDR; then
		if dev=$(nvme_host_up $ADDR 2); then
			t_ok "$t: connect ($dev)"
			t_check "$t: 4 MiB pattern written, read back, identical" \
				run_for 60 pattern_rw "$dev" 4
			t_check "$t: the pattern is on the target's RAM disk" \
				run_for 60 same_range "$dev" "$NVMET_DEV" 4 0
			srqs=$(rdma_res srq $DEV)
			echo "$srqs" | sed "s/^/# $t: rdma res show srq: /"
			rdma_res cm_id $DEV | grep nvmet_rdma |
				sed "s/^/# $t: rdma res show cm_id: /"
			t_eval "$t: the target's QPs are attached to SRQs on $DEV" \
				'echo "$srqs" | grep nvmet_rdma | grep -q "lqpn [0-9]"'
			t_check "$t: disconnect" nvme_host_down
		else
			t_fail "$t: connect" "$(echo "$dev" | tail -1)"
		fi
		t_eval "$t: nvmet-rdma did not fall back to receive queues" \
			'! klog_since $T | grep -q "SRQ requested but not supported"'
		nvmet_down
	fi
	t_check "$t: nvmet-rdma reloaded with use_srq=0" \
		nvmet_rdma_reload use_srq=0
	t_eval "$t: use_srq reads N" \
		'[ "$(cat /sys/module/nvmet_rdma/parameters/use_srq)" = N ]'
	t_check "$t: nvmet-rdma port on $ADDR again" nvmet_up $ADDR
}

# case_two_devs: a second device, vhca1 on its own dummy netdev in another
# subnet; the host connects to the target's address on vhca0 from vhca1's
# address (host_traddr), so the host's queues are vhca1's, the target's
# vhca0's, and the fabric carries every message between the two devices.
# Both addresses are this kernel's own, so wire_up first makes each reach
# the other through its netdev, as two hosts on a wire would (without it
# the target's RDMA CM rejects the connect: the host logs "RDMA CM:
# REJECTED: consumer defined" and fails it with -ECONNRESET).
case_two_devs() {
	local t="$T: two devices" dev opts=$NVME_OPTS n1 n0 h0
	if ! t_gate "$t: rdma link add $DEV1 netdev $NETDEV1, GID of $ADDR1" \
		rdma_link_up vhca $DEV1 $NETDEV1 $ADDR1; then
		run_for 60 rdma_link_down $DEV1 $NETDEV1 >/dev/null
		return
	fi
	vhca_baseline $DEV1
	t_gate "$t: routes between $NETDEV and $NETDEV1 as if wired" \
		wire_up $NETDEV $ADDR $NETDEV1 $ADDR1
	NVME_OPTS="$opts,host_traddr=$ADDR1"
	# The RDMA CM's own account, shown if the connect fails.
	klog_mark "$t"
	echo "module rdma_cm +p" > $DDEBUG 2>/dev/null
	if dev=$(nvme_host_up $ADDR 2); then
		t_ok "$t: connect to $ADDR from $ADDR1 ($dev)"
		# ib_core names a QP after rdma_cm, which creates it; the
		# cm_id carries the ULP's name and its QP's number.
		{ rdma_res cm_id $DEV1; rdma_res cm_id $DEV; rdma_res qp $DEV1
		  rdma_res qp $DEV | grep -v GSI; } |
			sed "s/^/# $t: /"
		n1=$(rdma_res cm_id $DEV1 | grep nvme_rdma | grep -c "lqpn [0-9]")
		h0=$(rdma_res cm_id $DEV | grep nvme_rdma | grep -c "lqpn [0-9]")
		n0=$(rdma_res cm_id $DEV | grep nvmet_rdma | grep -c "lqpn [0-9]")
		echo "# $t: connected nvme_rdma cm_ids: $n1 on $DEV1, $h0 on $DEV; nvmet_rdma: $n0 on $DEV"
		t_eval "$t: the host's queues are on $DEV1, none on $DEV" \
			'[ "$n1" -ge 1 ] && [ "$h0" = 0 ]'
		t_eval "$t: the target's queues are on $DEV" '[ "$n0" -ge 1 ]'
		t_eval "$t: $DEV1 has RC QPs, as many as the host's queues" \
			'[ "$(rdma_res qp $DEV1 | grep -c "type RC")" = "$n1" ]'
		t_check "$t: 4 MiB pattern written, read back, identical" \
			run_for 60 pattern_rw "$dev" 4
		t_check "$t: the pattern is on the target's RAM disk" \
			run_for 60 same_range "$dev" "$NVMET_DEV" 4 0
		t_check "$t: disconnect" nvme_host_down
	else
		t_fail "$t: connect to $ADDR from $ADDR1" "$(echo "$dev" | tail -1)"
		klog_since "$t" | grep -E 'rdma|RDMA|nvme|vhca' | tail -12 |
			sed "s/^/# $t: log: /"
		nvme_host_down >/dev/null
	fi
	echo "module rdma_cm -p" > $DDEBUG 2>/dev/null
	NVME_OPTS=$opts
	t_check "$t: routes removed" wire_down $NETDEV $ADDR $NETDEV1 $ADDR1
	t_check "$t: $DEV1 idle: no MR, PD, key or translation left behind" \
		vhca_idle $DEV1
	t_check "$t: rdma link del $DEV1" run_for 60 rdma_link_down $DEV1 $NETDEV1
}

case_srq
case_two_devs

# The unload.
t_check "$T: $DEV idle: no MR, PD, key or translation left behind" \
	vhca_idle $DEV
nvmet_down
t_check "$T: rdma link del $DEV" run_for 60 rdma_link_down $DEV $NETDEV
nvme_timeouts $old_tmo > /dev/null
t_check "$T: rmmod vhca mrcore" run_for 60 unload_mrcore
t_check "$T: no leak or warning in the kernel log" klog_clean $T
