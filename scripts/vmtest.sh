#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The VM tier: boot a 6.1 kernel in QEMU (TCG) with an initramfs holding
# our modules and the selftests, collect the results from the serial
# console, fail on any failed check or kernel splat.
#
# Usage: vmtest.sh [--kernel=stock|debug] [--swiotlb]
#                  [--bench|--demo|--ulp|--fuzz|--only=SCRIPT[,SCRIPT...]]
#   --swiotlb  boot with swiotlb=force: every streaming DMA mapping bounces;
#              the test mode then leaves out the scripts that use nvmet-rdma
#   --ulp      only the storage ULPs over vhca (nvmeof_vhca.sh, iser_vhca.sh)
#   --fuzz     the fuzzer (fuzz.sh), then the kmemleak scan (leaks.sh); its
#              files (corpus, PCs, rings, reproducers) land in FUZZ_OUT
# Environment: USER_DEVS, the RDMA device types user_verbs.sh runs on
# (default "rxe vhca"), passed to the guest as mrcore.userdevs=;
# BENCH_PARTS, the parts of --bench to run (of "mr fmr nvmeof perftest
# ureg", default all), passed as mrcore.bench=;
# MRCORE_VM_EXCLUDE, scripts the test mode does not run (mrcore.exclude=);
# MRCORE_KMEMLEAK=0, kmemleak off in the debug kernel (on by default);
# for --fuzz, FUZZ_SECONDS, FUZZ_EXECS, FUZZ_SEED, FUZZ_THREADS,
# FUZZ_FAMILIES and FUZZ_CARRY (fuzz.sh), passed as mrcore.fuzz=, and FUZZ_OUT, the host
# directory the guest writes the run's files to (default: a new one under
# $MRCORE_CACHE/fuzz).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"

kernel=stock mode=test swiotlb=
for a in "$@"; do
	case "$a" in
	--kernel=*) kernel=${a#--kernel=} ;;
	--bench) mode=bench ;;
	--demo) mode=demo ;;
	--ulp) mode=ulp ;;
	--fuzz) mode=fuzz ;;
	--only=*) mode="only:${a#--only=}" ;;
	--swiotlb) swiotlb=1 ;;
	*) echo "usage: $0 [--kernel=stock|debug] [--swiotlb] [--bench|--demo|--ulp|--fuzz|--only=SCRIPT[,SCRIPT...]]" >&2
	   exit 2 ;;
	esac
done

bash "$here/deps.sh" vm
# Modules the tests need; closures are resolved from the kernel's index.
MODS="rdma_rxe rdma_cm ib_cm ib_umad nvme-rdma nvmet-rdma brd null_blk dummy
	configfs crc32_generic crc32c_generic crct10dif_generic
	ib_iser ib_isert iscsi_target_mod target_core_mod scsi_transport_iscsi
	libiscsi sd_mod
	virtio_pci 9p 9pnet_virtio ib_uverbs rdma_ucm virtio_net"
# virtio_pci, 9p, 9pnet_virtio: the host's root, shared read-only with the
# guest (-virtfs below), where user_lib.sh runs Debian's user-space RDMA
# programs in a chroot; ib_uverbs and rdma_ucm are their kernel side.
# virtio_net: a NIC (-nic below), a netdev with a parent device, as a real
# RDMA device's is (user_verbs.sh binds a vhca to it).
# (In the debug kernel the crc modules are built in; their absence is fine.)
work="$MRCORE_CACHE/vm-$kernel"
mkdir -p "$work"
extra_args=""
# The results and the log of a swiotlb=force run are named apart.
tag=$kernel
if [ -n "$swiotlb" ]; then
	extra_args="swiotlb=force"
	tag=$kernel-swiotlb
	# The scripts that run 6.1's nvmet-rdma, which fills a data buffer
	# after rdma_rw mapped it for the device and never syncs it: under
	# swiotlb the device reads a stale bounce buffer, on any DMA-mapping
	# device (Documentation/mrcore/datapath.rst, "swiotlb=force"). rxe
	# maps nothing, so nvmeof_rxe.sh would pass without saying anything
	# of bounce buffers. And iser_vhca.sh: under swiotlb the initiator
	# reads iSCSI headers whose data length is 0 ("wrong datalen 0
	# (hdr)") and the session never forms, while DMA-API debug reports
	# 6.1's ib_isert syncing a send descriptor it has not mapped
	# (Documentation/mrcore/hardening.rst, "Bounce buffers"); iser_rxe.sh
	# runs. Every other script runs.
	if [ "$mode" = test ]; then
		MRCORE_VM_EXCLUDE="${MRCORE_VM_EXCLUDE:-} nvmeof_rxe.sh
			nvmeof_vhca.sh nvmeof_frwr_vhca.sh nvmeof_exhaust_vhca.sh
			stress_vhca.sh removal_vhca.sh iser_vhca.sh"
	fi
fi

case "$kernel" in
stock)
	kroot=$(bash "$here/kernel.sh")
	kver=$(ls "$kroot/lib/modules")
	image="$kroot/boot/vmlinuz-$kver"
	# Built against the headers of that same kernel (deps.sh installs
	# linux-headers-<abi>-amd64), not the host's.
	make -s -C "$top" KDIR="/usr/src/linux-headers-$kver" modules >&2
	kodir="$top"
	# NVMe/TCP, the non-RDMA column of the NVMe-oF table of make bench,
	# which boots this kernel (the debug kernel's config has no NVMe/TCP).
	MODS="$MODS nvme-tcp nvmet-tcp"
	;;
debug)
	# kunit.sh, which has just built it, says so: no second build pass.
	if [ -n "${MRCORE_KUNIT_BUILT:-}" ]; then
		kbuild="$MRCORE_CACHE/kbuild"
	else
		kbuild=$(bash "$here/kunit.sh" --build-only)
	fi
	kver=$(cat "$kbuild/include/config/kernel.release")
	image="$kbuild/arch/x86/boot/bzImage"
	kroot="$work/root"
	rm -rf "$kroot"
	make -s -C "$(bash "$here/tree.sh")" O="$kbuild" \
		INSTALL_MOD_PATH="$kroot" modules_install >/dev/null
	kodir=""
	MODS="$MODS vhca mrcore_test"
	# The built-in KUnit suites ran in "make kunit"; do not run them
	# again here. (vhca's run whenever vhca.ko loads: make kunit reports
	# them, with vhca_kunit.sh.)
	extra_args="$extra_args kunit.filter_glob=mrcore-vm-none"
	# kmemleak tracks every allocation, so that leaks.sh, the tier's
	# last script, can scan for anything of ours left behind.
	# MRCORE_KMEMLEAK=0 boots with it off (leaks.sh then skips).
	if [ "${MRCORE_KMEMLEAK:-1}" = 0 ]; then
		extra_args="$extra_args kmemleak=off"
	fi
	;;
*) echo "unknown kernel $kernel" >&2; exit 2 ;;
esac

initrd="$work/initrd.cpio"
bash "$here/initramfs.sh" "$initrd" "$kroot" "$kver" "$MODS" "$kodir"

# The user-verbs devices, with commas: the command line splits on blanks.
[ -n "${USER_DEVS:-}" ] && extra_args="$extra_args mrcore.userdevs=$(echo $USER_DEVS | tr ' ' ,)"
[ -n "${BENCH_PARTS:-}" ] && extra_args="$extra_args mrcore.bench=$(echo $BENCH_PARTS | tr ' ' ,)"
# Scripts the test mode leaves out, with a "# excluded" line each.
[ -n "${MRCORE_VM_EXCLUDE:-}" ] && extra_args="$extra_args mrcore.exclude=$(echo $MRCORE_VM_EXCLUDE | tr ' ' ,)"

# The fuzzer's settings, "SECONDS,EXECS,SEED,THREADS,FAMILIES,CARRY" (empty
# fields unset), and a directory the guest may write: the only one it can.
out_share=""
if [ "$mode" = fuzz ]; then
	extra_args="$extra_args mrcore.fuzz=${FUZZ_SECONDS:-},${FUZZ_EXECS:-},${FUZZ_SEED:-},${FUZZ_THREADS:-},${FUZZ_FAMILIES:-},${FUZZ_CARRY:-}"
	FUZZ_OUT=${FUZZ_OUT:-$MRCORE_CACHE/fuzz/$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$FUZZ_OUT"
	FUZZ_OUT=$(cd "$FUZZ_OUT" && pwd)
	out_share="-virtfs local,path=$FUZZ_OUT,mount_tag=mrcout,security_model=none"
	echo "vmtest: the fuzzer's files go to $FUZZ_OUT" >&2
fi

log="$work/console-${mode%%:*}${swiotlb:+-swiotlb}.log"
# qemu64 rather than "max": under TCG every emulated vector extension the
# kernel then uses costs time. Measured with make bench here: NVMe-oF over
# rxe 3396 vs 2753 IOPS (4 KiB randread) and 56.7 vs 30.6 MB/s (128 KiB).
echo "vmtest: booting $kernel kernel $kver (mode $mode${swiotlb:+, swiotlb=force}), log in $log" >&2
# One boot runs a whole tier: the debug kernel's, with kmemleak tracking
# every allocation, the stress under NVMe-oF and the fuzzer, takes over
# half an hour here. The bound only catches a VM that never finishes.
timeout --foreground "${MRCORE_VM_TIMEOUT:-3600}" \
	qemu-system-x86_64 -nodefaults -nographic -no-reboot \
	-machine q35 -cpu ${MRCORE_VM_CPU:-qemu64} -smp 2 -m 3G \
	-kernel "$image" -initrd "$initrd" -serial stdio \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	$out_share \
	-netdev user,id=nic0,restrict=on -device virtio-net-pci,netdev=nic0,romfile= \
	-append "console=ttyS0 panic=-1 loglevel=5 mrcore.mode=$mode $extra_args" \
	< /dev/null 2>&1 | stdbuf -oL tr -d '\r' | tee "$log" |
	grep --line-buffered -E '^(ok|not ok) - |^# |^MRCORE|^bench|^demo|^\|' || true

# A skipped check is not a pass: it is listed and counted apart.
pass=$(grep '^ok - ' "$log" | grep -vc '# SKIP' || true)
skip=$(grep '^ok - ' "$log" | grep -c '# SKIP' || true)
fail=$(grep -c '^not ok - ' "$log" || true)
[ "$skip" = 0 ] || echo "# vm($tag): $skip skipped, not counted as passed"
if ! grep -q '^MRCORE-VM-DONE' "$log"; then
	echo "not ok - vm($tag): the run did not finish (timeout or panic)"
	fail=$((fail + 1))
fi
# A splat fails the run even when every check passed.
mrc_known_splats "$log" > "$log.checked"
if grep -E -q "$MRC_SPLAT" "$log.checked"; then
	echo "not ok - vm($tag): kernel splat in the console log:"
	grep -E -m 5 "$MRC_SPLAT" "$log.checked" | sed 's/^/#   /'
	fail=$((fail + 1))
fi
echo "vmtest($tag/$mode): $pass passed, $fail failed, $skip skipped"
[ -n "${MRCORE_RESULTS:-}" ] && echo "vmtest-$tag $pass $fail" >> "$MRCORE_RESULTS"
[ "$fail" = 0 ]
