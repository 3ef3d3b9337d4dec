#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Device removal under load (ANCHORS.md item 38, blktests nvme/040 and
# srp/016 style): the vhca device goes away while storage ULPs are
# connected to it and fio is reading through them.
#
#   linkdel-nvme  nvme-rdma host and nvmet-rdma target over vhca0, fio
#                 randread seen running (reads of it completed, by fio's
#                 own count), then "rdma link del vhca0";
#   rmmod-nvme    the same, then "rmmod vhca" (mrcore_test not loaded):
#                 module unload unregisters the device under the ULPs;
#   linkdel-iser  open-iscsi logged in over iSER to LIO (isert), fio
#                 randread seen running, then "rdma link del vhca0".
#
# Each case checks that the removal returns within its deadline, that the
# ULP reports it (the nvme controller and its block device are deleted,
# or the iSCSI session fails and its I/O errors out) and that fio exits
# with an I/O error. Then the recovery: vhca0 created again on the same
# netdev, the nvmet port listening again, a fresh NVMe-oF connect with a
# pattern written, read back and found on the target's RAM disk, the
# disconnect leaving vhca0 idle. Then rdma link del, rmmod vhca mrcore,
# and no leak, warning or hung task in the kernel log since the case began.
#
# Every step that can block in the kernel runs with a deadline (run_for,
# fio_bg_wait), so a wedged removal fails checks instead of hanging the VM;
# the hung-task detector is set to 30 s for the run so that a task left
# stuck is reported in the log. Each case exits its modules, so a failed
# case leaves the next a clean start as far as the kernel allows.
. ./lib.sh
. ./nvmeof.sh
. ./iser.sh

ADDR=10.81.0.1
DEV=vhca0
NETDEV=rmd0
NQN=nqn.2026-11.org.mrcore:removal
NVMET_PORT=5
# After a connection loss: fail I/O at once, give up reconnecting after 5 s.
NVME_OPTS=ctrl_loss_tmo=5,reconnect_delay=1,fast_io_fail_tmo=0
# rdma link del and rmmod vhca with ULPs connected: ib_core waits for every
# client to let go of the device (nvme-rdma deletes its controllers, the
# RDMA CM's users destroy their IDs, isert waits for LIO's connection).
REMOVE_TMO=60
# fio after the removal: nvme fails I/O at once; iSCSI after the session's
# replacement_timeout (5 s, initramfs.sh's iscsid.conf).
FIO_TMO=60
HUNG=/proc/sys/kernel/hung_task_timeout_secs
old_tmo=
old_hung=

grep -q swiotlb=force /proc/cmdline && echo "# removal-vhca: swiotlb=force"

# mods_up: NVMe-oF, iSER, mrcore and vhca modules, whichever of ours are
# not loaded yet (an rmmod case leaves mrcore loaded).
mods_up() {
	nvmeof_modules && iser_modules || return 1
	if [ ! -e /sys/module/mrcore ]; then
		load_mrcore
	elif [ ! -e /sys/module/vhca ]; then
		load_vhca
	fi
}

# dev_add: vhca0 on $NETDEV (made by the first call) with $ADDR's GID in
# its table, and mrcore's baseline for vhca_idle.
dev_add() {
	rdma_link_up vhca $DEV $NETDEV $ADDR || return 1
	vhca_baseline $DEV
}

# nvmet_listen: nvmet-rdma listening on $ADDR:4420: the subsystem and port
# made by the first call; later calls follow a removal of the device the
# listener was bound to, and relink the port.
nvmet_listen() {
	if [ -d $CFS/ports/$NVMET_PORT ]; then
		nvmet_port_relink
	else
		nvmet_up $ADDR
	fi
}

# unload_all: unload_mrcore, also when vhca is gone already.
unload_all() {
	if [ -e /sys/module/vhca ]; then
		unload_mrcore
	else
		builtin_module mrcore || rmmod mrcore
	fi
}

no_nvme_ctrl() { [ -z "$(nvme_ctrls)" ]; }
no_ns_dev() { ! nvme_ns_dev > /dev/null; }

# dev_gone: vhca0 is gone from ib_core, mrcore and vhca.
dev_gone() {
	no_rdma_dev $DEV || { echo "rdma dev show still lists $DEV"; return 1; }
	[ ! -e /sys/class/infiniband/$DEV ] || { echo "$DEV still in sysfs"; return 1; }
	[ ! -e /sys/kernel/debug/mrcore/$DEV ] || { echo "mrcore still has $DEV"; return 1; }
	[ ! -e /sys/kernel/debug/vhca/$DEV ] || { echo "vhca still has $DEV"; return 1; }
}

# check_fio_failed T: fio_bg's fio exits within $FIO_TMO s, with an error.
check_fio_failed() {
	local rc
	if ! rc=$(fio_bg_wait $FIO_TMO); then
		t_fail "$1: fio exits within ${FIO_TMO}s" "$rc"
		return
	fi
	echo "# $1: fio exit status $rc: $(grep -m1 -i 'error' /tmp/fio_bg.out)"
	if [ "$rc" != 0 ]; then
		t_ok "$1: fio exits within ${FIO_TMO}s with an I/O error"
	else
		t_fail "$1: fio exits within ${FIO_TMO}s with an I/O error" \
			"fio succeeded: the removal went unnoticed"
	fi
}

# recover T: vhca0 again (vhca loaded again after an rmmod), the nvmet
# port listening again, a fresh connect with one pattern compared on the
# host and on the RAM disk, the disconnect, vhca0 idle after it.
recover() {
	local T="$1: recovery" dev
	t_gate "$T: modules load again" mods_up || return 1
	t_gate "$T: rdma link add $DEV netdev $NETDEV again" dev_add || return 1
	t_gate "$T: nvmet-rdma listens on $ADDR again" nvmet_listen || return 1
	if ! dev=$(nvme_host_up $ADDR 2); then
		t_fail "$T: fresh NVMe-oF connect" "$(echo "$dev" | tail -1)"
		nvme_host_down > /dev/null
		return 1
	fi
	t_ok "$T: fresh NVMe-oF connect ($dev)"
	t_check "$T: 4 MiB pattern written, read back, identical" \
		run_for 60 pattern_rw "$dev" 4
	t_check "$T: the pattern is on the target's RAM disk" \
		run_for 60 sh -c "dd if=$NVMET_DEV of=/tmp/tgt bs=1M count=4 iflag=direct 2>/dev/null &&
				  cmp /tmp/pat /tmp/tgt"
	t_check "$T: disconnect" nvme_host_down
	t_check "$T: $DEV idle: no MR, PD, key or translation left behind" \
		vhca_idle $DEV
}

# finish T: whatever a failed step left, then rdma link del, the unload and
# the kernel log since the case began.
finish() {
	local T=$1
	[ -n "$(nvme_ctrls)" ] && nvme_host_down > /dev/null
	if [ -e /sys/class/infiniband/$DEV ]; then
		t_check "$T: rdma link del $DEV" run_for 60 rdma link del $DEV
	fi
	t_check "$T: rmmod vhca mrcore" run_for 60 unload_all
	t_check "$T: no leak or warning in the kernel log" klog_clean "$T"
	t_check "$T: no hung task in the kernel log" klog_no_hang "$T"
}

# case_nvme HOW: NVMe-oF connected with fio reading, then the removal:
# HOW is linkdel (rdma link del vhca0) or rmmod (rmmod vhca).
case_nvme() {
	local how=$1 T="removal-vhca: $1-nvme" dev ctrl st
	klog_mark "$T"
	t_gate "$T: NVMe-oF, mrcore and vhca modules load" mods_up ||
		{ finish "$T"; return; }
	t_gate "$T: rdma link add $DEV netdev $NETDEV, GID of $ADDR" dev_add ||
		{ finish "$T"; return; }
	t_gate "$T: nvmet-rdma listens on $ADDR" nvmet_listen ||
		{ finish "$T"; return; }
	if ! dev=$(nvme_host_up $ADDR 2); then
		t_fail "$T: connect" "$(echo "$dev" | tail -1)"
		finish "$T"
		return
	fi
	t_ok "$T: connect ($dev)"
	ctrl=$(nvme_ctrls | head -1)
	fio_bg "$dev"
	# The removal must meet I/O in flight: wait until it is seen.
	t_check "$T: fio randread 4k QD 16 seen running on $dev" fio_bg_running

	if [ $how = rmmod ]; then
		# A module holding vhca's symbols would make rmmod fail.
		[ -e /sys/module/mrcore_test ] && rmmod mrcore_test
		t_check "$T: rmmod vhca returns within ${REMOVE_TMO}s" \
			run_for $REMOVE_TMO rmmod vhca
		t_eval "$T: vhca module gone" '[ ! -e /sys/module/vhca ]'
	else
		t_check "$T: rdma link del $DEV returns within ${REMOVE_TMO}s" \
			run_for $REMOVE_TMO rdma link del $DEV
	fi
	st=$(cat "$ctrl/state" 2>/dev/null) || st=gone
	echo "# $T: ${ctrl##*/} after the removal: $st"
	t_check "$T: $DEV gone from ib_core, mrcore and vhca" dev_gone
	t_check "$T: the nvme controller is deleted" \
		wait_for $PROGRESS_TMO no_nvme_ctrl
	t_check "$T: the namespace's block device is gone" \
		wait_for $PROGRESS_TMO no_ns_dev
	check_fio_failed "$T"

	recover "$T"
	finish "$T"
}

# case_iser: logged in over iSER with fio reading, then rdma link del.
case_iser() {
	local T="removal-vhca: linkdel-iser" disk st
	klog_mark "$T"
	t_gate "$T: iSER, LIO, mrcore and vhca modules load" mods_up ||
		{ finish "$T"; return; }
	t_gate "$T: rdma link add $DEV netdev $NETDEV, GID of $ADDR" dev_add ||
		{ finish "$T"; return; }
	t_check "$T: LIO target, iSER portal $ADDR:3260" lio_up $ADDR
	t_check "$T: iscsid runs" iscsid_up
	if ! t_gate "$T: SendTargets discovery over iSER" \
		run_for 90 iser_discover $ADDR; then
		iser_diag
	elif ! disk=$(iser_login $ADDR); then
		t_fail "$T: login over iSER" "$(echo "$disk" | tail -1)"
		iser_diag
	else
		t_ok "$T: login over iSER ($disk)"
		fio_bg "$disk"
		t_check "$T: fio randread 4k QD 16 seen running on $disk" \
			fio_bg_running
		t_check "$T: rdma link del $DEV returns within ${REMOVE_TMO}s" \
			run_for $REMOVE_TMO rdma link del $DEV
		st=$(iser_session_state)
		echo "# $T: session state after the removal: ${st:-none}"
		t_check "$T: $DEV gone from ib_core, mrcore and vhca" dev_gone
		t_check "$T: the iSCSI session leaves LOGGED_IN" \
			wait_for $PROGRESS_TMO sh -c "! grep -qx LOGGED_IN /sys/class/iscsi_session/*/state"
		check_fio_failed "$T"
		t_check "$T: logout of the failed session" iser_logout $ADDR
		t_check "$T: the SCSI disk is gone" \
			wait_for $PROGRESS_TMO sh -c "[ ! -b $disk ]"
	fi
	[ -n "$(iser_sessions)" ] && iser_logout $ADDR > /dev/null
	iser_forget $ADDR > /dev/null 2>&1
	t_check "$T: iscsid stops" iscsid_down
	t_check "$T: LIO configuration removed" run_for 60 lio_down $ADDR

	recover "$T"
	finish "$T"
}

# The whole run: short nvme_core timeouts (admin 5 s, I/O 10 s) and a
# 30 s hung-task timeout, both restored at the end.
if [ -w $HUNG ]; then
	old_hung=$(cat $HUNG)
	echo 30 > $HUNG
fi
nvmeof_modules && old_tmo=$(nvme_timeouts 5 10)

case_nvme linkdel
case_nvme rmmod
case_iser

nvmet_down
ip link del $NETDEV 2>/dev/null
[ -n "$old_tmo" ] && nvme_timeouts $old_tmo > /dev/null
[ -n "$old_hung" ] && echo "$old_hung" > $HUNG
exit 0
