#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# NVMe-oF over vhca with per-I/O fast registration (ANCHORS.md item 28,
# issue 5): nvmet-rdma target and nvme-rdma host in this VM over vhca0.
#
# 1. register_always=Y: nvme-rdma reloaded with it (6.1's default; 0444,
#    so a reload is the only way to be sure of it). The host's PD then has
#    no unsafe global rkey, and every data transfer but inline writes goes
#    through an FRWR MR of the queue's ib_mr_pool (nvme_rdma_map_sg_fr:
#    ib_mr_pool_get, ib_map_mr_sg, REG_MR chained before the command,
#    LOCAL_INV or remote invalidation when it completes). Connect, a 16 MiB
#    pattern written, read back and found on the target's RAM disk, fio
#    verify, fio randread at QD 32, disconnect.
# 2. rdma_rw force_mr=1: ib_core's force_mr (permission 0: not in sysfs,
#    settable only when ib_core loads) makes nvmet-rdma's rdma_rw register
#    an MR per RDMA READ/WRITE even on RoCE. The whole RDMA stack is
#    unloaded and ib_core loaded again with force_mr=1; where ib_core is
#    built in, ib_core.force_mr=1 must be on the kernel command line, or
#    the part is skipped. The same I/O as in part 1; that force_mr took
#    effect shows in mrcore's count of live fast-reg MRs while connected:
#    the target's QPs now have rdma_rw MR pools too.
# In each part, 256 direct reads of 64 KiB must cost at least 256 REG_MRs
# (512 with force_mr: the host's and the target's), counted by mrcore's
# fr_regs stat. After each part: disconnect, teardown, mrcore's accounting
# back to idle, mrcore and vhca unloaded, nothing in the kernel log. In
# the end ib_core is loaded again without force_mr, so later scripts see
# the stock stack.
#
# Every blocking step runs with a deadline (run_for), and the host uses
# short nvme_core timeouts and ctrl_loss_tmo: a broken data path fails a
# check instead of hanging the VM.
. ./lib.sh
. ./nvmeof.sh

T=nvmeof-frwr
ADDR=10.74.0.1
DEV=vhca0
NETDEV=nfd0
# Ports and subsystems of their own, per part: a lockdep kernel leaves
# them configured (nvmet_down), so no other script or part may reuse them.
NQN=nqn.2026-11.org.mrcore:frwr-always
NVMET_PORT=6
NVME_OPTS=ctrl_loss_tmo=5,reconnect_delay=1,fast_io_fail_tmo=0
old_tmo=

klog_mark $T

# mod_tree_down MOD: unload MOD and, first, every module that holds it
# (each rmmod retried until the module's users let go: run it with a
# deadline of a few times $PROGRESS_TMO).
mod_tree_down() {
	local h
	[ -d "/sys/module/$1" ] || return 0
	for h in "/sys/module/$1/holders/"*; do
		[ -e "$h" ] || continue
		mod_tree_down "${h##*/}" || return 1
	done
	[ -e "/sys/module/$1/initstate" ] || return 0	# built in
	wait_for $PROGRESS_TMO rmmod "$1" || { echo "rmmod $1 failed"; return 1; }
}

# stack_up: the NVMe-oF modules, mrcore and vhca, vhca0 with $ADDR's GID,
# the nvmet port. Prints why it failed.
stack_up() {
	nvmeof_modules || { echo "NVMe-oF modules"; return 1; }
	load_mrcore || { echo "mrcore and vhca"; return 1; }
	# (It waits up to $PROGRESS_TMO s for the GID.)
	run_for $((PROGRESS_TMO + 30)) rdma_link_up vhca $DEV $NETDEV $ADDR || return 1
	vhca_baseline $DEV
	nvmet_up $ADDR
}

# stack_down: after a failed stack_up, everything of it that is up.
stack_down() {
	nvme_host_down >/dev/null
	nvmet_down >/dev/null
	run_for 60 rdma_link_down $DEV $NETDEV >/dev/null
	run_for 60 unload_mrcore >/dev/null 2>&1
}

# fast_reg_mrs: mrcore's count of live fast-reg MRs on $DEV.
fast_reg_mrs() { mrc_stat $DEV mrs_fast_reg; }

# fr_regs: REG_MR work requests $DEV has executed.
fr_regs() { mrc_stat $DEV fr_regs; }

# READS direct reads of 64 KiB each: the count of read commands is known
# without the block layer's statistics (6.1's multipath head keeps none).
READS=256

# ctrl_live: $NQN's controller is live and the host logged no error
# recovery or reconnect since the mark $T (the connection never dropped):
# nvme-rdma's own words for those (6.1 host/rdma.c). Connect itself logs
# "I/O fail on reconnect controller after 0 sec" (fast_io_fail_tmo=0),
# which is not one of them.
ctrl_live() {
	local c bad
	c=$(nvme_ctrls | head -1)
	[ -n "$c" ] || { echo "no controller"; return 1; }
	grep -qx live "$c/state" || { echo "state $(cat "$c/state")"; return 1; }
	bad=$(klog_since $T | grep -E 'starting error recovery|Reconnecting in|reconnect attempt|Successfully reconnected')
	[ -z "$bad" ] || { echo "$bad" | head -1; return 1; }
}

# io_part NAME MIN: connect with 1 I/O queue, data checks, the fast-reg
# MR count while connected in FR_CONNECTED, disconnect; checks named NAME.
# Each of $READS direct reads must have cost at least MIN REG_MRs on $DEV
# (the host's per-I/O registration, and with force_mr the target's too).
io_part() {
	local t="$T: $1" min=$2 dev regs0 regs
	FR_CONNECTED=
	if ! dev=$(nvme_host_up $ADDR 1); then
		t_fail "$t: connect" "$(echo "$dev" | tail -1)"
		return 1
	fi
	t_ok "$t: connect ($dev)"
	FR_CONNECTED=$(fast_reg_mrs)
	echo "# $t: $FR_CONNECTED fast-reg MRs on $DEV while connected"
	t_check "$t: 16 MiB pattern written, read back, identical" \
		run_for 60 pattern_rw "$dev" 16
	t_check "$t: the pattern is on the target's RAM disk" \
		run_for 60 sh -c "dd if=$NVMET_DEV of=/tmp/tgt bs=1M count=16 iflag=direct 2>/dev/null &&
				  cmp /tmp/pat /tmp/tgt"
	t_check "$t: fio randwrite 4k with crc32c verify" \
		run_for 120 fio_verify "$dev" 8M
	t_check "$t: fio randread 4k and 128k, QD 32, no I/O error" \
		run_for 120 fio --thread --name=rr --filename="$dev" --direct=1 \
			--ioengine=libaio --rw=randread --bsrange=4k-128k \
			--iodepth=32 --size=64M --runtime=10 --time_based \
			--output=/dev/null
	regs0=$(fr_regs)
	t_check "$t: $READS direct reads of 64 KiB" \
		run_for 60 dd if="$dev" of=/dev/null bs=64k count=$READS iflag=direct
	regs=$(($(fr_regs) - regs0))
	t_eval "$t: REG_MR per I/O: $regs REG_MRs for $READS reads (at least $min each)" \
		'[ "$regs" -ge $((min * READS)) ]'
	t_check "$t: the controller is still live, no error recovery logged" \
		ctrl_live
	t_check "$t: disconnect" nvme_host_down
}

# after_part NAME: teardown; mrcore's accounting idle before the device
# goes; mrcore and vhca unloaded (the next part starts from nothing); a
# clean kernel log.
after_part() {
	nvme_host_down >/dev/null
	nvmet_down >/dev/null
	t_check "$T: $1: mrcore's accounting of $DEV back to idle" vhca_idle $DEV
	run_for 60 rdma_link_down $DEV $NETDEV >/dev/null
	t_check "$T: $1: unload mrcore and vhca" run_for 60 unload_mrcore
	t_check "$T: $1: nothing leaked or warned in the kernel log" klog_clean $T
	t_check "$T: $1: no hung task" klog_no_hang $T
}

# nvme_rdma_reload PARAM=VALUE: nvme-rdma loaded again with PARAM (no
# controller may be left); prints why it failed.
nvme_rdma_reload() {
	if [ -d /sys/module/nvme_rdma ]; then
		wait_for $PROGRESS_TMO rmmod nvme_rdma || { echo "rmmod nvme_rdma failed"; return 1; }
	fi
	modprobe nvme-rdma "$1"
}

if ! out=$(nvmeof_modules 2>&1); then
	t_fail "$T: prerequisite" "NVMe-oF modules: $(echo "$out" | tail -1)"
	exit 4
fi
old_tmo=$(nvme_timeouts 5 10)

# --- 1. register_always=Y -------------------------------------------------
fr_plain=
if t_gate "$T: nvme-rdma reloaded with register_always=Y" 	  nvme_rdma_reload register_always=Y &&
   t_gate "$T: register_always reads Y" 	  grep -qx Y /sys/module/nvme_rdma/parameters/register_always; then
	if out=$(stack_up 2>&1); then
		t_ok "$T: register_always: $DEV and the nvmet port on $ADDR"
		io_part register_always 1
		fr_plain=$FR_CONNECTED
		after_part register_always
	else
		t_fail "$T: register_always: $DEV and the nvmet port on $ADDR" \
			"$(echo "$out" | tail -1)"
		stack_down
	fi
fi

# --- 2. rdma_rw force_mr=1 ------------------------------------------------
NQN=nqn.2026-11.org.mrcore:frwr-force
NVMET_PORT=7
klog_mark $T
force=1
if [ -e /sys/module/ib_core/initstate ]; then
	t_gate "$T: force_mr: the RDMA stack unloaded" \
		run_for 180 mod_tree_down ib_core &&
	t_gate "$T: force_mr: ib_core loaded with force_mr=1" \
		modprobe ib_core force_mr=1 &&
	force=0
elif grep -qw 'ib_core.force_mr=1' /proc/cmdline; then
	echo "# $T: ib_core is built in, booted with ib_core.force_mr=1"
	force=0
else
	t_ok "$T: force_mr # SKIP ib_core is built in; boot with ib_core.force_mr=1"
fi
if [ $force = 0 ]; then
	if out=$(stack_up 2>&1); then
		t_ok "$T: force_mr: $DEV and the nvmet port on $ADDR"
		io_part force_mr 2
		t_eval "$T: force_mr: the target's QPs hold rdma_rw MRs ($FR_CONNECTED fast-reg MRs while connected, ${fr_plain:-?} without force_mr)" \
			'[ -n "$fr_plain" ] && [ "${FR_CONNECTED:-0}" -gt "$fr_plain" ]'
		after_part force_mr
	else
		t_fail "$T: force_mr: $DEV and the nvmet port on $ADDR" \
			"$(echo "$out" | tail -1)"
		stack_down
	fi
	# The stock stack again for the scripts after this one.
	if [ -e /sys/module/ib_core/initstate ]; then
		if out=$(run_for 180 mod_tree_down ib_core 2>&1) &&
		   out=$(modprobe ib_core 2>&1); then
			t_ok "$T: ib_core loaded again without force_mr"
		else
			t_fail "$T: ib_core loaded again without force_mr" \
				"$(echo "$out" | tail -1)"
		fi
	fi
fi

nvme_timeouts $old_tmo >/dev/null
modprobe nvme-rdma 2>/dev/null
