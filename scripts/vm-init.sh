#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the VM tier's initramfs (busybox). Mounts the usual file
# systems, runs the selftests in the mode the kernel command line names
# (mrcore.mode=test|bench|demo), prints an end marker and powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
modprobe configfs 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
ip link set lo up
echo /sbin/modprobe > /proc/sys/kernel/modprobe

mode=test
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	mrcore.mode=*) mode=${arg#mrcore.mode=} ;;
	# The device types of user_verbs.sh, "rxe,vhca" (vmtest.sh USER_DEVS).
	mrcore.userdevs=*) USER_DEVS=$(echo "${arg#mrcore.userdevs=}" | tr , ' ')
		export USER_DEVS ;;
	# The parts of make bench to run, "perftest" (vmtest.sh BENCH_PARTS).
	mrcore.bench=*) BENCH_PARTS=$(echo "${arg#mrcore.bench=}" | tr , ' ')
		export BENCH_PARTS ;;
	# Scripts the test mode leaves out (vmtest.sh MRCORE_VM_EXCLUDE).
	mrcore.exclude=*) MRC_EXCLUDE=$(echo "${arg#mrcore.exclude=}" | tr , ' ')
		export MRC_EXCLUDE ;;
	esac
done

# The selftests run from their directory; the benchmarks and the demo
# (tools/mrcore) from theirs, using the selftests' libraries.
cd /selftests
case "$mode" in
bench|demo)	MRC_SELFTESTS=/selftests sh "/tools/$mode.sh" ;;
*)		sh ./run.sh "$mode" ;;
esac
rc=$?
echo "MRCORE-VM-DONE rc=$rc"
sync
poweroff -f
