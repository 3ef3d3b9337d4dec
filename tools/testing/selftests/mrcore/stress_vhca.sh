#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Concurrency stress over vhca0 while NVMe-oF runs on it (issue 20, item
# 3). mrcore, vhca and mrcore_test loaded, vhca0 on a dummy netdev; the
# baseline taken: ib_core's objects on vhca0 ("rdma res"), mrcore's
# accounting (debugfs stats) and vhca's live device keys. Then an
# nvmet-rdma target on a RAM disk and an nvme-rdma host over vhca0, fio
# writing and verifying the namespace in the background (bounded by size,
# STRESS_FIO_SIZE x STRESS_FIO_LOOPS), and ./stress (stress.c) in the host
# root's chroot (user_lib.sh): its kernel half through /dev/mrcore_test,
# its user half through libibverbs, both on vhca0 at once, for
# STRESS_ROUNDS rounds (seed STRESS_SEED, STRESS_THREADS threads, default
# 4: two in each half even on the 1-CPU debug kernel, so that threads bind
# windows to each other's MRs).
# Its one kselftest case becomes a line (tap_to_lines), its summary lines
# comments. After it, with NVMe-oF still up: nothing of ./stress or of
# mrcore_test's contexts left in "rdma res", mrcore's user-memory
# accounting back, and mrcore's counters of registrations, reregs, window
# binds and ODP invalidations moved (the program reached them). Then fio's
# end and verdict, NVMe-oF torn down, every count back to the baseline,
# and a kernel log with no leak, warning or hung task since the start.
#
# Every wait polls with a deadline that bounds a failure only (never
# below lib.sh's PROGRESS_TMO); nothing is judged by the clock.
. ./lib.sh
. ./chardev_lib.sh
. ./nvmeof.sh
. ./user_lib.sh

T=stress-vhca
DEV=vhca0
NETDEV=stv0
ADDR=10.98.0.1
NQN=nqn.2026-11.org.mrcore:stress
NVMET_PORT=11
NVME_OPTS=ctrl_loss_tmo=5,reconnect_delay=1,fast_io_fail_tmo=0
ROUNDS=${STRESS_ROUNDS:-16}
SEED=${STRESS_SEED:-1}
THREADS=${STRESS_THREADS:-4}
FIO_SIZE=${STRESS_FIO_SIZE:-32M}
FIO_LOOPS=${STRESS_FIO_LOOPS:-4}
# stress.c's harness bounds the run at 3600 s; this only catches a
# process stuck in the kernel past that.
STRESS_TMO=3660
# fio's end after ./stress's: a failure bound.
FIO_TMO=600
old_tmo=
rc=0

klog_mark $T

# skip_rest WHY: a prerequisite is missing: report it, undo, stop.
skip_rest() {
	t_fail "$T: prerequisite" "$1"
	[ -n "${FIO_PID:-}" ] && kill_tree "$FIO_PID"
	nvme_host_down >/dev/null
	nvmet_down >/dev/null
	run_for 60 rdma_link_down $DEV $NETDEV >/dev/null
	rmmod mrcore_test 2>/dev/null
	run_for 60 unload_mrcore >/dev/null 2>&1
	[ -n "$old_tmo" ] && nvme_timeouts $old_tmo >/dev/null
	rm -f $MRC_ROOT/tmp/stress
	mrc_root_down
	exit 4
}

# stress_counts: one line of what $DEV holds: user_lib.sh's mrc_dev_counts
# (ib_core's objects, mrcore's accounting, vhca's live keys), and mrcore's
# fast-reg MRs (NVMe-oF's) and misuse count, which must not grow.
stress_counts() {
	echo "$(mrc_dev_counts $DEV vhca) mrs_fast_reg $(mrc_stat $DEV mrs_fast_reg)" \
	     "misuse $(mrc_stat $DEV misuse)"
}

# stress_own: what ./stress and mrcore_test's contexts hold on $DEV, which
# NVMe-oF does not touch: their objects in "rdma res" (comm stress and
# [mrcore_test]) and mrcore's user MRs, windows and pinned pages.
stress_own() {
	local k
	for k in qp cq pd mr; do
		printf '%s %s/%s ' $k "$(rdma_res_count $k $DEV stress)" \
			"$(rdma_res_count $k $DEV mrcore_test)"
	done
	for k in mrs_user mws pages_pinned; do
		printf '%s %s ' $k "$(mrc_stat $DEV $k)"
	done
	echo
}

# stress_counts_nocq: stress_counts without the CQs. nvmet-rdma takes its
# CQs from ib_core's CQ pool (ib_cq_pool_get()), which keeps them until the
# device is unregistered: after NVMe-oF they stay (one per completion
# vector used), so the end's comparison leaves them out; rdma link del
# frees them, and the kernel log is checked after it.
stress_counts_nocq() { stress_counts | sed 's/ cq [0-9]* / /'; }

# settled WANT CMD: CMD prints WANT (waited for: the last reference to a
# uverbs file or a queue may go a little after its owner), else say both.
settled_is() { [ "$($2)" = "$1" ]; }
settled() {
	wait_for $PROGRESS_TMO settled_is "$1" "$2" && return 0
	echo "now: $($2); before: $1"
	return 1
}

# mrc_odp DEV KEY: a value of mrcore's ODP counters.
mrc_odp() {
	awk -v k="$2" '$1 == k {print $2}' "/sys/kernel/debug/mrcore/$1/odp"
}

# stress_cumul: mrcore's counters that only grow, which the program moves.
stress_cumul() {
	echo "mr_regs $(mrc_stat $DEV mr_regs) mr_reregs $(mrc_stat $DEV mr_reregs)" \
	     "mw_binds $(mrc_stat $DEV mw_binds) invalidations $(mrc_odp $DEV invalidations)"
}

# grew BEFORE AFTER: every value of AFTER ("key value ...") is larger
# than BEFORE's.
grew() {
	echo "$1 $2" | awk '{ n = NF / 2
		for (i = 2; i <= n; i += 2)
			if ($(n + i) <= $i) {
				print $(i - 1) " did not grow: " $i " -> " $(n + i)
				bad = 1
			}
		exit bad }'
}

# stress_fio NS: fio's verify workload on NS in the background: FIO_LOOPS
# passes of FIO_SIZE of 4 KiB random writes at QD 16, each read back and
# checked (crc32c, the first mismatch fatal). Its terse status each second
# goes to /tmp/stress_fio.out, its errors to /tmp/stress_fio.err, its exit
# status to /tmp/stress_fio.rc.
stress_fio() {
	rm -f /tmp/stress_fio.rc /tmp/stress_fio.out /tmp/stress_fio.err
	( fio --thread --name=stress --filename="$1" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k --iodepth=16 --size="$FIO_SIZE" \
		--loops="$FIO_LOOPS" --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --output-format=terse --status-interval=1 \
		> /tmp/stress_fio.out 2> /tmp/stress_fio.err
	  echo $? > /tmp/stress_fio.rc ) < /dev/null > /dev/null 2>&1 &
	FIO_PID=$!
}
fio_done() { [ -s /tmp/stress_fio.rc ]; }
# fio_write_kib: KiB fio has written so far: field 47 of its latest terse
# (version 3) line, after the 41 of the reads (nvmeof.sh's fio_read_kib).
fio_write_kib() {
	awk -F';' '$1 == 3 {kib = $47} END {print kib + 0}' /tmp/stress_fio.out 2>/dev/null
}
# fio_writing: fio's writes have completed, or it has ended.
fio_writing() { fio_done || [ "$(fio_write_kib)" -gt 0 ]; }

# fio_verified: fio ended (within FIO_TMO s) with status 0: every block it
# wrote read back and matched its checksum.
fio_verified() {
	if ! wait_for $FIO_TMO fio_done; then
		kill_tree "$FIO_PID"
		echo "fio still running ${FIO_TMO}s after ./stress"
		return 1
	fi
	wait "$FIO_PID" 2>/dev/null
	[ "$(cat /tmp/stress_fio.rc)" = 0 ] && return 0
	echo "fio exit status $(cat /tmp/stress_fio.rc) after $(fio_write_kib) KiB written:" \
	     "$(tail -1 /tmp/stress_fio.err)"
	return 1
}

run_stress() {
	mrc_chroot /tmp/stress -d $DEV -r "$ROUNDS" -s "$SEED" \
		-t "$THREADS"
}

[ -x ./stress ] || { t_fail "$T: prerequisite" "no ./stress"; exit 4; }
t_gate "$T: the host's root in a chroot" mrc_root_up || exit 1
cp ./stress $MRC_ROOT/tmp/stress || skip_rest "cannot copy stress into the chroot"

modules_up() { nvmeof_modules && load_mrcore && load_mrcore_test; }
t_gate "$T: NVMe-oF, mrcore, vhca and mrcore_test load" modules_up ||
	skip_rest "modules"
t_gate "$T: rdma link add $DEV netdev $NETDEV, GID of $ADDR" \
	rdma_link_up vhca $DEV $NETDEV $ADDR || skip_rest "$DEV"
t_gate "$T: a uverbs node for $DEV" wait_for $PROGRESS_TMO mrc_has_uverbs $DEV ||
	skip_rest "no uverbs node"
BASE=$(stress_counts)
echo "# $T: baseline: $BASE"

# Command timeouts of a minute: they bound a failure only, and a data
# path starved by the stress must not be taken for a broken one.
old_tmo=$(nvme_timeouts 60 60)
t_gate "$T: nvmet-rdma port on $ADDR" nvmet_up $ADDR || skip_rest "nvmet port"
# What the port alone holds (its listening cm_id): the end's baseline where
# nvmet_down leaves the port (a lockdep kernel, see nvmeof.sh).
PORT_BASE=$(stress_counts)
ns=$(nvme_host_up $ADDR 2) || skip_rest "connect: $(echo "$ns" | tail -1)"
t_ok "$T: NVMe-oF connected over $DEV ($ns)"
stress_fio "$ns"
t_gate "$T: fio writing $FIO_LOOPS x $FIO_SIZE with verify on $ns" \
	wait_for $PROGRESS_TMO fio_writing || rc=1

OWN=$(stress_own)
CUMUL=$(stress_cumul)
echo "# $T: before ./stress: $OWN; $CUMUL"
echo "# $T: ./stress -d $DEV -r $ROUNDS -s $SEED -t $THREADS"
run_for $STRESS_TMO run_stress > /tmp/stress.out 2>&1
tap_to_lines "$T $DEV" stress < /tmp/stress.out || rc=1
grep '^# stress: summary' /tmp/stress.out | sed "s/^# stress: /# $T: /"
fio_done && echo "# $T: fio had ended before ./stress did"

t_gate "$T: nothing of ./stress or mrcore_test left, NVMe-oF up" \
	settled "$OWN" stress_own || rc=1
t_gate "$T: mrcore counted the registrations, reregs, binds, invalidations" \
	grew "$CUMUL" "$(stress_cumul)" || rc=1
t_gate "$T: fio verified every block it wrote" fio_verified || rc=1

t_gate "$T: disconnect" nvme_host_down || rc=1
nvmet_down
[ -e $CFS/ports/$NVMET_PORT ] && BASE=$PORT_BASE
t_gate "$T: every count but the pooled CQs back to the baseline" \
	settled "$(echo "$BASE" | sed 's/ cq [0-9]* / /')" stress_counts_nocq ||
	rc=1

builtin_module mrcore_test || t_check "$T: rmmod mrcore_test" rmmod mrcore_test
t_check "$T: rdma link del $DEV" run_for 60 rdma_link_down $DEV $NETDEV
nvme_timeouts $old_tmo > /dev/null
t_check "$T: rmmod vhca mrcore" run_for 60 unload_mrcore
t_check "$T: no leak or warning in the kernel log" klog_clean $T
t_check "$T: no hung task in the kernel log" klog_no_hang $T
rm -f $MRC_ROOT/tmp/stress
mrc_root_down
exit $rc
