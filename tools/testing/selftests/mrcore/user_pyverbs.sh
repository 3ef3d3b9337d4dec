#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The project's pyverbs suite, user_pyverbs.py, over each device type of
# USER_DEVS (default "rxe vhca"; vmtest.sh passes USER_DEVS as
# mrcore.userdevs=): rxe0 on one dummy netdev, vhca0 on another. It runs
# under Debian's python3 and python3-pyverbs (rdma-core 44.0) from the
# host's root in a chroot (user_lib.sh); two QPs of the device talk to
# each other. Its lines are ours ("ok - pyverbs: DEV: ..."); whatever else
# it prints (a traceback) becomes a comment, and a run that did not reach
# its end is a "not ok" of its own.
#
# rxe0 is the reference: where rxe 6.1 answers otherwise than the verbs
# man pages or the IBA, user_pyverbs.py (RXE61) asserts rxe's answer and
# prints "differs:" under the case; vhca0 is held to the text.
. ./lib.sh
. ./nvmeof.sh
# user_lib.sh asks mountpoint whether its mounts are there; the
# initramfs's busybox has no such applet. Until it does: /proc/mounts.
if ! command -v mountpoint > /dev/null; then
	mountpoint() {
		[ "$1" = -q ] && shift
		awk -v d="${1%/}" '$2 == d { f = 1 } END { exit !f }' /proc/mounts
	}
fi
. ./user_lib.sh

USER_DEVS=${USER_DEVS:-rxe vhca}
# Bounds a wedged run only: each wait inside is bounded by PROGRESS_TMO.
PYV_TMO=1200

# pyverbs_suite TYPE DEV NETDEV ADDR
pyverbs_suite() {
	local t="pyverbs-$1" rc
	case "$1" in
	rxe)	t_gate "$t: rdma_rxe loads" modprobe rdma_rxe || return 1 ;;
	vhca)	t_gate "$t: mrcore and vhca load" load_mrcore || return 1 ;;
	*)	t_fail "$t: device type" "unknown type $1 (rxe or vhca)"
		return 1 ;;
	esac
	t_gate "$t: rdma link add $2 netdev $3, GID of $4" \
		rdma_link_up "$1" "$2" "$3" "$4" || return 1
	run_for $PYV_TMO mrc_chroot python3 -u /tmp/user_pyverbs.py "$2" \
		> /tmp/pyv.out 2>&1
	rc=$?
	sed -e '/^ok - /b' -e '/^not ok - /b' -e '/^#/b' -e 's/^/#   /' /tmp/pyv.out
	# 0: every case passed; 1: a case failed, and said so.
	if grep -q '^# user_pyverbs: done' /tmp/pyv.out && [ $rc -le 1 ]; then
		t_ok "$t: user_pyverbs.py $2 ran to its end"
	else
		t_fail "$t: user_pyverbs.py $2 ran to its end" \
			"exit status $rc: $(grep -v '^ok - ' /tmp/pyv.out | tail -1)"
	fi
	t_check "$t: rdma link del $2" rdma_link_down "$2" "$3"
	# The scripts after this one load vhca themselves.
	[ "$1" = vhca ] && t_check "$t: rmmod vhca mrcore" run_for 60 unload_mrcore
	return 0
}

t_gate "pyverbs: the host's root in a chroot at $MRC_ROOT" mrc_root_up ||
	{ t_fail "pyverbs: no case run ($USER_DEVS)" "no chroot of the host's root"; exit 1; }
t_check "pyverbs: user_pyverbs.py copied into the chroot's /tmp" \
	cp user_pyverbs.py $MRC_ROOT/tmp/user_pyverbs.py
# The HUGETLB cases' buffers (one 2 MiB page each, one case at a time;
# the ODP one refaults it after MADV_DONTNEED): two pages, the count put
# back after.
huge0=$(cat /proc/sys/vm/nr_hugepages)
t_check "pyverbs: two huge pages reserved" \
	sh -c "echo $((huge0 + 2)) > /proc/sys/vm/nr_hugepages &&
	       [ \$(cat /proc/sys/vm/nr_hugepages) -ge $((huge0 + 2)) ]"
for type in $USER_DEVS; do
	case "$type" in
	rxe)	pyverbs_suite rxe rxe0 pyvr0 10.92.0.1 ;;
	vhca)	pyverbs_suite vhca vhca0 pyvv0 10.93.0.1 ;;
	*)	t_fail "pyverbs: device type $type" "unknown (USER_DEVS: rxe, vhca)" ;;
	esac
done
echo "$huge0" > /proc/sys/vm/nr_hugepages
mrc_root_down
