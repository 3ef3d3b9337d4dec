#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The device's keys run out under NVMe-oF I/O (ANCHORS.md item 28, last
# clause; issue 5): the I/O degrades gracefully, the connection stays.
#
# 6.1's nvme-rdma sizes each queue's FRWR ib_mr_pool to the queue depth,
# so its own pool never runs dry; what can run out is the device's mkey
# table. vhca is loaded with max_mkeys=$MAX_MKEYS. nvmet-rdma and
# nvme-rdma (register_always=Y: every I/O through an FRWR MR of the pool)
# connect over vhca0 to subsystem A (port 8), and fio writes with crc32c
# verify in the background. Meanwhile ./mkey_exhaust registers one page
# after another through /dev/mrcore_test on vhca0 until the device says
# no, and holds every key. Then:
#   - its registration failed with exactly -ENOSPC, a retry too; each key
#     it holds reads its page through the device; mrcore counts every
#     index in use (mkeys = max_mkeys - 1; it keeps no count of failed
#     allocations) and one pinned page per key (the failed registration
#     left nothing pinned);
#   - REG_MRs of the running I/O go on (fr_regs grows) and fio ends with
#     its verify OK; a 16 MiB pattern is written and read back identical;
#     the controller stays live with no error recovery or reconnect;
#   - a second connect, to subsystem B on port 9 (its queues must build
#     their own MR pools), fails within its deadline with -ENOSPC and
#     nvme-rdma's MR pool error in the log, and leaves no controller;
#     the key count is unchanged (what the failed pool took was given
#     back).
# The consumer lets go (every key still resolved), the count is back to
# NVMe-oF's; the second connect now succeeds and its I/O verifies; both
# controllers read the same RAM disk (B exports /dev/ram0 too: nvmet
# opens a namespace's device shared); both disconnect; mrcore's accounting
# back to idle; unload; a clean kernel log.
#
# Every blocking step runs with a deadline (run_for), and the host uses
# short nvme_core timeouts and ctrl_loss_tmo: a broken data path fails a
# check instead of hanging the VM.
. ./lib.sh
. ./nvmeof.sh

T=nvmeof-exhaust
ADDR=10.83.0.1
ADDR2=10.83.0.2
DEV=vhca0
NETDEV=nxd0
MAX_MKEYS=4096
# Ports and subsystems of its own: a lockdep kernel leaves them configured
# (nvmet_down), so no other script may reuse them.
NQN_A=nqn.2026-11.org.mrcore:exhaust-a
NQN_B=nqn.2026-11.org.mrcore:exhaust-b
NVME_OPTS=ctrl_loss_tmo=5,reconnect_delay=1,fast_io_fail_tmo=0
HOG_OUT=/tmp/mkey_exhaust.out
HOG_PID=
FIO_OUT=/tmp/exhaust_fio.out
FIO_RC=/tmp/exhaust_fio.rc
FIO_PID=

use_a() { NQN=$NQN_A; NVMET_PORT=8; }
use_b() { NQN=$NQN_B; NVMET_PORT=9; }

klog_mark $T

keys() { mrc_stat $DEV mkeys; }

# hog_line WORD: the fields after WORD of mkey_exhaust's line WORD.
hog_line() {
	sed -n "s/^$1 //p" $HOG_OUT | head -1
}

# hog_stop: the consumer gone, whatever state it is in.
hog_stop() {
	[ -n "$HOG_PID" ] || return 0
	kill "$HOG_PID" 2>/dev/null
	wait_for $PROGRESS_TMO sh -c "! kill -0 $HOG_PID"
	HOG_PID=
}

# fio_start DEV: 8 KiB random writes at QD 16 to 32 MiB at 64 MiB of DEV,
# each of 6 passes read back with crc32c verify, in the background. The
# pattern checks use the first 16 MiB, so the two never overlap. 8 KiB,
# not 4: nvme-rdma sends a write of up to the target's inline data size
# (4 KiB) inline, without a registration: 4 KiB writes would show no
# REG_MR to regs_advance until the first verify pass.
fio_start() {
	rm -f $FIO_RC $FIO_OUT
	( fio --thread --name=exhaust --filename="$1" --direct=1 \
		--ioengine=libaio --rw=randwrite --bs=8k --iodepth=16 \
		--offset=64M --size=32M --loops=6 --verify=crc32c \
		--do_verify=1 --verify_fatal=1 > $FIO_OUT 2>&1
	  echo $? > $FIO_RC ) < /dev/null > /dev/null 2>&1 &
	FIO_PID=$!
}

# fio_done SECS: fio_start's fio exited within SECS with status 0, no job
# error and its verify passed.
fio_done() {
	local rc
	if ! wait_for "$1" test -s $FIO_RC; then
		kill_tree "$FIO_PID"
		echo "fio still running ${1}s later"
		return 1
	fi
	wait "$FIO_PID" 2>/dev/null
	rc=$(cat $FIO_RC)
	[ "$rc" = 0 ] || { echo "fio exit $rc: $(grep -m1 -i -E 'verify|err' $FIO_OUT)"; return 1; }
	! grep -q -E 'err= *[1-9]' $FIO_OUT || { grep -m1 'err=' $FIO_OUT; return 1; }
}

# regs_above N: $DEV has executed more than N REG_MRs, or fio exited.
regs_above() { [ "$(mrc_stat $DEV fr_regs)" -gt "$1" ] || [ -e $FIO_RC ]; }

# regs_advance: $DEV executes REG_MRs for the running fio: fr_regs grows
# while fio runs. Fails, saying why, when fio exits first or no REG_MR
# is executed within $PROGRESS_TMO s.
regs_advance() {
	local a
	a=$(mrc_stat $DEV fr_regs)
	wait_for $PROGRESS_TMO regs_above "$a"
	[ "$(mrc_stat $DEV fr_regs)" -gt "$a" ] ||
		{ echo "no REG_MR in ${PROGRESS_TMO}s (fr_regs $a)"; return 1; }
	[ ! -e $FIO_RC ] ||
		{ echo "fio exited ($(cat $FIO_RC)): $(tail -1 $FIO_OUT)"; return 1; }
}

# ctrl_live: $NQN's controller is live and the host logged no error
# recovery or reconnect since the mark $T (nvme-rdma's words for those,
# 6.1 host/rdma.c).
ctrl_live() {
	local c bad
	c=$(nvme_ctrls | head -1)
	[ -n "$c" ] || { echo "no controller"; return 1; }
	grep -qx live "$c/state" || { echo "state $(cat "$c/state")"; return 1; }
	bad=$(klog_since $T | grep -E 'starting error recovery|Reconnecting in|reconnect attempt|Successfully reconnected')
	[ -z "$bad" ] || { echo "$bad" | head -1; return 1; }
}

# connect_refused: a connect to $NQN at $ADDR2 fails within its deadline
# with -ENOSPC (the write to /dev/nvme-fabrics returns the admin queue's
# cm_error, ib_alloc_mr()'s errno), nvme-rdma says its MR pool could not
# be built, no controller is left. The error goes to $CONNECT_ERR.
CONNECT_ERR=/tmp/exhaust_connect.err
connect_refused() {
	local out
	if out=$(nvme_host_up $ADDR2 1); then
		echo "connected: $out"
		return 1
	fi
	echo "$out" | tail -1 > $CONNECT_ERR
	grep -q 'No space left on device' $CONNECT_ERR ||
		{ echo "not ENOSPC: $(cat $CONNECT_ERR)"; return 1; }
	wait_for $PROGRESS_TMO sh -c "! grep -qx '$NQN' /sys/class/nvme/nvme*/subsysnqn" ||
		{ echo "a controller of $NQN is left"; return 1; }
	klog_since $T | grep -q 'failed to initialize MR pool' ||
		{ echo "no MR pool failure in the log"; return 1; }
}

# stack_up: the NVMe-oF modules, mrcore with vhca of $MAX_MKEYS keys,
# mrcore_test, vhca0 with the GIDs of $ADDR and $ADDR2, nvmet ports 8
# ($NQN_A on $ADDR) and 9 ($NQN_B on $ADDR2). Prints why it failed.
stack_up() {
	local v
	load_mrcore max_mkeys=$MAX_MKEYS || { echo "mrcore and vhca"; return 1; }
	v=$(cat /sys/module/vhca/parameters/max_mkeys)
	[ "$v" = $MAX_MKEYS ] || { echo "vhca max_mkeys is $v (loaded before?)"; return 1; }
	load_mrcore_test || { echo "mrcore_test"; return 1; }
	# (It waits up to $PROGRESS_TMO s for the GID.)
	run_for $((PROGRESS_TMO + 30)) rdma_link_up vhca $DEV $NETDEV $ADDR || return 1
	ip addr add $ADDR2/24 dev $NETDEV || return 1
	wait_for $PROGRESS_TMO sh -c "grep -q $(gid_of_ipv4 $ADDR2) /sys/class/infiniband/$DEV/ports/1/gids/*" ||
		{ echo "no GID of $ADDR2 on $DEV"; return 1; }
	vhca_baseline $DEV
	use_a
	nvmet_up $ADDR || { echo "nvmet port 8"; return 1; }
	use_b
	nvmet_up $ADDR2 || { echo "nvmet port 9"; return 1; }
}

# teardown: everything stack_up and the checks set up, in reverse.
teardown() {
	hog_stop
	[ -z "$FIO_PID" ] || kill_tree "$FIO_PID"
	use_b
	nvme_host_down >/dev/null
	use_a
	nvme_host_down >/dev/null
	use_b
	nvmet_down >/dev/null
	use_a
	nvmet_down >/dev/null
}

# exhausted DEVA: the checks while the consumer holds every free key.
exhausted() {
	local dev="$1" held eno ename again checked k
	# (Not "name": t_eval's own local of that name would hide it.)
	read -r held eno ename <<-EOF
	$(hog_line filled)
	EOF
	t_eval "$T: the consumer took $held keys, then MRCT_REG failed $ename ($eno)" \
		'[ "$ename" = ENOSPC ] && [ "$eno" = 28 ]'
	again=$(hog_line again)
	t_eval "$T: a retry fails the same ($again)" '[ "$again" = "28 ENOSPC" ]'
	checked=$(hog_line checked)
	t_eval "$T: each of its $held keys reads its page through $DEV" \
		'[ -n "$held" ] && [ "$checked" = "$held" ]'
	t_eval "$T: fio verify I/O was running when the table filled" \
		'[ ! -e $FIO_RC ]'
	k=$(keys)
	t_eval "$T: mrcore counts every key in use ($k of $((MAX_MKEYS - 1)))" \
		'[ "$k" = $((MAX_MKEYS - 1)) ]'
	t_eval "$T: one page pinned per key held, none for the failures" \
		'[ $(($(mrc_stat $DEV pages_pinned) - PINNED0)) = "$held" ]'
	t_check "$T: REG_MRs of the running I/O go on (fr_regs grows)" \
		regs_advance
	use_b
	t_check "$T: a second connect ($NQN_B, port 9) fails with ENOSPC, no controller left" \
		connect_refused
	echo "# $T: the second connect: $(cat $CONNECT_ERR 2>/dev/null)"
	t_eval "$T: the failed connect gave back what it took ($(keys) keys)" \
		'[ "$(keys)" = $((MAX_MKEYS - 1)) ]'
	use_a
	t_check "$T: 16 MiB pattern written, read back, identical" \
		run_for 60 pattern_rw "$dev" 16
	t_check "$T: fio randwrite 8k, 6 passes with crc32c verify, no I/O error" \
		fio_done 240
	FIO_PID=
	t_check "$T: the controller is still live, no error recovery logged" \
		ctrl_live
	t_eval "$T: the table stayed full throughout ($(keys) keys)" \
		'[ "$(keys)" = $((MAX_MKEYS - 1)) ]'
}

# released DEVA: the consumer lets go; the second connect then succeeds.
released() {
	local deva="$1" devb held
	held=$(hog_line filled | cut -d' ' -f1)
	kill -USR1 "$HOG_PID"
	t_check "$T: the consumer let go of its keys" \
		wait_for 60 grep -q '^released ' $HOG_OUT
	t_eval "$T: it held all $held to the end (each read its page again)" \
		'[ "$(hog_line still)" = "$held" ] && [ "$(hog_line released)" = "$held" ]'
	wait_for $PROGRESS_TMO sh -c "! kill -0 $HOG_PID"
	wait "$HOG_PID"
	t_eval "$T: the consumer exited 0" "[ $? = 0 ]"
	HOG_PID=
	t_eval "$T: the key count is back to NVMe-oF's ($(keys), $KEYS_A before)" \
		'[ "$(keys)" = "$KEYS_A" ]'
	use_b
	if ! devb=$(nvme_host_up $ADDR2 1); then
		t_fail "$T: the second connect succeeds now" "$(echo "$devb" | tail -1)"
		return 1
	fi
	t_ok "$T: the second connect succeeds now ($devb)"
	echo "# $T: $(($(keys) - KEYS_A)) more keys for the second controller"
	t_check "$T: second controller: fio randwrite 4k with crc32c verify" \
		run_for 120 fio_verify "$devb" 8M
	t_check "$T: both controllers read the same RAM disk bytes" \
		run_for 60 same_range "$deva" "$devb" 16 0
	t_check "$T: second controller live" ctrl_live
	t_check "$T: second controller: disconnect" nvme_host_down
	use_a
	t_check "$T: first controller still live, no error recovery logged" \
		ctrl_live
	t_check "$T: first controller: disconnect" nvme_host_down
}

if ! out=$(nvmeof_modules 2>&1); then
	t_fail "$T: prerequisite" "NVMe-oF modules: $(echo "$out" | tail -1)"
	exit 4
fi
if [ ! -x ./mkey_exhaust ]; then
	t_fail "$T: prerequisite" "no ./mkey_exhaust in $(pwd)"
	exit 4
fi
if [ -d /sys/module/vhca ]; then
	t_fail "$T: prerequisite" "vhca is loaded already (max_mkeys cannot be set)"
	exit 4
fi
# register_always is 0444: a reload is the only way to be sure of it.
if ! grep -qx Y /sys/module/nvme_rdma/parameters/register_always; then
	wait_for $PROGRESS_TMO rmmod nvme_rdma
	modprobe nvme-rdma register_always=Y
fi
t_check "$T: nvme-rdma register_always reads Y" \
	grep -qx Y /sys/module/nvme_rdma/parameters/register_always
old_tmo=$(nvme_timeouts 5 10)

if ! out=$(stack_up 2>&1); then
	t_fail "$T: $DEV ($MAX_MKEYS keys), nvmet ports 8 and 9" "$(echo "$out" | tail -1)"
	teardown
	rmmod mrcore_test 2>/dev/null
	run_for 60 rdma_link_down $DEV $NETDEV >/dev/null
	run_for 60 unload_mrcore >/dev/null 2>&1
	nvme_timeouts $old_tmo >/dev/null
	exit 1
fi
t_ok "$T: $DEV ($MAX_MKEYS keys), nvmet ports 8 and 9"

use_a
base_keys=$(keys)
if deva=$(nvme_host_up $ADDR 1); then
	t_ok "$T: connect $NQN_A ($deva)"
	KEYS_A=$(keys)
	echo "# $T: NVMe-oF holds $((KEYS_A - base_keys)) keys while connected ($(mrc_stat $DEV mrs_fast_reg) fast-reg MRs), $base_keys before"
	t_eval "$T: the connection holds fast-reg MRs of its own" \
		'[ "$KEYS_A" -gt "$base_keys" ] && [ "$(mrc_stat $DEV mrs_fast_reg)" -gt 0 ]'
	PINNED0=$(mrc_stat $DEV pages_pinned)
	fio_start "$deva"
	t_check "$T: fio is doing I/O through FRWR (fr_regs grows)" regs_advance
	./mkey_exhaust $DEV 600 > $HOG_OUT 2>&1 &
	HOG_PID=$!
	if wait_for 120 grep -q -E '^(ready|error)' $HOG_OUT &&
	   grep -q '^ready' $HOG_OUT; then
		t_ok "$T: the consumer filled $DEV's key table"
		exhausted "$deva"
		released "$deva"
	else
		t_fail "$T: the consumer filled $DEV's key table" \
			"$(tail -1 $HOG_OUT 2>/dev/null)"
		hog_stop
		fio_done 240 >/dev/null
		FIO_PID=
	fi
else
	t_fail "$T: connect $NQN_A" "$(echo "$deva" | tail -1)"
fi

teardown
t_check "$T: mrcore's accounting of $DEV back to idle" vhca_idle $DEV
t_check "$T: rmmod mrcore_test" rmmod mrcore_test
run_for 60 rdma_link_down $DEV $NETDEV >/dev/null
t_check "$T: unload mrcore and vhca" run_for 60 unload_mrcore
t_check "$T: nothing leaked or warned in the kernel log" klog_clean $T
t_check "$T: no hung task" klog_no_hang $T
nvme_timeouts $old_tmo >/dev/null
