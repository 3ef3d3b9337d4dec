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
	# The fuzzer's "SECONDS,EXECS,SEED,THREADS,FAMILIES,CARRY" (vmtest.sh
	# --fuzz), each exported when not empty.
	mrcore.fuzz=*) i=1
		for v in FUZZ_SECONDS FUZZ_EXECS FUZZ_SEED FUZZ_THREADS \
			 FUZZ_FAMILIES FUZZ_CARRY; do
			f=$(echo "${arg#mrcore.fuzz=}" | cut -d, -f$i)
			[ -n "$f" ] && eval "export $v=$f"
			i=$((i + 1))
		done ;;
	esac
done

# vmtest.sh --fuzz shares a writable host directory, tag mrcout, for the
# run's files.
if [ "$mode" = fuzz ]; then
	for m in virtio_pci 9pnet_virtio 9p; do modprobe $m 2>/dev/null; done
	mkdir -p /mnt/out
	i=0
	while [ $i -lt 60 ] &&
	      ! grep -qs mrcout /sys/bus/virtio/drivers/9pnet_virtio/virtio*/mount_tag; do
		sleep 1
		i=$((i + 1))
	done
	if mount -t 9p -o trans=virtio,version=9p2000.L mrcout /mnt/out; then
		export FUZZ_OUT=/mnt/out
	else
		echo "# vm-init: no writable share mrcout: the fuzzer's files stay in the guest"
	fi
fi

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
