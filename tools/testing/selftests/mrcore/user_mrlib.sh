#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# libvhca, the project's user-space library (libvhca/include/vhca/verbs.h):
# ./user_mrlib (user_mrlib.c, kselftest harness, TAP; libvhca built into
# it, with Debian's libibverbs and librxe) runs in the host root's chroot
# (user_lib.sh), first over vhca0, where every call of the library has
# its cases (rereg, advise, dma-buf, requested keys, iovec MRs, indirect
# keys, dereg, query), then over rxe0, where every call must fail with
# EOPNOTSUPP and create nothing (the notvhca cases; the vhca cases skip
# there, and the notvhca ones on vhca0). Each result becomes one line:
#
#   ok N rereg.trans          ->  ok - user-mrlib DEV: rereg.trans
#   ok N # SKIP WHY           ->  ok - user-mrlib DEV: NAME # SKIP WHY
#   not ok N rereg.trans      ->  not ok - user-mrlib DEV: rereg.trans # why
#
# After each device: every count of it is back to what it was before the
# program (user_lib.sh's mrc_dev_counts: ib_core's objects in "rdma res
# show"; on vhca0 mrcore's accounting and vhca's live device keys as
# well), and the kernel log
# since it began, module unloads included, has no leak, warning or hung
# task.
#
# The dma-buf cases use /dev/udmabuf (loaded here when the kernel has it:
# CONFIG_UDMABUF is on in the debug kernel, off in Debian's 6.1, where
# dmabuf.reg skips) and mrcore_test's static exporter (/dev/mrcore_test,
# loaded here), which every kernel has. The run leaves mrcore and vhca
# unloaded, as the scripts after it expect.
. ./lib.sh
. ./chardev_lib.sh
. ./nvmeof.sh
. ./user_lib.sh

rc=0

# mrlib_run DEV TYPE: the program on DEV in the chroot, its lines ours.
# The harness names a case FIXTURE.CASE and tap_to_lines drops the first
# part, so the program's name goes in front of it: the lines say
# rereg.trans, not a bare trans that several groups have.
# shellcheck disable=SC2317 # run by mrc_dev_run
mrlib_run() {
	mrc_chroot env MRC_UDEV="$1" MRC_UDEV_TYPE="$2" /tmp/user_mrlib 2>&1 |
		sed 's/^\(#[[:space:]]*RUN[[:space:]]*\)\([^[:space:]]\)/\1user_mrlib.\2/' |
		tap_to_lines "user-mrlib $1" user_mrlib
}

# mrlib_device TYPE DEV NETDEV ADDR: DEV of TYPE on a dummy NETDEV with
# ADDR's GID, the program on it, the counts and the kernel log after.
mrlib_device() {
	local type="$1" dev="$2" net="$3" addr="$4" T="user-mrlib $2"
	klog_mark "$T"
	case "$type" in
	vhca)	t_gate "$T: mrcore and vhca load" load_mrcore || { rc=1; return; }
		# The dma-buf exporter of dmabuf.reg_static.
		t_check "$T: mrcore_test loads" load_mrcore_test ;;
	rxe)	t_gate "$T: rdma_rxe loads" modprobe rdma_rxe || { rc=1; return; } ;;
	esac
	mrc_dev_run "$T" "$type" "$dev" "$net" "$addr" mrlib_run "$dev" "$type" ||
		rc=1
	if [ "$type" = vhca ]; then
		if ! builtin_module mrcore_test && [ -e /sys/module/mrcore_test ]; then
			t_check "$T: rmmod mrcore_test" rmmod mrcore_test
		fi
		t_check "$T: vhca and mrcore unload" unload_mrcore
	fi
	t_check "$T: no leak or warning in the kernel log" klog_clean "$T"
	t_check "$T: no hung task in the kernel log" klog_no_hang "$T"
}

[ -x ./user_mrlib ] || { t_fail "user-mrlib: prerequisite" "no ./user_mrlib"; exit 4; }
t_gate "user-mrlib: the host's root in a chroot" mrc_root_up || exit 1
cp ./user_mrlib $MRC_ROOT/tmp/user_mrlib ||
	{ t_fail "user-mrlib: prerequisite" "cannot copy user_mrlib into the chroot"; exit 4; }
if modprobe udmabuf 2>/dev/null || builtin_module udmabuf; then
	echo "# user-mrlib: udmabuf: $(ls /dev/udmabuf 2>&1)"
else
	echo "# user-mrlib: no udmabuf in this kernel (CONFIG_UDMABUF): dmabuf.reg skips"
fi

mrlib_device vhca vhca0 umlv0 10.95.0.1
mrlib_device rxe rxe0 umlr0 10.95.1.1

rm -f $MRC_ROOT/tmp/user_mrlib
mrc_root_down
exit $rc
