#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Lifetime of user verbs objects on vhca0 (issue 18, item 3): ./user_life
# (user_life.c, libibverbs and Debian's librxe, run in the host root's
# chroot, user_lib.sh) makes a PD, a CQ, a connected RC pair, pinned,
# explicit ODP and implicit ODP MRs and bound windows of type 1 and 2,
# runs traffic through them, leaves receives posted and says "ready";
# then:
#
#   kill     SIGKILL;
#   exit     exit(0) with every object live;
#   fork     a child of a process with a live MR writes its copy of the
#            buffer and uses the inherited context; the parent's MR still
#            maps the parent's pages (user_life.c says what 6.1 does);
#   linkdel  "rdma link del vhca0" while the process blocks in
#            ibv_get_async_event();
#   rmmod    "rmmod vhca" the same way;
#   rxe      "rmmod rdma_rxe" (vhca has rxe's driver id, so rxe's
#            ib_unregister_driver() takes vhca0 too), without and with a
#            user context open on vhca0.
#
# kill, exit and fork: the objects are seen live (rdma res show, mrcore's
# and vhca's debugfs), then every count is back to the baseline taken
# before the process started. Removals: the command returns within its
# deadline, the process sees IBV_EVENT_DEVICE_FATAL, destroys what it has
# (errors allowed: the context is disassociated) and exits 0, vhca0 is
# gone everywhere; then vhca0 is made again and a new process builds,
# uses and destroys the same objects on it. Each case ends with the
# kernel log since it began: no leak, warning or hung task. The run
# leaves mrcore and vhca unloaded, as the scripts after it expect.
. ./lib.sh
. ./nvmeof.sh
. ./user_lib.sh

DEV=vhca0
NETDEV=ulv0
ADDR=10.92.0.1
# Removals with a user context open: ib_uverbs disassociates it.
REMOVE_TMO=60
HUNG=/proc/sys/kernel/hung_task_timeout_secs
OUT=/tmp/user_life
old_hung=

# dev_add: vhca0 on $NETDEV (made by the first call), with $ADDR's GID.
dev_add() {
	rdma_link_up vhca $DEV $NETDEV $ADDR || return 1
	wait_for $PROGRESS_TMO mrc_has_uverbs $DEV ||
		{ echo "no uverbs node for $DEV"; return 1; }
}

# dev_gone: vhca0 is gone from ib_core, ib_uverbs, mrcore and vhca.
dev_gone() {
	no_rdma_dev $DEV || { echo "rdma dev show still lists $DEV"; return 1; }
	[ ! -e /sys/class/infiniband/$DEV ] || { echo "$DEV still in sysfs"; return 1; }
	! mrc_has_uverbs $DEV ||
		{ echo "$DEV still has a uverbs node"; return 1; }
	[ ! -e /sys/kernel/debug/mrcore/$DEV ] || { echo "mrcore still has $DEV"; return 1; }
	[ ! -e /sys/kernel/debug/vhca/$DEV ] || { echo "vhca still has $DEV"; return 1; }
}

# counts: one line of what vhca0 holds (user_lib.sh's mrc_dev_counts).
counts() { mrc_dev_counts $DEV vhca; }

# field SNAPSHOT KEY: KEY's value in a line of counts.
field() {
	echo "$1" | awk -v k="$2" '{for (i = 1; i < NF; i += 2) if ($i == k) print $(i + 1)}'
}

baseline() { BASE=$(counts); }

# settled: every count is back to the baseline (user_lib.sh's
# mrc_dev_settled).
settled() { mrc_dev_settled $DEV vhca; }

# live: the objects user_life reported are there, on top of the baseline.
live() {
	local now k d want
	now=$(counts)
	for k in qp:2 cq:1 pd:1 mr:5 pds:1 mws:2; do
		want=$(($(field "$BASE" ${k%:*}) + ${k#*:}))
		d=$(field "$now" ${k%:*})
		[ "$d" = "$want" ] || { echo "${k%:*} is $d, want $want"; return 1; }
	done
	# Pinned and ODP MRs are mrcore MRs; an implicit one may have
	# children of its own.
	[ "$(field "$now" mrs)" -ge $(($(field "$BASE" mrs) + 5)) ] ||
		{ echo "mrcore mrs is $(field "$now" mrs), want >= base + 5"; return 1; }
}

# start HOW: user_life hold HOW in the background.
start() {
	rm -f $OUT.out $OUT.rc
	( mrc_chroot /tmp/user_life hold "$1"; echo $? > $OUT.rc ) \
		< /dev/null > $OUT.out 2>&1 &
	LIFE_JOB=$!
}

ready_or_failed() { grep -q -e '^ready' -e '^FAIL' $OUT.out || [ -e $OUT.rc ]; }

# ready: the process said "ready" (t_gate runs this in a subshell: the
# caller reads the pid with life_pid).
ready() {
	wait_for $PROGRESS_TMO ready_or_failed ||
		{ echo "not ready in ${PROGRESS_TMO}s"; return 1; }
	[ -n "$(life_pid)" ] || { tail -1 $OUT.out; return 1; }
}

life_pid() { awk '$1 == "ready" {print $3}' $OUT.out; }

# ended RC: the process has ended with status RC within the deadline
# (killed and reported otherwise).
ended() {
	local rc
	if ! wait_for $PROGRESS_TMO test -e $OUT.rc; then
		kill_tree $LIFE_JOB
		echo "still running after ${PROGRESS_TMO}s: $(tail -1 $OUT.out)"
		return 1
	fi
	wait $LIFE_JOB
	rc=$(cat $OUT.rc)
	[ "$rc" = "$1" ] || { echo "status $rc, want $1: $(tail -1 $OUT.out)"; return 1; }
}

# fatal_seen: user_life hold fatal saw the event and exited 0.
fatal_seen() {
	ended 0 || return 1
	grep -q '^event DEVICE_FATAL$' $OUT.out ||
		{ echo "no DEVICE_FATAL: $(tail -1 $OUT.out)"; return 1; }
}

# show: the program's output, as comments.
show() { sed "s/^/#   $1: /" $OUT.out; }

# case_begin NAME: T, a kernel log mark, the baseline.
case_begin() {
	T="user-life: $1"
	klog_mark "$T"
	baseline
	echo "# $T: baseline: $BASE"
}

case_end() {
	t_check "$T: no leak or warning in the kernel log" klog_clean "$T"
	t_check "$T: no hung task in the kernel log" klog_no_hang "$T"
}

# case_gone HOW SIGNAL RC: kill or exit.
case_gone() {
	case_begin "$1"
	start "$1"
	if t_gate "$T: objects made, traffic checked, receives left posted" ready; then
		echo "# $T: live: $(counts)"
		t_check "$T: QPs, CQ, PD, MRs and windows live on $DEV" live
		kill -"$2" "$(life_pid)"
		t_check "$T: the process ends (status $3)" ended "$3"
		wait $LIFE_JOB
		t_check "$T: every count back to the baseline" settled
	else
		ended x > /dev/null
		show "$1"
	fi
	case_end
}

case_fork() {
	local out
	case_begin fork
	if out=$(run_for 120 mrc_chroot /tmp/user_life fork) &&
	   echo "$out" | grep -q '^fork ok$'; then
		t_ok "$T: the child's writes stay its own, the parent's MR maps the parent's pages; the child's reg_mr works, its write() and doorbell get EACCES"
		echo "$out" | grep '^#' | sed "s/^# /# $T: /"
	else
		t_fail "$T: the child's writes stay its own, the parent's MR maps the parent's pages; the child's reg_mr works, its write() and doorbell get EACCES" \
			"$(echo "$out" | grep -m1 FAIL || echo "$out" | tail -1)"
		echo "$out" | sed "s/^/#   fork: /"
	fi
	t_check "$T: every count back to the baseline" settled
	case_end
}

# smoke: a new process makes, uses and destroys the objects on vhca0.
smoke() {
	local out
	out=$(run_for 120 mrc_chroot /tmp/user_life smoke) &&
		echo "$out" | grep -q '^smoke ok$' ||
		{ echo "$out" | grep -m1 FAIL || echo "$out" | tail -1; return 1; }
}

# case_remove NAME CMD...: CMD removes vhca0 while user_life waits in
# ibv_get_async_event().
case_remove() {
	local name=$1
	shift
	case_begin "$name"
	start fatal
	if ! t_gate "$T: objects made, traffic checked, receives left posted" ready; then
		ended x > /dev/null
		show "$name"
		run_for $REMOVE_TMO "$@" > /dev/null
		return 1
	fi
	echo "# $T: live: $(counts)"
	t_check "$T: QPs, CQ, PD, MRs and windows live on $DEV" live
	t_check "$T: $* returns within ${REMOVE_TMO}s" run_for $REMOVE_TMO "$@"
	t_check "$T: the process sees IBV_EVENT_DEVICE_FATAL, cleans up, exits 0" \
		fatal_seen
	wait $LIFE_JOB
	grep '^#' $OUT.out | sed "s/^# /# $T: /"
	t_check "$T: $DEV gone from ib_core, ib_uverbs, mrcore and vhca" \
		wait_for $PROGRESS_TMO dev_gone
	case_end
}

# recover: vhca0 again on the same netdev and a new process runs on it.
recover() {
	t_gate "$T: rdma link add $DEV netdev $NETDEV again" dev_add || return 1
	t_check "$T: a new process makes, uses and destroys the objects" smoke
}

t_gate "user-life: the host's root in a chroot" mrc_root_up || exit 1
[ -x ./user_life ] || { t_fail "user-life: prerequisite" "no ./user_life"; exit 4; }
cp ./user_life $MRC_ROOT/tmp/user_life ||
	{ t_fail "user-life: prerequisite" "cannot copy user_life into the chroot"; exit 4; }
if [ -w $HUNG ]; then
	old_hung=$(cat $HUNG)
	echo 30 > $HUNG
fi
t_gate "user-life: mrcore and vhca load" load_mrcore || exit 1
t_gate "user-life: rdma link add $DEV netdev $NETDEV, GID of $ADDR" dev_add ||
	{ unload_mrcore; exit 1; }

case_gone kill KILL 137
case_gone exit USR1 0
case_fork

case_remove linkdel rdma link del $DEV
recover

case_remove rmmod rmmod vhca
t_eval "$T: the vhca module is gone" '[ ! -e /sys/module/vhca ]'
t_gate "$T: vhca loads again" load_vhca && recover

# rdma_rxe's exit unregisters every device of its driver id.
T="user-life: rmmod-rxe"
klog_mark "$T"
if t_gate "$T: rdma_rxe loads" modprobe rdma_rxe; then
	t_check "$T: rmmod rdma_rxe with $DEV idle returns within ${REMOVE_TMO}s" \
		run_for $REMOVE_TMO rmmod rdma_rxe
	t_check "$T: $DEV gone from ib_core, ib_uverbs, mrcore and vhca" \
		wait_for $PROGRESS_TMO dev_gone
	t_eval "$T: the vhca module stays" '[ -e /sys/module/vhca ]'
	recover
	t_check "$T: rmmod vhca with $DEV present" run_for $REMOVE_TMO rmmod vhca
	t_gate "$T: vhca loads again" load_vhca && recover
	case_end
fi
if t_gate "user-life: rmmod-rxe-ctx: rdma_rxe loads" modprobe rdma_rxe; then
	case_remove rmmod-rxe-ctx rmmod rdma_rxe
	t_eval "$T: the vhca module stays" '[ -e /sys/module/vhca ]'
	t_check "$T: rmmod vhca afterwards" run_for $REMOVE_TMO rmmod vhca
fi

# The scripts after this one load mrcore and vhca themselves.
[ -e /sys/class/infiniband/$DEV ] && rdma link del $DEV
[ -e /sys/module/vhca ] && rmmod vhca
t_eval "user-life: rmmod mrcore" 'builtin_module mrcore || rmmod mrcore'
ip link del $NETDEV 2>/dev/null
rm -f $MRC_ROOT/tmp/user_life
[ -n "$old_hung" ] && echo "$old_hung" > $HUNG
mrc_root_down
exit 0
