#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench, in one VM boot:
#
# 1. User MR registration: mr_bench times REG+DEREG rounds of 4 KiB to
#    1 GiB buffers (4 KiB pages and THP) through /dev/mrcore_test, that is
#    ib_reg_user_mr() and ib_dereg_mr(), on vhca0 and on rxe0 side by side;
#    tables with the ratio and vhca's translation entries. The format is in
#    Documentation/mrcore/registration.rst, "Benchmark".
# 2. Data-path copy rate, on the same two devices: dp_bench times a plain
#    memcpy between kernel buffers and RDMA WRITEs between two MRs over a
#    loopback RC pair (4 KiB, 64 KiB, 1 MiB); a table of MB/s with the
#    ratios vhca/memcpy and vhca/rxe. Then ./frwr_tests --bench: FRWR
#    REG_MR + LOCAL_INV cycles per second with 1, 16 and 256 pages, vhca
#    beside rxe (and on vhca once more with engine_linger_us=20), and
#    ./fmr_tests --bench: FMR pool map/unmap with cache
#    hits and misses on vhca (rxe has no FMRs). Then odp_bench: on-demand
#    paging on vhca (rxe has no ODP in 6.1): 1 GiB registration pinned vs
#    ODP, first-touch throughput of pinned, ODP and prefetched ODP memory,
#    fault-to-resume latency of 4 KiB and 2 MiB faults, invalidation cost.
# 3. NVMe-oF, one table: a 256 MiB brd RAM disk read directly (bare brd,
#    the ceiling with no fabric), and the same RAM disk exported by nvmet
#    over NVMe/TCP (nvmet-tcp, nvme-tcp), over RDMA on vhca0 and over RDMA
#    on rxe0 (nvmet-rdma, nvme-rdma), and on vhca0 once more with its
#    post_bytes at 4096 ("vhca0, post_send runs": a kernel post_send runs
#    the WQEs it may itself, vhca_engine_post(), off by default; the same
#    connection). The three are up at once, each on a
#    dummy netdev of its own with an nvmet port and subsystem of its own;
#    the host, in the same VM, connects to each once with nr_io_queues=2.
#    Each target's data is verified before any timing (16 MiB of a random
#    pattern written and read back through it, and for a fabric read on
#    the RAM disk too): a mismatch prints "not ok" and leaves its cells
#    n/a. Then two rounds, each running every target in turn, fio direct,
#    $RUNTIME s a run: 4 KiB random read at QD 32 and 128 KiB sequential
#    read at QD 16, 1 and 4 jobs (libaio, group_reporting), and 4 KiB
#    random read at QD 1 (psync) for the mean and 99th-percentile
#    completion latency; context switches and busy CPU time per I/O of the
#    4 KiB QD 32 1-job run (/proc/stat, read by fio's job right before its
#    first I/O and after its last), with where it ran: tasklet and irq_poll
#    softirqs and ksoftirqd switch-ins per I/O, each CPU's busy share;
#    and the 4 KiB QD 32 1-job run once more with fio submitting up to 16
#    reads a call (--iodepth_batch_submit=16, --iodepth_batch_complete_min=16). Cells read "round 1 / round 2". Around
#    each vhca 4 KiB QD 32 run, the share of the CPUs that was busy and the
#    share of that the engine's workers took (/proc/stat, vhca's debugfs
#    "engine"), and the IOPS the same CPU time would give with a free
#    engine; and for both vhca columns the share of the WQEs the posters
#    ran in their post_send (the rest the engine's workers ran).
# 4. User-space verbs (perftest), vhca0 beside rxe0, both up at once on
#    dummy netdevs of their own: Debian's perftest run from the host's root
#    in a chroot (user_lib.sh), server and client two processes on the
#    same device and address. ib_write_bw and ib_read_bw at 64 KiB and
#    1 MiB, ib_send_lat, ib_write_lat and ib_read_lat at 8 bytes, and
#    ib_write_bw --odp at both sizes beside the pinned figures (6.1's rxe
#    refuses ODP: its refusal is printed and its cells read "refused").
#    One table with the ratio vhca/rxe and the targets of the issue
#    (bandwidth at least 10x rxe0's, latency at most a fifth) read out as
#    met or not met: a read-out, not a check.
# 5. User-space registration (ureg_bench, in the chroot too), vhca0 beside
#    rxe0: ibv_reg_mr + ibv_dereg_mr at 4 KiB, 2 MiB, 64 MiB and 1 GiB,
#    ODP registration of 1 GiB (rxe 6.1 refuses ODP), and 64 MiB made
#    ready for RDMA by mmap + populate + ibv_reg_mr against libvhca's
#    vhcav_alloc_mr (vhca only). A table with the ratio vhca/rxe (below 1:
#    vhca is faster) and the target of issue 19 (vhca no slower than rxe
#    at any size) read out.
#
# BENCH_PARTS (vmtest.sh passes it as mrcore.bench=) names the parts to
# run, of "mr fmr nvmeof perftest ureg" (the default: all five).
#
# These are measurements: nothing is compared with a threshold. A figure
# that cannot be measured reads n/a and its part prints a "not ok" line
# saying why; the other parts still run.
# Runs in the selftests directory (MRC_SELFTESTS, by default where it is
# in the source tree), for its lib.sh and nvmeof.sh and for the tests that
# have a benchmark mode; its own programs are beside this script.
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
cd "${MRC_SELFTESTS:-$BENCH_DIR/../testing/selftests/mrcore}" || exit 1
. ./lib.sh
. ./nvmeof.sh
. ./user_lib.sh

BENCH_PARTS=${BENCH_PARTS:-mr fmr nvmeof perftest ureg}
RUNTIME=${BENCH_RUNTIME:-10}

MR_VHCA=vhca0
MR_VHCA_NETDEV=mbd0
MR_RXE=rxe0
MR_RXE_NETDEV=mbd1
# Options of mr_bench, e.g. "-s 0.1" for a tenth of the rounds.
MR_BENCH_ARGS=${MR_BENCH_ARGS:-}
# Options of dp_bench, e.g. "-t 1" for 1 s a cell.
DP_BENCH_ARGS=${DP_BENCH_ARGS:-}
# Options of frwr_tests --bench / fmr_tests --bench, e.g. "-t 1".
FRWR_BENCH_ARGS=${FRWR_BENCH_ARGS:-}
FMR_BENCH_ARGS=${FMR_BENCH_ARGS:-}

# mr_down: undo what mr_bench_part set up, best effort.
mr_down() {
	rdma link del $MR_VHCA 2>/dev/null
	rdma link del $MR_RXE 2>/dev/null
	ip link del $MR_VHCA_NETDEV 2>/dev/null
	ip link del $MR_RXE_NETDEV 2>/dev/null
	rmmod mrcore_test 2>/dev/null
	unload_mrcore 2>/dev/null
}

# mr_missing WHY: neither the registration nor the copy-rate figures can
# be measured.
mr_missing() {
	t_fail "bench: reg/dereg figures measured" "$1"
	t_fail "bench: data-path copy rates measured" "$1"
	mr_down
	return 1
}

# mr_bench_part: vhca0 and rxe0 on dummy netdevs of their own, mr_bench
# and dp_bench on both, then everything removed again so the NVMe-oF part
# starts clean.
mr_bench_part() {
	local rc

	# rxe's ICRC needs a crc32 implementation; the generic one always works.
	modprobe crc32_generic 2>/dev/null
	modprobe rdma_rxe || mr_missing "modprobe rdma_rxe failed" || return 1
	load_mrcore || mr_missing "mrcore and vhca do not load" || return 1
	load_mrcore_test || mr_missing "mrcore_test does not load" || return 1
	[ -c /dev/mrcore_test ] || mr_missing "no /dev/mrcore_test" || return 1
	[ -x $BENCH_DIR/mr_bench ] || mr_missing "no $BENCH_DIR/mr_bench" || return 1
	dummy_up $MR_VHCA_NETDEV 10.78.0.1/24 ||
		mr_missing "cannot create dummy $MR_VHCA_NETDEV" || return 1
	rdma link add $MR_VHCA type vhca netdev $MR_VHCA_NETDEV ||
		mr_missing "rdma link add $MR_VHCA failed" || return 1
	dummy_up $MR_RXE_NETDEV 10.79.0.1/24 ||
		mr_missing "cannot create dummy $MR_RXE_NETDEV" || return 1
	rdma link add $MR_RXE type rxe netdev $MR_RXE_NETDEV ||
		mr_missing "rdma link add $MR_RXE failed" || return 1

	# Its own "ok"/"not ok" line says whether every cell was measured.
	# shellcheck disable=SC2086
	$BENCH_DIR/mr_bench $MR_BENCH_ARGS $MR_VHCA $MR_RXE 2>&1
	rc=$?
	[ $rc -le 1 ] || t_fail "bench: mr_bench ran to its end" "exit status $rc"

	# The same: its last line is "ok"/"not ok". A wedged data path ends
	# its wait in the module after MRCT_QP_WAIT_MS (60 s without progress);
	# the deadline is for the rest.
	if [ -x $BENCH_DIR/dp_bench ]; then
		# shellcheck disable=SC2086
		run_for 300 $BENCH_DIR/dp_bench $DP_BENCH_ARGS $MR_VHCA $MR_RXE
		rc=$?
		[ $rc -le 1 ] ||
			t_fail "bench: dp_bench ran to its end" "exit status $rc"
	else
		t_fail "bench: data-path copy rates measured" "no $BENCH_DIR/dp_bench"
	fi

	if [ -x ./frwr_tests ]; then
		# shellcheck disable=SC2086
		run_for 300 ./frwr_tests --bench $FRWR_BENCH_ARGS $MR_VHCA $MR_RXE
		rc=$?
		[ $rc -le 1 ] ||
			t_fail "bench: frwr_tests --bench ran to its end" "exit status $rc"
		# The same on vhca with the engine lingering (off by default).
		if echo 20 > /sys/module/vhca/parameters/engine_linger_us; then
			echo "bench: FRWR again on $MR_VHCA with engine_linger_us=20"
			# shellcheck disable=SC2086
			run_for 300 ./frwr_tests --bench $FRWR_BENCH_ARGS $MR_VHCA
			rc=$?
			echo 0 > /sys/module/vhca/parameters/engine_linger_us
			[ $rc -le 1 ] ||
				t_fail "bench: frwr_tests --bench (linger) ran to its end" "exit status $rc"
		fi
	else
		t_fail "bench: FRWR cycle rates measured" "no ./frwr_tests in $(pwd)"
	fi

	# On-demand paging exists on vhca only (6.1's rxe refuses the
	# registration, which odp_bench reports): its own ok/not ok line.
	if [ -x $BENCH_DIR/odp_bench ]; then
		run_for 600 $BENCH_DIR/odp_bench $MR_VHCA $MR_RXE
		rc=$?
		[ $rc -le 1 ] || t_fail "bench: odp_bench ran to its end" "exit status $rc"
	else
		t_fail "bench: odp figures measured" "no $BENCH_DIR/odp_bench"
	fi

	t_eval "bench: $MR_VHCA and $MR_RXE removed, modules unloaded" \
		"rdma link del $MR_VHCA && rdma link del $MR_RXE &&
		 rmmod mrcore_test && unload_mrcore"
	ip link del $MR_VHCA_NETDEV
	ip link del $MR_RXE_NETDEV
}

for p in $BENCH_PARTS; do
	case "$p" in
	mr | fmr | nvmeof | perftest | ureg) ;;
	*) t_fail "bench: BENCH_PARTS" "unknown part $p (mr, fmr, nvmeof, perftest, ureg)" ;;
	esac
done

# bench_part NAME: NAME is one of the parts BENCH_PARTS asks for.
bench_part() {
	case " $BENCH_PARTS " in
	*" $1 "*) return 0 ;;
	esac
	echo "bench: part $1 not run (BENCH_PARTS=$BENCH_PARTS)"
	return 1
}

bench_part mr && mr_bench_part

# FMR pools have no rxe counterpart: hits against misses on vhca alone.
# It loads and unloads the modules itself and prints its own ok/not ok.
bench_part fmr && FMR_BENCH_ARGS=$FMR_BENCH_ARGS sh ./fmr_chardev.sh --bench

# --- NVMe-oF --------------------------------------------------------------

# One table, every cell of it measured in this boot: a brd RAM disk read
# directly (the ceiling, no fabric) and the same RAM disk exported by nvmet
# over NVMe/TCP, over RDMA on vhca0 and over RDMA on rxe0. NV_TARGETS are
# the columns, in the order each round runs them.
NV_TARGETS="brd tcp vhca vhcap rxe"
NV_BRD_MIB=256
# vhca's post_bytes as loaded (vhca0's column runs with it, vhcap's with
# NV_POST_RUN); put back after the part.
NV_POST=/sys/module/vhca/parameters/post_bytes
NV_POST_BYTES=
NV_POST_RUN=4096
# What each target is verified with before any timing: a fresh random
# pattern of this many MiB at the start of the disk.
NV_VERIFY_MIB=16
# A fabric's host connects once, with this many I/O queues (nvme-tcp and
# nvme-rdma cap them at the CPUs), for every workload of both rounds.
NV_QUEUES=2

# nv_set TYPE N WHAT VALUE / nv_get TYPE N WHAT: a figure or a setting
# kept by name (here TYPE a target, N the round, 0 for the target's own
# settings; the perftest part keeps its cells with them too).
nv_set() { eval "nv_${1}_${2}_$3=\$4"; }
nv_get() { eval "echo \${nv_${1}_${2}_$3:-}"; }

# nv_why TYPE WHY: the first reason TYPE's figures are incomplete;
# nv_why_of TYPE prints it.
nv_why() {
	[ -n "$(nv_why_of "$1")" ] || eval "nv_why_$1=\$2"
}
nv_why_of() { eval "echo \${nv_why_$1:-}"; }

# nv_use T: nvmeof.sh's NQN, NVMET_PORT and NVME_TRTYPE for target T, and
# its column's label, RDMA device, netdev and address (NV_LABEL, NV_DEV,
# NV_NETDEV, NV_ADDR). Each fabric has a dummy netdev of its own, with an
# nvmet port and subsystem of its own on its address; vhcap is vhca's,
# run with post_bytes NV_POST_RUN (nv_post).
nv_use() {
	NQN=nqn.2026-11.org.mrcore:bench-$1
	case "$1" in
	brd)	NV_LABEL="bare brd" NV_DEV='' NV_NETDEV='' NV_ADDR='' ;;
	tcp)	NV_LABEL=NVMe/TCP NV_DEV='' NV_NETDEV=nbt0 NV_ADDR=10.75.0.1
		NVMET_PORT=13 NVME_TRTYPE=tcp ;;
	vhca)	NV_LABEL=vhca0 NV_DEV=vhca0 NV_NETDEV=nbv0 NV_ADDR=10.76.0.1
		NVMET_PORT=12 NVME_TRTYPE=rdma ;;
	vhcap)	NV_LABEL="vhca0, post_send runs" NV_DEV=vhca0 NV_NETDEV=nbv0
		NV_ADDR=10.76.0.1 NVMET_PORT=12 NVME_TRTYPE=rdma
		NQN=nqn.2026-11.org.mrcore:bench-vhca ;;
	rxe)	NV_LABEL=rxe0 NV_DEV=rxe0 NV_NETDEV=nbr0 NV_ADDR=10.77.0.1
		NVMET_PORT=11 NVME_TRTYPE=rdma ;;
	esac
}

# nv_brd_up: $NVMET_DEV (/dev/ram0) of NV_BRD_MIB MiB, brd loaded again
# when it has another size, and every page of it written once: brd fills
# a read of a page never written with zeros instead of copying it, which
# would flatter the bare column.
nv_brd_up() {
	local sectors=$((NV_BRD_MIB * 2048))

	if [ -e /sys/block/ram0 ] &&
	   [ "$(cat /sys/block/ram0/size)" != $sectors ]; then
		rmmod brd || { echo "brd has another size and is in use"; return 1; }
	fi
	modprobe brd rd_nr=1 rd_size=$((NV_BRD_MIB * 1024)) || return 1
	[ "$(cat /sys/block/ram0/size 2>/dev/null)" = $sectors ] ||
		{ echo "/dev/ram0 is not $NV_BRD_MIB MiB"; return 1; }
	dd if=/dev/zero of="$NVMET_DEV" bs=1M count=$NV_BRD_MIB oflag=direct 2>/dev/null ||
		{ echo "cannot write $NVMET_DEV"; return 1; }
}

# nv_verify DEV: NV_VERIFY_MIB MiB of a fresh random pattern written to
# DEV with O_DIRECT read back the same through DEV and, when DEV is a
# fabric's, on the RAM disk itself (nvmeof.sh's pattern_rw, same_range).
nv_verify() {
	pattern_rw "$1" $NV_VERIFY_MIB ||
		{ echo "$NV_VERIFY_MIB MiB written to $1 read back different (or dd failed)"; return 1; }
	[ "$1" = "$NVMET_DEV" ] && return 0
	same_range "$1" "$NVMET_DEV" $NV_VERIFY_MIB 0 ||
		{ echo "$1 and $NVMET_DEV differ in their first $NV_VERIFY_MIB MiB (or dd failed)"; return 1; }
}

# nv_up T: target T ready for the rounds. For a fabric: its netdev (and
# RDMA device), an nvmet port and subsystem exporting the RAM disk over
# its transport, and a host connected with NV_QUEUES I/O queues. Then T's
# data is verified ("ok"/"not ok" line); only a verified target's block
# device is kept, so the cells of any other read n/a, and nv_why says why.
nv_up() {
	local t=$1 out blk

	nv_use "$t"
	if [ "$t" = vhcap ]; then
		blk=$(nv_get vhca 0 blk)
		[ -n "$blk" ] || { nv_why vhcap "vhca0 is not up"; return 1; }
		[ -n "$NV_POST_BYTES" ] ||
			{ nv_why vhcap "no $NV_POST"; return 1; }
		nv_set vhcap 0 queues "$(nv_get vhca 0 queues)"
		nv_set vhcap 0 blk "$blk"
		return 0
	fi
	blk=$NVMET_DEV
	if [ "$t" != brd ]; then
		if [ "$t" = tcp ]; then
			out=$(dummy_up "$NV_NETDEV" "$NV_ADDR/24" 2>&1)
		else
			out=$(run_for $((PROGRESS_TMO + 30)) rdma_link_up "$t" "$NV_DEV" "$NV_NETDEV" "$NV_ADDR")
		fi || { nv_why "$t" "${NV_DEV:-$NV_NETDEV}: $(echo "$out" | tail -1)"; return 1; }
		if ! out=$(nvmet_up "$NV_ADDR" 2>&1); then
			nv_why "$t" "nvmet $NVME_TRTYPE port on $NV_ADDR: $(echo "$out" | tail -1)"
			return 1
		fi
		if ! blk=$(nvme_host_up "$NV_ADDR" $NV_QUEUES); then
			nv_why "$t" "connect, nr_io_queues=$NV_QUEUES: $(echo "$blk" | tail -1)"
			return 1
		fi
		nv_set "$t" 0 queues "$(nvme_queues)"
	fi
	if ! out=$(run_for 120 nv_verify "$blk"); then
		t_fail "bench: NVMe-oF, $NV_LABEL: data verified before timing" \
			"$(echo "$out" | tail -1)"
		nv_why "$t" "data not verified: $(echo "$out" | tail -1)"
		return 1
	fi
	t_ok "bench: NVMe-oF, $NV_LABEL: data verified before timing ($blk, $NV_VERIFY_MIB MiB)"
	nv_set "$t" 0 blk "$blk"
}

# nv_down T: undo nv_up T, best effort, once; a step that fails counts
# against T's figures only when nothing did before.
nv_down() {
	nv_use "$1"
	[ "$1" = brd ] || [ "$1" = vhcap ] && return 0
	[ -z "$(nv_get "$1" 0 down)" ] || return 0
	nv_set "$1" 0 down 1
	nvme_host_down >/dev/null || nv_why "$1" "disconnect timed out"
	run_for 60 nvmet_down || nv_why "$1" "nvmet port removal timed out"
	if [ "$1" = tcp ]; then
		ip link del "$NV_NETDEV" 2>/dev/null ||
			nv_why "$1" "ip link del $NV_NETDEV failed"
	else
		run_for 60 rdma_link_down "$NV_DEV" "$NV_NETDEV" >/dev/null ||
			nv_why "$1" "rdma link del $NV_DEV failed"
	fi
}

# nv_fio T R WHAT DEV ENGINE RW BS QD JOBS [OPTION...]: one fio run of
# $RUNTIME s on DEV, O_DIRECT, all jobs reported together
# (group_reporting), its terse line (version 3) in /tmp/nv_fio.out. fio
# runs in /tmp, where it writes the output of an --exec_prerun or
# --exec_postrun command (nv.prerun.txt, nv.postrun.txt). On failure
# WHAT's failure is kept for T; after a run that overran its deadline T
# runs nothing more (a wedged fabric would only time out again).
nv_fio() {
	local t=$1 r=$2 w=$3 dev=$4 eng=$5 rw=$6 bs=$7 qd=$8 jobs=$9 rc

	shift 9
	[ -z "$(nv_get "$t" 0 dead)" ] || return 1
	rm -f /tmp/nv.prerun.txt /tmp/nv.postrun.txt
	(cd /tmp && run_for $((RUNTIME + 60)) \
		fio --thread --name=nv --filename="$dev" --direct=1 \
		    --ioengine="$eng" --rw="$rw" --bs="$bs" --iodepth="$qd" \
		    --numjobs="$jobs" --group_reporting --time_based \
		    --runtime="$RUNTIME" --output-format=terse \
		    --terse-version=3 "$@") > /tmp/nv_fio.out 2>&1
	rc=$?
	[ $rc = 124 ] && nv_set "$t" 0 dead 1
	if [ $rc != 0 ] || ! grep -q '^3;' /tmp/nv_fio.out; then
		nv_why "$t" "round $r, $w: fio failed ($rc): $(grep -v -e '^3;' -e 'Saving output of' /tmp/nv_fio.out | tail -1)"
		return 1
	fi
}

# nv_val WHAT: a figure of the terse line in /tmp/nv_fio.out, whose
# fields (version 3, the read side; fio's HOWTO, "Terse output") are:
# 6 KiB read, 7 bandwidth in KiB/s, 8 IOPS, 14 to 17 completion latency
# min, max, mean and deviation in us, 18 to 37 its percentiles, each as
# "P%=US" (fio's default list, which has 99.000000%). WHAT: kib, iops,
# mib (MiB/s), lat (mean completion latency, us), p99 (its 99th
# percentile, us). fio reports no submission latency for psync, so its
# completion latency is the whole of a read there.
nv_val() {
	awk -F';' -v w="$1" '$1 == "3" {
		if (w == "kib") print $6
		else if (w == "iops") print $8
		else if (w == "mib") printf "%.1f\n", $7 / 1024
		else if (w == "lat") printf "%.1f\n", $16
		else if (w == "p99")
			for (i = 18; i <= 37; i++)
				if ($i ~ /^99\.0*%=[0-9]+$/) {
					v = $i
					sub(/^.*=/, "", v)
					print v
					break
				}
		exit
	}' /tmp/nv_fio.out
}

# nv_counters [FILE...]: from /proc/stat's lines (and a vhca engine file's)
# in FILE or on stdin: the busy and total CPU time of all CPUs so far in
# USER_HZ ticks (busy: user, nice, system, irq, softirq, steal), the
# context switches of all CPUs so far, the nanoseconds the engine has
# been busy and the WQEs it completed in posters' calls and in its
# workers (0 without an engine file); nothing without /proc/stat.
nv_counters() {
	awk '$1 == "cpu" {busy = $2 + $3 + $4 + $7 + $8 + $9; all = busy + $5 + $6}
	     $1 == "ctxt" {ctxt = $2}
	     $1 == "busy_ns" {eng = $2}
	     $1 == "inline_wqes" {inl = $2}
	     $1 == "worker_wqes" {wrk = $2}
	     END {if (ctxt != "") print busy, all, ctxt, eng + 0, inl + 0, wrk + 0}' "$@" 2>/dev/null
}

# nv_ksoftirqd: the schedstat files of the ksoftirqd threads (their third
# field counts the times each was switched in).
nv_ksoftirqd() {
	local p c

	for p in /proc/[0-9]*; do
		read -r c 2>/dev/null < "$p/comm" || continue
		case "$c" in ksoftirqd/*) echo "$p/schedstat" ;; esac
	done
}

# nv_where [FILE]: from the output of "head -v" of /proc/stat,
# /proc/softirqs, /proc/interrupts and the ksoftirqd schedstat files
# (nv_round's 4 KiB 1-job run reads them with the counters): the TASKLET
# and IRQ_POLL softirqs so far, the times ksoftirqd was switched in, the
# irq_work interrupts (IWI: vhca's post_send runs raise one each to make
# their callbacks), then each CPU's busy and total ticks (as nv_counters).
nv_where() {
	awk '/^==> / {f = $2; next}
	     f == "/proc/stat" && $1 ~ /^cpu[0-9]+$/ {
		n = substr($1, 4) + 0
		b[n] = $2 + $3 + $4 + $7 + $8 + $9; a[n] = b[n] + $5 + $6
		if (n + 1 > nc) nc = n + 1 }
	     f == "/proc/softirqs" && $1 == "TASKLET:" {for (i = 2; i <= NF; i++) t += $i}
	     f == "/proc/softirqs" && $1 == "IRQ_POLL:" {for (i = 2; i <= NF; i++) q += $i}
	     f == "/proc/interrupts" && $1 == "IWI:" {
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) w += $i }
	     f ~ /^\/proc\/[0-9]+\/schedstat$/ {k += $3}
	     END {
		printf "%.0f %.0f %.0f %.0f", t, q, k, w
		for (i = 0; i < nc; i++) printf " %.0f %.0f", b[i], a[i]
		print "" }' "$@" 2>/dev/null
}

# nv_where_line R W0 W1 KIB: where a 4 KiB run of the current column
# (NV_LABEL) went, from nv_where at its start (W0) and end (W1): tasklet
# and irq_poll softirqs, ksoftirqd switch-ins and irq_work interrupts per
# I/O, and how busy each CPU was: work that stays on one CPU shows as one
# busy CPU.
nv_where_line() {
	awk -v r="$1" -v w0="$2" -v w1="$3" -v kib="$4" -v l="$NV_LABEL" 'BEGIN {
		na = split(w0, a, " "); split(w1, b, " ")
		ios = kib / 4
		if (ios <= 0 || na < 6) {
			print "bench: NVMe-oF round " r ", " l ", 4 KiB QD32 1 job: where it ran not measured"
			exit
		}
		cpus = ""
		for (i = 5; i + 1 <= na; i += 2) {
			all = b[i + 1] - a[i + 1]
			cpus = cpus sprintf(", CPU%d busy %.0f%%", (i - 5) / 2,
					    all > 0 ? 100 * (b[i] - a[i]) / all : 0)
		}
		printf "bench: NVMe-oF round %d, %s, 4 KiB QD32 1 job: per I/O %.2f tasklet and %.2f irq_poll softirqs, ksoftirqd switched in %.2f times, %.2f irq_work interrupts%s\n",
		       r, l, (b[1] - a[1]) / ios, (b[2] - a[2]) / ios, (b[3] - a[3]) / ios,
		       (b[4] - a[4]) / ios, cpus
	}'
}

# nv_inline C0 C1: the percentage of the WQEs completed between
# nv_counters C0 and C1 that their posters ran; nothing without any.
nv_inline() {
	awk -v c0="$1" -v c1="$2" 'BEGIN {
		split(c0, a, " "); split(c1, b, " ")
		inl = b[5] - a[5]; all = inl + b[6] - a[6]
		if (all > 0)
			printf "%.0f\n", 100 * inl / all
	}'
}

# nv_post T: vhca's post_bytes for target T's runs: NV_POST_RUN for
# vhcap, as loaded for vhca.
nv_post() {
	case "$1" in
	vhca)	echo "$NV_POST_BYTES" > "$NV_POST" ;;
	vhcap)	echo "$NV_POST_RUN" > "$NV_POST" ;;
	esac 2>/dev/null
}

# nv_sources: the files nv_counters reads for the current target:
# /proc/stat, and vhca's engine file on vhca.
nv_sources() {
	echo /proc/stat
	[ -r "/sys/kernel/debug/vhca/$NV_DEV/engine" ] &&
		echo "/sys/kernel/debug/vhca/$NV_DEV/engine"
}

# nv_perio C0 C1 KIB: context switches and busy CPU time (us) per I/O of
# a 4 KiB run that read KIB KiB, from nv_counters at its start (C0) and
# at its end (C1); nothing without I/Os or counters.
nv_perio() {
	awk -v c0="$1" -v c1="$2" -v kib="$3" \
	    -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" 'BEGIN {
		split(c0, a, " "); split(c1, b, " ")
		ios = kib / 4
		if (ios > 0 && a[3] != "" && b[3] != "")
			printf "%.2f %.1f\n", (b[3] - a[3]) / ios,
			       (b[1] - a[1]) * 1e6 / hz / ios
	}'
}

# nv_share R JOBS WHAT FIGURE UNIT C0 C1: where the CPUs went during the
# run WHAT (e.g. "4 KiB randread") of the current vhca column (NV_LABEL;
# nv_counters at its start and end) that gave FIGURE UNIT (IOPS, MiB/s),
# and the FIGURE the same CPU time would give if the engine cost nothing:
# the ceiling of any engine speed-up when the CPUs are saturated.
nv_share() {
	awk -v r="$1" -v j="$2" -v what="$3" -v fig="$4" -v unit="$5" \
	    -v c0="$6" -v c1="$7" -v l="$NV_LABEL" \
	    -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" 'BEGIN {
		split(c0, a, " "); split(c1, b, " ")
		busy = (b[1] - a[1]) / hz; total = (b[2] - a[2]) / hz
		eng = (b[4] - a[4]) / 1e9
		if (total <= 0 || busy <= eng || fig == "") {
			print "bench: NVMe-oF round " r ", " l ", " j " job(s), " what ": CPU share not measured"
			exit
		}
		printf "bench: NVMe-oF round %d, %s, %d job(s), %s: CPUs busy %.0f%% of the time, vhca engine %.1f%% of the CPU time used; with a free engine at most %.0f %s (%.2fx)\n",
		       r, l, j, what, 100 * busy / total, 100 * eng / busy,
		       fig * busy / (busy - eng), unit, busy / (busy - eng)
	}'
}

# nv_round T R: round R of target T, each workload a fio run of $RUNTIME s:
# 4 KiB random reads at QD 32 with 1 and 4 jobs and 128 KiB sequential
# reads at QD 16 with 1 and 4 jobs (libaio), then 4 KiB random reads at
# QD 1 (psync, 1 job) for the latency. The 4 KiB 1-job run's job reads
# the counters (nv_counters) itself right before its first I/O and right
# after its last (fio's exec_prerun and exec_postrun), so that fio's
# start and exit stay out of the context switches and CPU time per I/O;
# the 4-job run's four jobs would each run those commands, so on vhca its
# engine's share (nv_share) comes from counters read around the run.
nv_round() {
	local t=$1 r=$2 blk j c0 c1 src where pio vhca=

	blk=$(nv_get "$t" 0 blk)
	[ -n "$blk" ] || return 0
	case "$t" in
	vhca)	vhca=1 ;;
	vhcap)	vhca=1
		[ -z "$(nv_get vhca 0 down)" ] || return 0 ;;
	esac
	nv_use "$t"
	nv_post "$t"
	src=$(nv_sources | tr '\n' ' ')
	where="/proc/softirqs /proc/interrupts $(nv_ksoftirqd | tr '\n' ' ')"
	if nv_fio "$t" "$r" "4 KiB QD32 1 job" "$blk" libaio randread 4k 32 1 \
		  --exec_prerun="head -v -n 1000 $src $where" \
		  --exec_postrun="head -v -n 1000 $src $where"; then
		c0=$(nv_counters /tmp/nv.prerun.txt)
		c1=$(nv_counters /tmp/nv.postrun.txt)
		nv_set "$t" "$r" iops1 "$(nv_val iops)"
		nv_where_line "$r" "$(nv_where /tmp/nv.prerun.txt)" \
			"$(nv_where /tmp/nv.postrun.txt)" "$(nv_val kib)"
		pio=$(nv_perio "$c0" "$c1" "$(nv_val kib)")
		nv_set "$t" "$r" ctx "${pio% *}"
		nv_set "$t" "$r" cpu "${pio#* }"
		if [ -n "$vhca" ]; then
			nv_share "$r" 1 "4 KiB randread" \
				 "$(nv_get "$t" "$r" iops1)" IOPS "$c0" "$c1"
			nv_set "$t" "$r" inl "$(nv_inline "$c0" "$c1")"
		fi
	fi
	# The same, fio handing the kernel 16 reads per io_submit() and
	# reaping 16 before it refills (its default is one at a time;
	# without the second option it refills one by one again): whether
	# the column waits for its submitter.
	nv_fio "$t" "$r" "4 KiB QD32 1 job, batches of 16" "$blk" libaio randread 4k 32 1 \
		--iodepth_batch_submit=16 --iodepth_batch_complete_min=16 &&
		nv_set "$t" "$r" iopsb "$(nv_val iops)"
	# shellcheck disable=SC2086
	c0=$(nv_counters $src)
	if nv_fio "$t" "$r" "4 KiB QD32 4 jobs" "$blk" libaio randread 4k 32 4; then
		# shellcheck disable=SC2086
		c1=$(nv_counters $src)
		nv_set "$t" "$r" iops4 "$(nv_val iops)"
		[ -n "$vhca" ] && nv_share "$r" 4 "4 KiB randread" \
			"$(nv_get "$t" "$r" iops4)" IOPS "$c0" "$c1"
	fi
	for j in 1 4; do
		# shellcheck disable=SC2086
		c0=$(nv_counters $src)
		nv_fio "$t" "$r" "128 KiB QD16 $j job(s)" "$blk" libaio read 128k 16 $j ||
			continue
		# shellcheck disable=SC2086
		c1=$(nv_counters $src)
		nv_set "$t" "$r" mib$j "$(nv_val mib)"
		[ -n "$vhca" ] && nv_share "$r" "$j" "128 KiB read" \
			"$(nv_get "$t" "$r" mib$j)" MiB/s "$c0" "$c1"
	done
	if nv_fio "$t" "$r" "4 KiB QD1 psync" "$blk" psync randread 4k 1 1; then
		nv_set "$t" "$r" lat "$(nv_val lat)"
		nv_set "$t" "$r" p99 "$(nv_val p99)"
	fi
	echo "bench: NVMe-oF round $r, $NV_LABEL ($blk):" \
	     "4 KiB QD32 $(nv_get "$t" "$r" iops1) / $(nv_get "$t" "$r" iops4) IOPS (1 / 4 jobs)," \
	     "128 KiB QD16 $(nv_get "$t" "$r" mib1) / $(nv_get "$t" "$r" mib4) MiB/s," \
	     "QD1 latency $(nv_get "$t" "$r" lat) us mean, $(nv_get "$t" "$r" p99) us p99;" \
	     "per I/O $(nv_get "$t" "$r" ctx) context switches, $(nv_get "$t" "$r" cpu) us CPU" \
	     "${vhca:+; WQEs run in post_send $(nv_get "$t" "$r" inl)%}"
}

# nv_cell T WHAT: T's WHAT as "round 1 / round 2", n/a for a missing one.
nv_cell() {
	local a b

	a=$(nv_get "$1" 1 "$2")
	b=$(nv_get "$1" 2 "$2")
	echo "${a:-n/a} / ${b:-n/a}"
}

# nv_trow LABEL WHAT: a row of the table, one cell a target.
nv_trow() {
	printf '| %-44s | %17s | %17s | %17s | %17s | %17s |\n' "$1" \
		"$(nv_cell brd "$2")" "$(nv_cell tcp "$2")" \
		"$(nv_cell vhca "$2")" "$(nv_cell vhcap "$2")" \
		"$(nv_cell rxe "$2")"
}

# nv_ratio A B: A / B with two decimals, or n/a (the perftest and ureg
# tables' ratios).
nv_ratio() {
	case "$1:$2" in
	n/a:* | *:n/a | :* | *: | *:0 | *:0.0) echo n/a; return ;;
	esac
	awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'
}

# nv_verdict T: one line, whether every cell of T's column was measured.
nv_verdict() {
	local r w why

	nv_use "$1"
	why=$(nv_why_of "$1")
	for r in 1 2; do
		for w in iops1 iops4 mib1 mib4 lat p99 ctx cpu; do
			case "$(nv_get "$1" $r $w)" in
			"" | 0 | 0.0) why=${why:-"round $r: no $w figure"} ;;
			esac
		done
	done
	if [ -z "$why" ]; then
		t_ok "bench: NVMe-oF table, $NV_LABEL column measured"
	else
		t_fail "bench: NVMe-oF table, $NV_LABEL column measured" "$why"
	fi
}

nvmeof_part() {
	local t0 out t r ncpu

	t0=$(date +%s)
	if ! out=$(nv_brd_up 2>&1) || ! out=$(nvmeof_modules 2>&1); then
		t_fail "bench: NVMe-oF: a $NV_BRD_MIB MiB brd and nvmet" \
			"$(echo "${out:-modprobe failed}" | tail -1)"
		return 1
	fi
	nvmeof_tcp_modules || nv_why tcp "modprobe nvmet-tcp nvme-tcp failed"
	modprobe rdma_rxe || nv_why rxe "modprobe rdma_rxe failed"
	load_mrcore || nv_why vhca "mrcore and vhca do not load"
	NV_POST_BYTES=$(cat "$NV_POST" 2>/dev/null)
	# A broken connection fails I/O at once instead of hanging fio.
	NVME_OPTS=ctrl_loss_tmo=5,reconnect_delay=1,fast_io_fail_tmo=0
	# A target that failed is taken down at once: its reconnects and
	# timeouts would otherwise run during the other targets' timed runs,
	# whose context switches and CPU time are the whole system's.
	for t in $NV_TARGETS; do
		[ -n "$(nv_why_of "$t")" ] || nv_up "$t" || nv_down "$t"
	done
	for r in 1 2; do
		for t in $NV_TARGETS; do
			nv_round "$t" $r
			[ -z "$(nv_get "$t" 0 dead)" ] || nv_down "$t"
		done
	done
	nv_post vhca
	for t in $NV_TARGETS; do
		nv_down "$t"
	done
	run_for 60 unload_mrcore >/dev/null ||
		nv_why vhca "rmmod vhca mrcore failed"
	rm -f /tmp/nv_fio.out /tmp/nv.prerun.txt /tmp/nv.postrun.txt /tmp/pat \
	      /tmp/back /tmp/ra /tmp/rb

	ncpu=$(grep -c ^processor /proc/cpuinfo)
	echo "bench: NVMe-oF: a $NV_BRD_MIB MiB brd RAM disk (every page written) read directly (bare brd)," \
	     "and exported by nvmet, host in the same VM, over NVMe/TCP (nvmet-tcp, nvme-tcp) on a dummy" \
	     "netdev's address, and over RDMA (nvmet-rdma, nvme-rdma) on vhca0 and on rxe0"
	echo "bench: nr_io_queues=$NV_QUEUES, I/O queues used ($ncpu CPUs):" \
	     "NVMe/TCP $(nv_get tcp 0 queues), vhca0 $(nv_get vhca 0 queues), rxe0 $(nv_get rxe 0 queues);" \
	     "$NV_VERIFY_MIB MiB written and read back through each before timing"
	echo "bench: fio direct, ${RUNTIME} s a run, libaio (throughput), psync (QD1 latency:" \
	     "completion latency); two rounds, a round runs every column in turn; cells: round 1 / round 2"
	echo "bench: per I/O: /proc/stat read by the 4 KiB QD32 1-job run's job before its first I/O and" \
	     "after its last, the deltas over fio's I/O count: context switches, busy CPU time of all" \
	     "CPUs (user, nice, system, irq, softirq, steal); on vhca, the share of the WQEs completed" \
	     "meanwhile that their posters ran (vhca's post_bytes $NV_POST_BYTES; $NV_POST_RUN in vhca0, post_send runs)"
	printf '| %-44s | %17s | %17s | %17s | %17s | %17s |\n' "workload (round 1 / round 2)" \
		"bare brd" NVMe/TCP vhca0 "vhca0, post_send" rxe0
	echo "|----------------------------------------------|------------------:|------------------:|------------------:|------------------:|------------------:|"
	nv_trow "4 KiB randread QD32, 1 job (IOPS)" iops1
	nv_trow "4 KiB randread QD32, 1 job, 16/submit (IOPS)" iopsb
	nv_trow "4 KiB randread QD32, 4 jobs (IOPS)" iops4
	nv_trow "128 KiB read QD16, 1 job (MiB/s)" mib1
	nv_trow "128 KiB read QD16, 4 jobs (MiB/s)" mib4
	nv_trow "4 KiB randread QD1 latency, mean (us)" lat
	nv_trow "4 KiB randread QD1 latency, p99 (us)" p99
	nv_trow "context switches per I/O (4 KiB QD32, 1 job)" ctx
	nv_trow "CPU time per I/O, us (4 KiB QD32, 1 job)" cpu
	nv_trow "WQEs run in post_send, % (4 KiB QD32, 1 job)" inl
	for t in $NV_TARGETS; do
		nv_verdict "$t"
	done
	echo "bench: NVMe-oF part took $(($(date +%s) - t0)) s"
}

bench_part nvmeof && nvmeof_part

# --- User-space verbs: perftest -------------------------------------------

# perftest's iterations (-n), chosen so that the part's 18 runs take a few
# minutes under QEMU TCG: 2000 x 64 KiB (125 MiB) and 200 x 1 MiB (200 MiB)
# a bandwidth run, 1000 round trips (or reads) a latency run. Each run is
# bounded by user_lib's MRC_PAIR_TMO; after a run of a device timed out,
# that device's remaining runs are not started.
PT_ITERS_64K=${PT_ITERS_64K:-2000}
PT_ITERS_1M=${PT_ITERS_1M:-200}
PT_ITERS_LAT=${PT_ITERS_LAT:-1000}
PT_PORT=21000
# What perftest prints when the device has no ODP capability (6.1's rxe):
# its ODP check fails, then its MR.
PT_NO_ODP="Send is not supported for RC transport"

# The cells are kept with the NVMe-oF part's nv_set/nv_get (TYPE
# perftest_rxe or perftest_vhca, JOBS "c", WHAT the case) and nv_why.

# pt_run TYPE DEV ADDR CASE SIZE ITERS PROG [ARGS...]: one perftest run,
# server and client (user_lib's mrc_pair) on DEV, ADDR the server's; the
# client's figure is kept as CASE: the bandwidth runs' BW average (MiB/s,
# perftest's default unit), the latency runs' t_typical (the median,
# microseconds). perftest picks DEV's IPv4 RoCE v2 GID itself.
pt_run() {
	local t=perftest_$1 dev=$2 addr=$3 c=$4 size=$5 iters=$6 prog=$7 why0
	shift 7
	why0=$(eval "echo \"\${nv_why_$t:-}\"")
	pt_run1 "$t" "$dev" "$addr" "$c" "$size" "$iters" "$prog" "$@" && return 0
	# A latency run whose figures all came out "inf" (seen under TCG on
	# rxe0 and on vhca0; perftest derives them from a clock rate it
	# measures) measured nothing: it runs once more.
	case "$prog" in *_lat) ;; *) return 1 ;; esac
	grep -q -w inf "$MRC_CLI_OUT" 2>/dev/null || return 1
	echo "bench: perftest $dev $prog -s $size: figures were inf (perftest's clock rate); once more"
	eval "nv_why_$t=\$why0"
	pt_run1 "$t" "$dev" "$addr" "$c" "$size" "$iters" "$prog" "$@"
}

# pt_run1: one pt_run attempt, same arguments but TYPE as perftest_TYPE.
pt_run1() {
	local t=$1 dev=$2 addr=$3 c=$4 size=$5 iters=$6 prog=$7 col hdr p v
	shift 7
	if [ -n "$(nv_get "$t" c timedout)" ]; then
		nv_set "$t" c "$c" "not run"
		return 1
	fi
	# The column under the header perftest prints above its figures.
	case "$prog" in
	*_bw)	col=4 hdr="BW average[MB/sec]" ;;
	*)	col=5 hdr="t_typical[usec]" ;;
	esac
	PT_PORT=$((PT_PORT + 1))
	p="-d $dev -F -s $size -n $iters -p $PT_PORT $*"
	# shellcheck disable=SC2086
	if ! mrc_pair tcp:$PT_PORT $prog $p -- $prog $p $addr; then
		if [ "$t" = perftest_rxe ] && [ "$*" = --odp ] &&
		   grep -q -F "$PT_NO_ODP" "$MRC_SRV_OUT" "$MRC_CLI_OUT"; then
			nv_set "$t" c "$c" refused
			echo "bench: perftest $dev $prog -s $size --odp: refused, \"$PT_NO_ODP\" (no ODP in 6.1's rxe)"
			return 1
		fi
		[ "$MRC_SRV_RC" = 124 ] || [ "$MRC_CLI_RC" = 124 ] &&
			nv_set "$t" c timedout 1
		nv_why "$t" "$prog -s $size${*:+ $*}: $(mrc_pair_why)"
		echo "bench: perftest $dev $prog -s $size${*:+ $*} failed: $(mrc_pair_why)"
		tail -5 "$MRC_SRV_OUT" | sed 's/^/bench:   server: /'
		tail -5 "$MRC_CLI_OUT" | sed 's/^/bench:   client: /'
		return 1
	fi
	v=$(awk -v s="$size" -v n="$iters" -v c=$col -v h="$hdr" '
		index($0, h) {seen = 1}
		seen && $1 == s && $2 == n && $c ~ /^[0-9.]+$/ {print $c; exit}' "$MRC_CLI_OUT")
	if [ -z "$v" ]; then
		nv_why "$t" "$prog -s $size${*:+ $*}: no result line"
		echo "bench: perftest $dev $prog -s $size${*:+ $*}: no result line; the client's last:"
		tail -5 "$MRC_CLI_OUT" | sed 's/^/bench:   client: /'
		return 1
	fi
	nv_set "$t" c "$c" "$v"
	echo "bench: perftest $dev $prog -s $size -n $iters${*:+ $*}: $v $([ $col = 4 ] && echo MiB/s || echo us)"
}

# pt_num VALUE: VALUE when it is a figure, else n/a.
pt_num() {
	case "$1" in
	"" | *[!0-9.]*) echo n/a ;;
	*) echo "$1" ;;
	esac
}

# pt_row LABEL CASE KIND: a table row, rxe, vhca, vhca/rxe and, for KIND
# bw or lat, the target and whether these figures meet it.
pt_row() {
	local r v q goal=- got=-

	r=$(nv_get perftest_rxe c "$2")
	v=$(nv_get perftest_vhca c "$2")
	q=$(nv_ratio "$(pt_num "$v")" "$(pt_num "$r")")
	case "$3:$q" in
	*:n/a)	;;
	bw:*)	goal=">= 10x"
		got=$(awk -v q="$q" 'BEGIN {print (q >= 10) ? "met" : "not met"}') ;;
	lat:*)	goal="<= 0.20x"
		got=$(awk -v q="$q" 'BEGIN {print (q <= 0.2) ? "met" : "not met"}') ;;
	esac
	printf '| %-32s | %10s | %10s | %8s | %-8s | %-8s |\n' "$1" "${r:-n/a}" \
		"${v:-n/a}" "$q" "$goal" "$got"
}

# pt_side TYPE DEV ADDR: every run of the part on DEV.
pt_side() {
	local k s n

	for s in 65536 1048576; do
		case $s in
		65536)	k=64k n=$PT_ITERS_64K ;;
		*)	k=1m n=$PT_ITERS_1M ;;
		esac
		pt_run "$@" wbw_$k $s $n ib_write_bw
		pt_run "$@" rbw_$k $s $n ib_read_bw
	done
	pt_run "$@" slat 8 $PT_ITERS_LAT ib_send_lat
	pt_run "$@" wlat 8 $PT_ITERS_LAT ib_write_lat
	pt_run "$@" rlat 8 $PT_ITERS_LAT ib_read_lat
	pt_run "$@" owbw_64k 65536 $PT_ITERS_64K ib_write_bw --odp
	pt_run "$@" owbw_1m 1048576 $PT_ITERS_1M ib_write_bw --odp
}

# pt_verdict TYPE DEV: one line, whether all of TYPE's figures were
# measured (rxe's refused ODP counts as measured: 6.1's rxe has none).
pt_verdict() {
	local c why

	why=$(eval "echo \${nv_why_perftest_$1:-}")
	for c in wbw_64k rbw_64k wbw_1m rbw_1m slat wlat rlat owbw_64k owbw_1m; do
		case "$(nv_get "perftest_$1" c $c)" in
		"" | "not run") why=${why:-"$c: not run (an earlier run timed out)"} ;;
		esac
	done
	if [ -z "$why" ]; then
		t_ok "bench: perftest over $2 figures measured"
	else
		t_fail "bench: perftest over $2 figures measured" "$why"
	fi
}

# pt_dev TYPE DEV NETDEV ADDR: DEV of TYPE on a dummy NETDEV with ADDR,
# and every run of the part on it.
pt_dev() {
	local out

	if ! out=$(run_for $((PROGRESS_TMO + 30)) rdma_link_up "$1" "$2" "$3" "$4"); then
		nv_why "perftest_$1" "rdma link add $2: $(echo "$out" | tail -1)"
		return 1
	fi
	[ "$1" = vhca ] && vhca_baseline "$2"
	pt_side "$1" "$2" "$4"
}

perftest_part() {
	local t0 odp out k

	t0=$(date +%s)
	modprobe crc32_generic 2>/dev/null
	if ! modprobe rdma_rxe || ! load_mrcore; then
		t_fail "bench: perftest: modules load" "rdma_rxe, mrcore or vhca"
		return 1
	fi
	if ! out=$(mrc_root_up 2>&1); then
		t_fail "bench: perftest: the host's root in a chroot" "$(echo "$out" | tail -1)"
		return 1
	fi
	pt_dev rxe rxe0 pbr0 10.94.0.1
	pt_dev vhca vhca0 pbv0 10.95.0.1

	echo "bench: perftest (Debian's, from the host's root in a chroot), server and client on one device, loopback"
	echo "bench: bandwidth: BW average, MiB/s, -n $PT_ITERS_64K at 64 KiB, -n $PT_ITERS_1M at 1 MiB;" \
	     "latency: t_typical (median), us, 8 bytes, -n $PT_ITERS_LAT"
	echo "bench: ratio = vhca / rxe; targets of issue 18 read out, not checked"
	echo "| test                             |        rxe |       vhca | vhca/rxe | target   | read-out |"
	echo "|----------------------------------|-----------:|-----------:|---------:|----------|----------|"
	pt_row "ib_write_bw 64 KiB (MiB/s)" wbw_64k bw
	pt_row "ib_write_bw 1 MiB (MiB/s)" wbw_1m bw
	pt_row "ib_read_bw 64 KiB (MiB/s)" rbw_64k bw
	pt_row "ib_read_bw 1 MiB (MiB/s)" rbw_1m bw
	pt_row "ib_send_lat 8 B (us)" slat lat
	pt_row "ib_write_lat 8 B (us)" wlat lat
	pt_row "ib_read_lat 8 B (us)" rlat lat
	pt_row "ib_write_bw --odp 64 KiB (MiB/s)" owbw_64k -
	pt_row "ib_write_bw --odp 1 MiB (MiB/s)" owbw_1m -
	for k in 64k 1m; do
		odp=$(nv_ratio "$(pt_num "$(nv_get perftest_vhca c owbw_$k)")" \
			"$(pt_num "$(nv_get perftest_vhca c wbw_$k)")")
		echo "bench: perftest vhca0 ib_write_bw $k, ODP / pinned: $odp"
	done
	pt_verdict rxe rxe0
	pt_verdict vhca vhca0

	t_eval "bench: perftest: vhca0 idle after the programs exited" \
		"wait_for $PROGRESS_TMO vhca_idle vhca0 || vhca_idle vhca0"
	t_eval "bench: perftest: rxe0 and vhca0 removed, modules unloaded" \
		"rdma_link_down rxe0 pbr0 && rdma_link_down vhca0 pbv0 && unload_mrcore"
	mrc_root_down
	echo "bench: perftest part took $(($(date +%s) - t0)) s"
}

bench_part perftest && perftest_part

# --- User-space registration: ureg_bench ------------------------------------

# Options of ureg_bench, e.g. "-s 0.1" for a tenth of the rounds.
UREG_BENCH_ARGS=${UREG_BENCH_ARGS:-}

# ureg_fig DEV WHAT SIZE: a figure of ureg_bench's output for DEV ("n/a"
# when it has none, "refused" when DEV refused it).
ureg_fig() {
	awk -v w="$2" -v s="$3" '$3 == w && $4 == s {print $5; f = 1}
				 END {if (!f) print "n/a"}' "/tmp/ureg_$1"
}

# ureg_row LABEL WHAT SIZE: one table row, rxe0 beside vhca0.
ureg_row() {
	local r v ratio read=-
	r=$(ureg_fig rxe0 "$2" "$3")
	v=$(ureg_fig vhca0 "$2" "$3")
	ratio=n/a
	case "$r:$v" in
	*n/a* | *refused*) ;;
	*) ratio=$(nv_ratio "$v" "$r")
	   read=$(awk -v a="$v" -v b="$r" 'BEGIN {print (a <= b) ? "met" : "not met"}') ;;
	esac
	[ "$2" = reg+dereg ] || read=-
	printf "| %-32s | %10s | %10s | %8s | %-8s |\n" "$1" "$r" "$v" "$ratio" "$read"
}

ureg_part() {
	local t0 out d
	t0=$(date +%s)
	modprobe crc32_generic 2>/dev/null
	if ! modprobe rdma_rxe || ! load_mrcore; then
		t_fail "bench: ureg: modules load" "rdma_rxe, mrcore or vhca"
		return 1
	fi
	if ! out=$(mrc_root_up 2>&1); then
		t_fail "bench: ureg: the host's root in a chroot" "$(echo "$out" | tail -1)"
		return 1
	fi
	for d in rxe:rxe0:urr0:10.96.0.1 vhca:vhca0:urv0:10.97.0.1; do
		set -- $(echo "$d" | tr : ' ')
		if ! out=$(run_for $((PROGRESS_TMO + 30)) rdma_link_up "$1" "$2" "$3" "$4"); then
			t_fail "bench: ureg: rdma link add $2" "$(echo "$out" | tail -1)"
			return 1
		fi
		[ "$1" = vhca ] && vhca_baseline "$2"
	done
	cp "$BENCH_DIR/ureg_bench" "$MRC_ROOT/tmp/ureg_bench"
	for d in rxe0 vhca0; do
		# UREG_BENCH_ARGS is split into words on purpose.
		# shellcheck disable=SC2086
		if run_for 1800 mrc_chroot /tmp/ureg_bench -d $d $UREG_BENCH_ARGS > /tmp/ureg_$d 2>&1; then
			t_ok "bench: ureg: ureg_bench on $d"
		else
			t_fail "bench: ureg: ureg_bench on $d" "$(tail -1 /tmp/ureg_$d)"
		fi
		sed 's/^/bench: /' /tmp/ureg_$d
	done

	echo "bench: user-space registration (ureg_bench, Debian's libibverbs with librxe, libvhca), mean us per operation"
	echo "bench: ratio = vhca / rxe (below 1: vhca faster); target of issue 19: vhca no slower at any size"
	echo "| operation                        |     rxe us |    vhca us | vhca/rxe | read-out |"
	echo "|----------------------------------|-----------:|-----------:|---------:|----------|"
	ureg_row "ibv_reg_mr+dereg 4 KiB" reg+dereg 4K
	ureg_row "ibv_reg_mr+dereg 2 MiB" reg+dereg 2M
	ureg_row "ibv_reg_mr+dereg 64 MiB" reg+dereg 64M
	ureg_row "ibv_reg_mr+dereg 1 GiB" reg+dereg 1G
	ureg_row "ODP reg+dereg 1 GiB" odp 1G
	ureg_row "64 MiB mmap+populate+reg" alloc-plain 64M
	ureg_row "64 MiB vhcav_alloc_mr" alloc-vhcav 64M

	t_eval "bench: ureg: vhca0 idle after the program exited" \
		"wait_for $PROGRESS_TMO vhca_idle vhca0 || vhca_idle vhca0"
	t_eval "bench: ureg: rxe0 and vhca0 removed, modules unloaded" \
		"rdma_link_down rxe0 urr0 && rdma_link_down vhca0 urv0 && unload_mrcore"
	mrc_root_down
	echo "bench: ureg part took $(($(date +%s) - t0)) s"
}

if bench_part ureg; then
	ureg_part
fi
