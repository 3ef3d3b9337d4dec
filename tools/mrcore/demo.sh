#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo: load mrcore and vhca, create vhca0, show it, then serve an
# NVMe-oF namespace over it (nvmet-rdma on a RAM disk and the nvme-rdma
# host, both in this VM, the connection looping back through the vhca
# fabric), run real I/O, show what the device and ib_core hold while the
# host is connected, disconnect and unload; then, for comparison, the same
# fio figures over rxe. In between, user space over vhca0: Debian's
# ibv_devinfo and an ib_write_bw between two processes, run from the
# host's root in a chroot (user_lib.sh). Every line is narrated; a step that fails prints
# "not ok - demo: ..." as well, so that make demo fails.
# Runs in the selftests directory (MRC_SELFTESTS, by default where it is
# in the source tree), for its lib.sh, nvmeof.sh and user_lib.sh.
cd "${MRC_SELFTESTS:-$(dirname "$0")/../testing/selftests/mrcore}" || exit 1
. ./lib.sh
. ./nvmeof.sh
. ./user_lib.sh

ADDR=192.168.90.1
NQN=nqn.2026-11.org.mrcore:demo
NVMET_PORT=1
# A broken data path fails a connect in seconds rather than hanging.
NVME_OPTS=ctrl_loss_tmo=5,reconnect_delay=1,fast_io_fail_tmo=0
MKEYS=/sys/kernel/debug/vhca/vhca0/mkeys
XLT=/sys/kernel/debug/vhca/vhca0/xlt
failed=0

say() { echo "demo: $*"; }
# show: indent a command's output under the narration.
show() { sed 's/^/demo:   /'; }
bad() {
	say "FAILED: $*"
	echo "not ok - demo: $*"
	failed=1
}

# fio_fig NAME RW BS QD SECS LABEL: a short fio run on $dev, narrated as
# "LABEL: N IOPS, M MB/s, mean latency L us" (fio's terse format v3:
# field 7 read KiB/s, 8 read IOPS, 16 mean completion latency in us).
fio_fig() {
	if ! run_for $(($5 + 60)) fio --thread --name="$1" --filename="$dev" \
		--direct=1 --ioengine=libaio --rw="$2" --bs="$3" \
		--iodepth="$4" --runtime="$5" --time_based \
		--output-format=terse --terse-version=3 > /tmp/fio.$1 2>&1 ||
	   ! grep -q '^3;' /tmp/fio.$1; then
		bad "fio $1: $(tail -1 /tmp/fio.$1)"
		return 1
	fi
	awk -F';' -v l="$6" '/^3;/ {
		printf "demo: %s: %d IOPS, %.1f MB/s, mean latency %d us\n",
		       l, $8, $7 * 1024 / 1e6, $16 }' /tmp/fio.$1
}

# snap_reads: the snapshot's fio has completed reads.
snap_reads() { [ "$(fio_read_kib /tmp/fio.snap)" -gt 0 ]; }

# mkey_summary < MKEYS: how many keys the device's memory holds, by state
# and access mode, from a copy of the decoded mkey table.
mkey_summary() {
	awk 'NR > 1 { n[$3 " " $4]++ }
	     END { for (k in n) printf "%5d  %s\n", n[k], k }' | sort -k2
}

say "kernel $(uname -r); loading mrcore.ko and vhca.ko"
load_mrcore || { bad "could not load the modules"; exit 1; }
say "creating vhca0 on netdev demo0 ($ADDR): rdma link add vhca0 type vhca netdev demo0"
rdma_link_up vhca vhca0 demo0 $ADDR || { bad "rdma link add vhca0"; exit 1; }
say "rdma dev show / rdma link show:"
{ rdma dev show vhca0; rdma link show vhca0/1; } | show
say "GID table of vhca0 port 1 (from demo0's addresses):"
for g in /sys/class/infiniband/vhca0/ports/1/gids/*; do
	v=$(cat "$g" 2>/dev/null)
	[ "$v" != 0000:0000:0000:0000:0000:0000:0000:0000 ] &&
		echo "demo:   gid ${g##*/} $v ($(cat /sys/class/infiniband/vhca0/ports/1/gid_attrs/types/${g##*/} 2>/dev/null))"
done
say "mrcore's view of vhca0 (debugfs mrcore/vhca0/stats):"
show < /sys/kernel/debug/mrcore/vhca0/stats
say "vhca0's device memory, the mkey table as the device sees it (debugfs vhca/vhca0/mkeys):"
show < $MKEYS
say "only the local DMA key so far: a PA-mode key covering all of memory"
vhca_baseline vhca0

say ""
say "--- NVMe-oF over vhca0 ---"
nvmeof_modules || { bad "NVMe-oF modules"; exit 1; }
old_tmo=$(nvme_timeouts 5 10)
if ! nvmet_up $ADDR; then
	bad "nvmet port on $ADDR"
	exit 1
fi
say "nvmet-rdma target exports a 128 MiB RAM disk ($NVMET_DEV) as $NQN on $ADDR:4420"
say "nvme-rdma host: connect to $ADDR with 2 I/O queues (both ends are vhca0)"
if dev=$(nvme_host_up $ADDR 2); then
	say "connected: $dev, $(($(cat /sys/block/${dev#/dev/}/size) / 2048)) MiB"
	say "nvme list:"
	nvme list 2>&1 | show
	for c in $(nvme_ctrls); do
		say "controller ${c##*/}: transport $(cat $c/transport), $(cat $c/address), state $(cat $c/state), $(($(cat $c/queue_count) - 1)) I/O queues of $(cat $c/sqsize 2>/dev/null || echo ?)+1 entries"
	done

	if run_for 60 pattern_rw "$dev" 16 >/dev/null; then
		say "wrote 16 MiB of random data through NVMe-oF, read it back: identical"
	else
		bad "16 MiB pattern read back over vhca differs"
	fi
	if run_for 60 same_range "$dev" "$NVMET_DEV" 16 0 >/dev/null; then
		say "and the target's RAM disk holds the same 16 MiB"
	else
		bad "the target's RAM disk does not hold the pattern"
	fi
	say "fio over vhca (the VM is emulated: figures show the path works, not its speed):"
	fio_fig rr randread 4k 32 5 "4 KiB random read, QD 32, 5 s"
	fio_fig sr read 128k 8 5 "128 KiB sequential read, QD 8, 5 s"

	say ""
	say "--- while connected, with a 4 KiB random-read fio running ---"
	fio --thread --name=snap --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randread --bs=4k --iodepth=16 --runtime=4 --time_based \
		--output-format=terse --status-interval=1 \
		< /dev/null > /tmp/fio.snap 2>&1 &
	fpid=$!
	# The snapshot once fio's reads are seen completing (its own count).
	wait_for $PROGRESS_TMO snap_reads ||
		bad "no read of the snapshot's fio completed in ${PROGRESS_TMO}s"
	say "mrcore's stats for vhca0 (MRs, keys and translation segments of the ULPs):"
	show < /sys/kernel/debug/mrcore/vhca0/stats
	# A registration lives for one I/O: read the table until it shows
	# one VALID MTT key (or 30 reads), and the xlt file until it shows
	# one's entries (it decodes each key with its slot held).
	n=0
	while [ $n -lt 30 ]; do
		cat $MKEYS > /tmp/mkeys.snap
		grep -q ' VALID *MTT ' /tmp/mkeys.snap && break
		n=$((n + 1))
	done
	say "mkey table, keys by state and access mode (FRWR MRs: FREE until"
	say "the host posts a registration for an I/O, VALID until invalidated):"
	mkey_summary < /tmp/mkeys.snap | show
	say "(the MTT keys are nvme-rdma's FRWR pools, one MR per queue entry; the"
	say "target reads and writes through the PA key: nvmet-rdma needs no MR on RoCE)"
	say "the first rows of the table:"
	head -6 /tmp/mkeys.snap | show
	v=$(awk '$3 == "VALID" && $4 == "MTT" {print; exit}' /tmp/mkeys.snap)
	if [ -n "$v" ]; then
		say "a VALID MTT key, caught in flight:"
		echo "$v" | show
	fi
	n=0
	while [ $n -lt 30 ]; do
		head -8 $XLT > /tmp/xlt.snap
		[ -s /tmp/xlt.snap ] && break
		n=$((n + 1))
	done
	if [ -s /tmp/xlt.snap ]; then
		say "a VALID key's translation entries (debugfs vhca/vhca0/xlt):"
		show < /tmp/xlt.snap
	else
		say "no VALID MTT/KLM key caught in the xlt file in 30 reads"
	fi
	say "rdma res show qp, vhca0 (GSI, and each queue's QP pair, host and target;"
	say "ib_core names a QP after rdma_cm, which creates it):"
	rdma_res qp vhca0 | show
	say "rdma res show cm_id, vhca0 (whose the queues are: nvme_rdma, nvmet_rdma):"
	rdma_res cm_id vhca0 | show
	say "rdma res show mr, vhca0: $(rdma_res mr vhca0 | wc -l) MRs, of which $(rdma_res_count mr vhca0 nvme_rdma) nvme_rdma's; the first:"
	rdma_res mr vhca0 | head -4 | show
	wait $fpid || bad "the background fio failed"

	say ""
	say "disconnecting the host"
	if nvme_host_down >/dev/null; then
		say "host disconnected: no controller left"
	else
		bad "disconnect"
	fi
else
	bad "the host did not connect: $(echo "$dev" | tail -1)"
fi
nvmet_down
if out=$(vhca_idle vhca0); then
	say "vhca0 is idle again: mrcore holds no MR, PD, key or translation of the ULPs"
else
	bad "vhca0 not idle after the disconnect: $out"
fi
say "mkey table after the disconnect:"
show < $MKEYS

say ""
say "--- user space over vhca0: Debian's libibverbs and librxe, unchanged ---"
say "(vhca presents rxe's user ABI; the host's root is mounted read-only over"
say "virtio-9p and the programs run in a chroot of it)"
if out=$(mrc_root_up 2>&1); then
	say "ibv_devinfo -d vhca0:"
	mrc_chroot ibv_devinfo -d vhca0 > /tmp/demo.devinfo 2>&1
	rc=$?
	show < /tmp/demo.devinfo
	if [ $rc != 0 ] || ! grep -q 'hca_id:[[:space:]]*vhca0$' /tmp/demo.devinfo; then
		bad "ibv_devinfo -d vhca0 (exit status $rc)"
	fi
	say "ib_write_bw, a server and a client process over vhca0 ($ADDR),"
	say "1000 RDMA WRITEs of 64 KiB; the client's report:"
	p="-d vhca0 -F -s 65536 -n 1000 -p 18515"
	# shellcheck disable=SC2086
	if mrc_pair tcp:18515 ib_write_bw $p -- ib_write_bw $p $ADDR; then
		show < "$MRC_CLI_OUT"
		fig=$(awk '/BW average\[MB\/sec\]/ {h = 1; next}
			   h && $1 == 65536 {
				printf "%s MiB/s on average (peak %s), %s million messages/s", $4, $3, $5
				exit }' "$MRC_CLI_OUT")
		if [ -n "$fig" ]; then
			say "ib_write_bw over vhca0: $fig (emulated VM: the path works, not its speed)"
		else
			bad "ib_write_bw over vhca0: no result line in the client's report"
		fi
	else
		bad "ib_write_bw over vhca0: $(mrc_pair_why)"
		tail -5 "$MRC_SRV_OUT" | sed 's/^/demo:   server: /'
		tail -5 "$MRC_CLI_OUT" | sed 's/^/demo:   client: /'
	fi
	if out=$(wait_for $PROGRESS_TMO vhca_idle vhca0 || vhca_idle vhca0); then
		say "both processes exited: vhca0 is idle again (their MRs, PDs and keys are gone)"
	else
		bad "vhca0 not idle after the programs exited: $out"
	fi
	mrc_root_down || bad "unmounting the chroot"
else
	bad "the host's root in a chroot: $(echo "$out" | tail -1)"
fi
run_for 60 rdma_link_down vhca0 demo0 >/dev/null || bad "rdma link del vhca0"
if run_for 60 unload_mrcore >/dev/null; then
	say "removed vhca0, unloaded vhca and mrcore cleanly"
else
	bad "rmmod vhca mrcore"
fi

say ""
say "--- for comparison: the same fio over rxe (soft RoCE) ---"
if modprobe rdma_rxe && rdma_link_up rxe rxe0 rxed0 10.77.0.1 &&
   nvmet_up 10.77.0.1 && dev=$(nvme_host_up 10.77.0.1 2); then
	fio_fig rr randread 4k 32 5 "rxe: 4 KiB random read, QD 32, 5 s"
	fio_fig sr read 128k 8 5 "rxe: 128 KiB sequential read, QD 8, 5 s"
	nvme_host_down >/dev/null
else
	say "the rxe baseline did not come up (not a vhca failure)"
fi
nvmet_down
rdma link del rxe0 2>/dev/null
ip link del rxed0 2>/dev/null
nvme_timeouts $old_tmo >/dev/null
if [ $failed = 0 ]; then
	say "done: everything above worked"
else
	say "done, with failures (see above)"
fi
exit $failed
