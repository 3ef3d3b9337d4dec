#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# On-demand paging (issue 6), modelled on the kernel's hmm-tests: load
# mrcore, vhca and mrcore_test, bring up vhca0 over a dummy netdev, run
# ./odp_tests (kselftest harness, TAP) and report each of its results as
# one line of ours:
#
#   ok N odp.NAME              ->  ok - odp: NAME
#   ok N # SKIP WHY            ->  ok - odp: NAME # SKIP WHY
#   not ok N odp.NAME          ->  not ok - odp: NAME # <first failed assertion>
#
# The tests register ODP MRs over this process's memory through
# /dev/mrcore_test and move bytes through them over a loopback RC pair
# while the CPU side changes under the device (munmap, mprotect,
# MADV_DONTNEED, fork, THP split, hugetlb, process exit), and prefetch
# them; each checks the bytes and the MR's and the device's ODP counters.
# Afterwards the device's keys and PDs must be what they were (children
# that exited or were killed with ODP MRs live included), and the
# device-wide ODP counters of mrcore and of vhca's fault queue are
# printed as comments, and must be what port 1's hardware counters show
# (sysfs hw_counters and `rdma statistic`). Then the cases run again as
# odp-mapped on vhca1, made with vhca's user_dma_map set, whose user pages
# are DMA-mapped (mrcore's mapping paths; not under swiotlb=force). vhca
# only. Exits 4, after a "not ok" line, when a prerequisite is missing; 1
# when a test failed.
. ./lib.sh
. ./chardev_lib.sh

DEV=vhca0
NETDEV=odpd0
GID_V4=0000:0000:0000:0000:0000:ffff:c0a8:6501	# ::ffff:192.168.101.1

# A second device that DMA-maps user pages (below).
MDEV=vhca1
MNETDEV=odpd1

chardev_setup odp odp_tests "$DEV $MDEV" "$NETDEV $MNETDEV"
chardev_vhca $DEV $NETDEV 192.168.101.1/24 $GID_V4

rc=0
# ib_core's MAD layer holds keys and a PD of its own on the device.
chardev_baseline $DEV mkeys pds
MRCT_DEVICE=$DEV ./odp_tests 2>&1 | tap_to_lines odp odp_tests || rc=1

t_eval "odp: no key or PD left on $DEV ($base_mkeys keys, $base_pds PDs before)" \
	'chardev_unchanged $DEV mkeys pds'

# odp_dbg FILE KEY: the value of line KEY of a debugfs counter file.
odp_dbg() {
	awk -v k="$2" '$1 == k {print $2}' "$1"
}

# odp_stat NAME: what `rdma statistic` shows for counter NAME of port 1.
odp_stat() {
	rdma statistic show link $DEV/1 2>&1 |
		awk -v n="$1" '{for (i = 1; i < NF; i++) if ($i == n) print $(i + 1)}'
}

# hw_counters_agree: port 1's hardware counters, in sysfs and in `rdma
# statistic`, are the debugfs values the cases just moved (faults > 0).
hw_counters_agree() {
	local m=/sys/kernel/debug/mrcore/$DEV/odp v=/sys/kernel/debug/vhca/$DEV/odp
	local hw=/sys/class/infiniband/$DEV/ports/1/hw_counters
	local p name file key want
	[ "$(odp_dbg $m faults)" -gt 0 ] || { echo "no fault counted"; return 1; }
	for p in odp_faults:$m:faults odp_invalidations:$m:invalidations \
		 odp_prefetched_pages:$m:prefetched_pages \
		 odp_children_created:$m:children_created \
		 odp_children_reclaimed:$m:children_reclaimed \
		 odp_qp_faults:$v:faults odp_sync_faults:$v:sync_faults; do
		name=${p%%:*}
		file=${p#*:}
		key=${file##*:}
		file=${file%:*}
		want=$(odp_dbg "$file" "$key")
		[ "$(cat "$hw/$name")" = "$want" ] ||
			{ echo "$name: sysfs $(cat "$hw/$name"), debugfs $want"; return 1; }
		[ "$(odp_stat "$name")" = "$want" ] ||
			{ echo "$name: rdma statistic '$(odp_stat "$name")', debugfs $want"; return 1; }
	done
}
t_eval "odp: rdma statistic and hw_counters show the device's ODP counters" \
	hw_counters_agree

# The counters the cases moved, non-zero ones only, for the log.
for f in /sys/kernel/debug/mrcore/$DEV/odp /sys/kernel/debug/vhca/$DEV/odp; do
	[ -r "$f" ] &&
		echo "# odp: $f: $(awk '$2 != 0 {printf "%s %s ", $1, $2}' "$f")"
done

# The cases again on a device made while vhca's user_dma_map is set: user
# pages are DMA-mapped, as a hardware device's driver has mrcore do
# (ODP's pages and the fixture's pinned MR mapped with
# DMA_ATTR_SKIP_CPU_SYNC and synced by hand), the paths vhca0 does not
# take (it addresses user pages directly, MRC_CAP_USER_DIRECT). Not under
# swiotlb=force: there a mapping puts a bounce buffer between the engine
# and the process's pages, which is why vhca does not map them.
MPARAM=/sys/module/vhca/parameters/user_dma_map
if grep -qw swiotlb=force /proc/cmdline; then
	t_ok "odp-mapped: cases on a device that DMA-maps user pages # SKIP swiotlb=force bounces every mapping"
else
	echo Y > $MPARAM
	dummy_up $MNETDEV 192.168.102.1/24 &&
		rdma link add $MDEV type vhca netdev $MNETDEV
	made=$?
	echo N > $MPARAM
	[ $made -eq 0 ] ||
		chardev_missing "$MDEV" "rdma link add $MDEV type vhca netdev $MNETDEV failed"
	chardev_baseline $MDEV mkeys pds
	MRCT_DEVICE=$MDEV ./odp_tests 2>&1 | tap_to_lines odp-mapped odp_tests || rc=1
	t_eval "odp-mapped: no key or PD left on $MDEV" \
		'chardev_unchanged $MDEV mkeys pds'
	t_check "odp-mapped: rdma link del $MDEV" rdma link del $MDEV
	ip link del $MNETDEV
fi

chardev_teardown $DEV $NETDEV
exit $rc
